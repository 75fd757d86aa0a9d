"""Scenario files (YAML, shipped in the package) and the player that runs them on a World.

A scenario names its nodes, its applications (how each is launched and behaves), objects to
create first, and a timeline of steps (``at`` seconds after the start) that submit apps and
inject faults. Pod targets are resolved when the step runs, by application, role and
executor id, so files never depend on generated names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from importlib import resources
from typing import Any

import yaml

from kubectl_spark.knowledge import labels as spark_labels

from . import objects
from .client import SimApiError
from .sparkapp import AppConfig
from .world import World


class ScenarioError(Exception):
    """A scenario file that cannot be loaded or a step that cannot be carried out."""


@dataclass
class Step:
    at: float
    action: str
    args: dict[str, Any]


@dataclass
class Scenario:
    name: str
    title: str
    description: str
    duration: float
    nodes: list[dict[str, Any]]
    apps: dict[str, AppConfig]
    objects: list[dict[str, Any]]
    steps: list[Step]
    namespaces: list[str] = field(default_factory=list)


ACTIONS = {
    "scale",
    "submit",
    "shutdown",
    "partition",
    "heal",
    "out_of_service",
    "oom_kill",
    "exit",
    "evict",
    "preempt",
    "fail_image_pull",
    "delete",
    "driver_kill",
    "gc",
    "create",
}
# Steps that act on one pod (``value`` names it: app, role, exec, attempt).
POD_ACTIONS = {"oom_kill", "exit", "evict", "preempt", "fail_image_pull", "delete", "driver_kill"}
_APP_FIELDS = {f.name for f in fields(AppConfig)}
# Objects a scenario may create before it starts: (apiVersion, kind) → (plural, namespaced).
CREATABLE = {
    ("v1", "PersistentVolumeClaim"): ("persistentvolumeclaims", True),
    ("v1", "ConfigMap"): ("configmaps", True),
    ("v1", "Pod"): ("pods", True),
    ("policy/v1", "PodDisruptionBudget"): ("poddisruptionbudgets", True),
}


def available() -> list[str]:
    folder = resources.files("kubectl_spark.sim") / "scenarios"
    return sorted(
        p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml")
    )


def load(name: str) -> Scenario:
    folder = resources.files("kubectl_spark.sim") / "scenarios"
    path = folder / f"{name}.yaml"
    if not path.is_file():
        raise ScenarioError(
            f"unknown scenario {name!r}; available: {', '.join(['empty', *available()])}"
        )
    return parse(yaml.safe_load(path.read_text()), name)


def parse(doc: Any, name: str = "") -> Scenario:
    if not isinstance(doc, dict):
        raise ScenarioError(f"scenario {name!r} must be a mapping")
    apps: dict[str, AppConfig] = {}
    for raw in doc.get("apps") or []:
        unknown = set(raw) - _APP_FIELDS
        if unknown:
            raise ScenarioError(
                f"scenario {name!r}: app {raw.get('name')!r} has unknown fields {sorted(unknown)}"
            )
        app = AppConfig(**raw)
        apps[app.name] = app
    steps = []
    for given in doc.get("steps") or []:
        raw = dict(given)
        at = float(raw.pop("at", 0))
        actions = [k for k in raw if k in ACTIONS]
        if len(actions) != 1:
            raise ScenarioError(
                f"scenario {name!r}: step at {at} must have exactly one action of {sorted(ACTIONS)}"
            )
        action = actions[0]
        value = raw.pop(action)
        args = {"value": value, **raw}
        steps.append(Step(at, action, args))
    namespaces = sorted({a.namespace for a in apps.values()} | set(doc.get("namespaces") or []))
    return Scenario(
        name=str(doc.get("name", name)),
        title=str(doc.get("title", "")),
        description=str(doc.get("description", "")),
        duration=float(doc.get("duration", 600)),
        nodes=list(doc.get("nodes") or []),
        apps=apps,
        objects=list(doc.get("objects") or []),
        steps=sorted(steps, key=lambda s: s.at),
        namespaces=namespaces,
    )


class Player:
    def __init__(self, world: World, scenario: Scenario) -> None:
        self.world = world
        self.scenario = scenario
        self.next_step = 0
        self.set_up = False

    def setup(self) -> None:
        world = self.world
        for ns in self.scenario.namespaces:
            if ns != "default":
                world.ensure_namespace(ns)
        for node in self.scenario.nodes:
            world.add_node(
                node["name"],
                cpu=float(node.get("cpu", 8)),
                memory=str(node.get("memory", "32Gi")),
                labels=node.get("labels"),
            )
        for obj in self.scenario.objects:
            self._create(obj)
        self.world.started = world.clock.now()
        self.set_up = True

    def _create(self, obj: dict[str, Any]) -> None:
        kind = (str(obj.get("apiVersion")), str(obj.get("kind")))
        if kind not in CREATABLE:
            raise ScenarioError(
                f"cannot create {kind[0]}/{kind[1]}: scenario objects may be {sorted(k for _, k in CREATABLE)}"
            )
        plural, namespaced = CREATABLE[kind]
        base = "/api/v1" if kind[0] == "v1" else f"/apis/{kind[0]}"
        ns = (obj.get("metadata") or {}).get("namespace", "default")
        path = f"{base}/namespaces/{ns}/{plural}" if namespaced else f"{base}/{plural}"
        created = self.world.client.create(path, obj)
        if plural == "persistentvolumeclaims":  # bound at once, as a dynamic provisioner would
            name = created["metadata"]["name"]
            self.world.client.patch(
                f"{path}/{name}", {"spec": {"volumeName": f"pvc-{created['metadata']['uid']}"}}
            )
            self.world.client.patch(
                f"{path}/{name}/status",
                {"status": {"phase": "Bound", "accessModes": created["spec"].get("accessModes")}},
            )

    def run_due(self, on_error: Callable[[ScenarioError], object] | None = None) -> None:
        """Apply the steps that are due.

        With ``on_error``, report a failed step and go on (a live demo keeps playing) instead of
        raising (a test stops).
        """
        elapsed = self.world.elapsed()
        steps = self.scenario.steps
        while self.next_step < len(steps) and steps[self.next_step].at <= elapsed + 1e-9:
            step = steps[self.next_step]
            self.next_step += 1
            try:
                self.apply(step)
            except ScenarioError as exc:
                if on_error is None:
                    raise
                on_error(exc)

    def play_until(self, t: float) -> None:
        """Play (on a manual clock) until ``t`` seconds after the start."""
        if not self.set_up:
            self.setup()
            self.run_due()
        # The clock counts whole microseconds: a smaller remainder would never be stepped.
        while self.world.elapsed() < t - 1e-6:
            self.world.step(min(1.0, t - self.world.elapsed()), before_tick=self.run_due)

    def play(self) -> None:
        self.play_until(self.scenario.duration)

    # ------------------------------------------------------------------------------ steps
    def target(self, spec: Any) -> dict[str, Any]:
        """Resolve {app, role, exec, attempt} to the pod it names right now."""
        if isinstance(spec, str):
            spec = {"app": spec, "role": "driver"}
        app = self.scenario.apps.get(spec.get("app", ""))
        if app is None:
            raise ScenarioError(f"step names unknown app {spec.get('app')!r}")
        role = spec.get("role", "executor" if "exec" in spec else "driver")
        found = self.world.find_pods(app.namespace, spark_app_name=app.name, spark_role=role)
        found = [
            p for p in found if not objects.deleting(p) and not objects.is_terminal(p)
        ] or found
        if role == "executor":
            drivers = self.world.find_pods(
                app.namespace, spark_app_name=app.name, spark_role="driver"
            )
            live = [d for d in drivers if not objects.deleting(d)] or drivers
            if live:
                chosen = live[int(spec["attempt"]) - 1 if "attempt" in spec else -1]
                owner = chosen["metadata"]["uid"]
                app_id = objects.labels(chosen).get(spark_labels.APP_ID)
                found = [
                    p
                    for p in found
                    if any(
                        r.get("uid") == owner for r in p["metadata"].get("ownerReferences") or []
                    )
                ] or [  # a StatefulSet's or Deployment's executors: the driver's by app id
                    p for p in found if objects.labels(p).get(spark_labels.APP_ID) == app_id
                ]
            if "exec" in spec:
                found = [
                    p
                    for p in found
                    if objects.labels(p).get(spark_labels.EXEC_ID) == str(spec["exec"])
                ]
        if not found:
            raise ScenarioError(f"no pod matches {spec}")
        return found[-1] if role == "driver" else found[0]

    def apply(self, step: Step) -> None:
        try:
            if step.action in POD_ACTIONS:
                self._on_pod(step)
            else:
                self._on_world(step)
        except (LookupError, KeyError, SimApiError) as exc:
            raise ScenarioError(
                f"scenario {self.scenario.name}: step {step.action} at {step.at}s failed: {exc}"
            ) from exc

    def _on_world(self, step: Step) -> None:
        world = self.world
        value = step.args["value"]
        if step.action == "submit":
            world.submit(self.scenario.apps[value])
        elif step.action == "shutdown":
            world.shutdown_node(value)
        elif step.action == "partition":
            world.partition_node(value)
        elif step.action == "heal":
            world.heal_node(value)
        elif step.action == "out_of_service":
            world.out_of_service(value)
        elif step.action == "scale":
            app = self.scenario.apps[value["app"]]
            world.scale_executors(app.namespace, app.name, int(value["executors"]))
        elif step.action == "gc":
            world.set_gc(enabled=bool(value))
        elif step.action == "create":
            self._create(value)

    def _on_pod(self, step: Step) -> None:
        world = self.world
        item = self.target(step.args["value"])
        ns, name = item["metadata"]["namespace"], item["metadata"]["name"]
        if step.action == "oom_kill":
            world.oom_kill(ns, name)
        elif step.action == "exit":
            world.exit_container(
                ns,
                name,
                int(step.args.get("code", 1)),
                exception=str(step.args.get("exception", "")),
            )
        elif step.action == "evict":
            world.evict(ns, name)
        elif step.action == "preempt":
            world.preempt_pod(ns, name)
        elif step.action == "fail_image_pull":
            world.fail_image_pull(ns, name)
        elif step.action == "delete":
            world.delete_pod(ns, name, grace=step.args.get("grace"))
        elif step.action == "driver_kill":
            world.spark.kill_executor(item, silent_ms=int(step.args.get("silent_ms", 0)))
