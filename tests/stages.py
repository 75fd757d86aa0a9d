"""A scenario staged on either backend, driven by conditions rather than by its timeline.

On the emulator the simulator plays every component on a manual clock, stepped a second at a
time; on the real control plane it plays only the kubelets and Spark, at real time, and the
real controllers (node lifecycle, taint eviction, Jobs, the scheduler, garbage collection) do
the rest with the test bed's short timers. A test says what to do and what to wait for
(:meth:`Stage.until`), so one body runs on both and must reach the same verdicts.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from kubectl_spark.cli.main import main
from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer, EmulatorOptions
from kubectl_spark.knowledge.clock import ManualClock
from kubectl_spark.sim import scenario as scenarios
from kubectl_spark.sim.world import World
from tests.beds import Bed, RealBed

# Real seconds a condition may take on the real control plane: a node loss there is the
# node-monitor grace (6 s) and the toleration (4 s) plus the controllers' periods.
REAL_TIMEOUT = 60.0
# Simulated seconds on the emulator: the simulator's 40 s grace and 300 s tolerations.
EMULATED_LIMIT = 900.0
# The taints the node lifecycle controller keeps on a node until its kubelet reports Ready.
NOT_READY = {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}


class Stage:
    def __init__(self, bed: Bed, name: str | scenarios.Scenario, tmp: Path) -> None:
        self.kind = bed.kind
        self.scenario = scenarios.load(name) if isinstance(name, str) else name
        self.server: EmbeddedApiServer | None = None
        if isinstance(bed, RealBed):
            self.world = bed.world()
            self.kubeconfig = bed.write_kubeconfig(tmp / "kubeconfig")
        else:
            self.clock = ManualClock(
                datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=EMULATED_LIMIT)
            )
            self.server = EmbeddedApiServer(EmulatorOptions(clock=self.clock)).start()
            self.world = World.for_server(self.server, self.clock)
            self.kubeconfig = self.server.write_kubeconfig(tmp / "kubeconfig")
        self.player = scenarios.Player(self.world, self.scenario)
        self.player.setup()
        if self.kind == "real":
            # A node the node lifecycle controller has not yet seen Ready may be tainted
            # not-ready; a scenario submitted then would place its pods where its timeline
            # never meant them (all on the nodes cleared first).
            self.until("the scenario's nodes Ready and schedulable", self._nodes_schedulable)

    def close(self) -> None:
        if self.server is not None:
            self.world.close()
            self.server.stop()

    # ----------------------------------------------------------------------------- steps
    def do(self, action: str, value: Any, **args: Any) -> None:
        """Carry out one scenario step now (its ``at`` is ignored)."""
        self.player.apply(scenarios.Step(0, action, {"value": value, **args}))

    def until(self, what: str, predicate: Callable[[], bool]) -> None:
        """Run the world until ``predicate`` holds; fail saying ``what`` did not happen."""
        if self.kind == "real":
            deadline = time.monotonic() + REAL_TIMEOUT
            while not predicate():
                if time.monotonic() > deadline:
                    pytest.fail(
                        f"on the real control plane, {what} did not happen in time\n{self.state()}"
                    )
                self.world.tick()
                time.sleep(0.2)
            return
        for _ in range(int(EMULATED_LIMIT)):
            if predicate():
                return
            self.world.step(1.0)
        pytest.fail(
            f"on the emulator, {what} did not happen in {EMULATED_LIMIT:.0f} s\n{self.state()}"
        )

    def _nodes_schedulable(self) -> bool:
        wanted = {node["name"] for node in self.scenario.nodes}
        ready = {
            n["metadata"]["name"]
            for n in self.world.client.list("/api/v1/nodes")
            if not any(t["key"] in NOT_READY for t in n["spec"].get("taints") or [])
            and any(
                c["type"] == "Ready" and c["status"] == "True"
                for c in n["status"].get("conditions") or []
            )
        }
        return wanted <= ready

    def state(self) -> str:
        """Pods and nodes as they are: what a failed wait shows."""
        lines = []
        for p in self.world.client.list("/api/v1/pods"):
            meta, status = p["metadata"], p.get("status") or {}
            lines.append(
                f"pod {meta['namespace']}/{meta['name']} on {p['spec'].get('nodeName')} "
                f"{status.get('phase')}{' deleting' if meta.get('deletionTimestamp') else ''} "
                f"{[c.get('message') for c in status.get('conditions') or [] if c.get('status') == 'False']}"
            )
        for n in self.world.client.list("/api/v1/nodes"):
            ready = next(
                (c["status"] for c in n["status"].get("conditions") or [] if c["type"] == "Ready"),
                None,
            )
            taints = [t["key"] for t in n["spec"].get("taints") or []]
            lines.append(f"node {n['metadata']['name']} Ready={ready} taints={taints}")
        return "\n".join(lines)

    def settle(self, seconds: float) -> None:
        """Let the world run on a while (a partition's zombie, say) with nothing awaited."""
        if self.kind == "real":
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                self.world.tick()
                time.sleep(0.2)
        else:
            self.world.step(seconds)

    # --------------------------------------------------------------------------- reading
    def pods(self, **labels: str) -> list[dict[str, Any]]:
        ns = next(iter(self.scenario.apps.values())).namespace
        return self.world.find_pods(ns, **labels)

    def running(self, **labels: str) -> list[dict[str, Any]]:
        return [
            p
            for p in self.pods(**labels)
            if (p.get("status") or {}).get("phase") == "Running"
            and not p["metadata"].get("deletionTimestamp")
        ]

    def executor_gone(self, app: str, exec_id: str) -> bool:
        """No pod of the application's executor ``exec_id`` is left (Spark deleted it)."""
        return not any(
            p["metadata"]["labels"].get("spark-exec-id") == exec_id
            for p in self.pods(spark_role="executor", spark_app_name=app)
        )

    def cli(self, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
        code = main(["--kubeconfig", str(self.kubeconfig), *args])
        out, err = capsys.readouterr()
        return code, out, err

    def app(self, capsys: pytest.CaptureFixture[str], name: str) -> dict[str, Any]:
        code, out, err = self.cli(capsys, "ls", "-A", "-o", "json")
        assert code == 0, err
        return next(a for a in json.loads(out)["items"] if a["name"] == name)


def alerts(app: dict[str, Any]) -> dict[str, list[int]]:
    return {a["type"]: a["attempts"] for a in app["alerts"]}
