"""The simulated cluster: components on one clock, and the fault-injection API.

``World.tick()`` runs each component once, in the order a real control loop would settle in;
``World.step(seconds)`` advances a manual clock second by second and ticks. Faults (node
shutdown/partition/heal, container exits and OOM kills, evictions, preemptions, image pull
failures, the out-of-service taint) are methods here, used by tests and scenario files alike.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from kubectl_spark.knowledge import labels as spark_labels
from kubectl_spark.knowledge.clock import Clock, ManualClock
from kubectl_spark.knowledge.times import rfc3339

from . import objects
from .apache_operator import ApacheOperator
from .attach import AttachDetach
from .client import Client, SimApiError, pod, pods, request_token
from .deployments import DeploymentControllers
from .endpoints import EndpointsController
from .eventrecorder import EventRecorder
from .jobs import JobController
from .kubelet import Kubelet
from .leases import LeaseKeeper
from .nodelifecycle import OUT_OF_SERVICE, NodeLifecycle
from .operator import SparkOperator
from .processes import LEASE_RENEW_SECONDS, NodeState
from .scheduler import Scheduler
from .sides import ClusterSide, EmulatorSide, RealControlPlaneSide
from .spark import SparkDrivers
from .sparkapp import AppConfig

EVICTION_MESSAGE = (
    "The node was low on resource: memory. Threshold quantity: 100Mi, available: 92Mi. "
    "Container {container} was using 4612412Ki, request is 4Gi, has larger consumption of memory. "
)


class World:
    def __init__(self, client: Client, clock: Clock, side: ClusterSide | None = None) -> None:
        self.client = client
        self.clock = clock
        self.side: ClusterSide = side or EmulatorSide(client)
        self.events = EventRecorder(client, clock)
        self.nodes: dict[str, NodeState] = {}
        self.kubelets: dict[str, Kubelet] = {}
        self.scheduler = Scheduler(self)
        self.lifecycle = NodeLifecycle(self)
        self.attach = AttachDetach(self)
        self.jobs = JobController(self)
        self.spark = SparkDrivers(self)
        self.operator = SparkOperator(self, self.spark)
        self.apache = ApacheOperator(self, self.spark)
        self.deployments = DeploymentControllers(self)
        self.endpoints = EndpointsController(self)
        self.lock = threading.RLock()
        self.started = clock.now()
        # How a process in a pod becomes reachable through pods/<name>:<port>/proxy: only an
        # emulator in this process can be given one (World.for_server).
        self.register_proxy: Callable[..., None] | None = None
        # Whether Spark's drivers act with their own identity, a service-account token bound
        # to the driver pod (what the kubelet mounts), instead of the simulator's admin token:
        # only then can a fence's admission policy tell the zombie driver from the live one.
        self.driver_identity = False
        self._driver_clients: dict[str, Client] = {}

    @classmethod
    def for_server(cls, server: Any, clock: Clock) -> World:
        """Attach to an :class:`EmbeddedApiServer` (its URL, CA and admin token)."""
        world = cls(Client(server.url, server.token, server.ca_pem), clock)
        world.register_proxy = getattr(server, "register_proxy", None)
        return world

    def serve(
        self, item: dict[str, Any], port: int, answer: Callable[[str], tuple[int, str, bytes]]
    ) -> None:
        """Let the pod's process answer HTTP on ``port`` (while it runs and its node is up)."""
        if self.register_proxy is None:
            return
        meta = item["metadata"]

        def reachable_answer(path: str) -> tuple[int, str, bytes] | None:
            return answer(path) if self.process_alive(item) else None

        self.register_proxy(meta["namespace"], meta["name"], port, reachable_answer)

    @classmethod
    def for_control_plane(cls, url: str, token: str, ca_pem: bytes, clock: Clock) -> World:
        """Play the kubelets and Spark on a real control plane (its controllers do the rest)."""
        renew_every = RealControlPlaneSide.lease_renew_seconds or LEASE_RENEW_SECONDS
        leases = LeaseKeeper(Client(url, token, ca_pem), clock, renew_every)
        world = cls(Client(url, token, ca_pem), clock, RealControlPlaneSide(clock, leases))
        world.side.keep_leases(world.nodes_up)
        return world

    def close(self) -> None:
        self.side.close()
        self.client.close()
        for client in self._driver_clients.values():
            client.close()

    def driver_client(self, driver: dict[str, Any]) -> Client:
        """A client that is the driver pod: its service account's token, bound to the pod.

        Asked once per pod (TokenRequest), as the kubelet mounts it when the pod starts; it
        authenticates while the pod exists and for a minute after its deletion time.
        """
        meta = driver["metadata"]
        found = self._driver_clients.get(meta["uid"])
        if found is None:
            account = (driver.get("spec") or {}).get("serviceAccountName") or "default"
            token = request_token(
                self.client, meta["namespace"], account, meta["name"], meta["uid"]
            )
            found = self._driver_clients[meta["uid"]] = Client(
                self.client.url, token, self.client.ca_pem
            )
        return found

    def acting_as(self, driver: dict[str, Any]) -> Client:
        """The client Spark's driver writes with: its own when ``driver_identity`` is on."""
        return self.driver_client(driver) if self.driver_identity else self.client

    # --------------------------------------------------------------------------- running
    def now_text(self) -> str:
        return rfc3339(self.clock.now())

    def elapsed(self) -> float:
        return (self.clock.now() - self.started).total_seconds()

    def tick(self) -> None:
        stand_ins = not self.side.real_controllers
        with self.lock, self.client.tick_cache(across_ticks=stand_ins):
            if stand_ins:
                self.lifecycle.tick()
                self.scheduler.tick()
            self.attach.tick()
            for kubelet in self.kubelets.values():
                kubelet.tick()
            if stand_ins:
                self.jobs.tick()
                self.deployments.tick()
                self.endpoints.tick()
            self.operator.tick()
            self.apache.tick()
            self.spark.tick()

    def step(
        self, seconds: float, *, dt: float = 1.0, before_tick: Callable[[], None] | None = None
    ) -> None:
        """Advance a manual clock by ``seconds`` in ``dt`` steps, ticking after each."""
        if not isinstance(self.clock, ManualClock):
            raise TypeError("step() needs a ManualClock; a real-time clock ticks by itself")
        remaining = seconds
        while remaining > 1e-9:
            delta = min(dt, remaining)
            self.clock.advance(delta)
            remaining -= delta
            if before_tick is not None:
                before_tick()
            self.tick()

    # ----------------------------------------------------------------------------- nodes
    def add_node(
        self,
        name: str,
        *,
        cpu: float = 8,
        memory: str = "32Gi",
        labels: dict[str, str] | None = None,
        address: str = "",
    ) -> None:
        """A node and its kubelet.

        ``address``: its InternalIP (on the emulator; the real bed's kubelet API sets its own),
        which its host network pods share: a recorder pod reached through a Service.
        """
        state = NodeState(
            name, cpu=cpu, memory=objects.quantity(memory), labels=labels or {}, address=address
        )
        self.nodes[name] = state
        self.kubelets[name] = Kubelet(self, state)
        self.kubelets[name].register()

    def nodes_up(self) -> list[str]:
        """The registered nodes whose kubelet runs and reaches the API server.

        Their Leases are the ones renewed; read from the lease keeper's thread, hence over a copy.
        """
        return [n for n, s in list(self.nodes.items()) if s.status == "up" and s.last_lease]

    def shutdown_node(self, name: str) -> None:
        """Power off: the kubelet and every process on the node stop."""
        self.nodes[name].status = "down"
        self.nodes[name].processes.clear()
        self._unreachable()

    def partition_node(self, name: str) -> None:
        """Cut the node from the API server: its pods keep running (and writing logs)."""
        self.nodes[name].status = "partitioned"
        self._unreachable()

    def heal_node(self, name: str) -> None:
        state = self.nodes[name]
        if state.status == "down":
            state.rebooted = True
        state.status = "up"
        state.last_lease = None
        self._unreachable()

    def out_of_service(self, name: str) -> None:
        """The non-graceful node shutdown taint, applied after confirming power-off."""
        node = self.client.get(f"/api/v1/nodes/{name}")
        assert node is not None
        taints = [t for t in node["spec"].get("taints") or [] if t.get("key") != OUT_OF_SERVICE]
        taints.append(
            {
                "key": OUT_OF_SERVICE,
                "value": "nodeshutdown",
                "effect": "NoExecute",
                "timeAdded": self.now_text(),
            }
        )
        self.client.patch(f"/api/v1/nodes/{name}", {"spec": {"taints": taints}})

    def _unreachable(self) -> None:
        self.side.set_unreachable({n for n, s in self.nodes.items() if s.status != "up"})

    # ----------------------------------------------------------------- what pods can do
    def _node_of(self, item: dict[str, Any]) -> NodeState | None:
        return self.nodes.get(item["spec"].get("nodeName") or "")

    def process_alive(self, item: dict[str, Any]) -> bool:
        node = self._node_of(item)
        proc = node.processes.get(item["metadata"]["uid"]) if node else None
        return proc is not None and proc.alive

    def reaches_api(self, item: dict[str, Any]) -> bool:
        node = self._node_of(item)
        return node is not None and node.status == "up"

    def volumes_ready(self, item: dict[str, Any], node: str) -> bool:
        return self.attach.ready(item, node)

    def on_started(self, item: dict[str, Any], node: str) -> None:
        if objects.labels(item).get(spark_labels.ROLE) == "executor":
            self.log(
                item,
                f"INFO CoarseGrainedExecutorBackend: Started executor {objects.labels(item).get('spark-exec-id', '?')} on {node}",
            )
        if objects.labels(item).get(spark_labels.ROLE) == "driver":
            app = self.spark.apps.get(objects.labels(item).get(spark_labels.APP_ID, ""))
            if app is not None and app.driver_exit_after is not None:
                self.kubelets[node].plan_exit(
                    item["metadata"]["uid"],
                    app.driver_exit_code,
                    "Completed" if app.driver_exit_code == 0 else "Error",
                    after=app.driver_exit_after,
                )

    def on_finished(self, item: dict[str, Any], phase: str) -> None:
        if objects.labels(item).get(spark_labels.ROLE) == "driver":
            self.spark.on_driver_finished(item, phase)

    def log(self, item: dict[str, Any], line: str) -> None:
        stamp = self.clock.now().strftime("%y/%m/%d %H:%M:%S")
        self.side.append_log(item, item["spec"]["containers"][0]["name"], f"{stamp} {line}")

    def rotate_log(self, item: dict[str, Any], container: str) -> None:
        """A container restarted: its log becomes ``previous``, and a Spark JVM starts again."""
        self.side.rotate_log(item, container)
        role = objects.labels(item).get(spark_labels.ROLE)
        if role == "driver":
            self.log(
                item, "INFO SparkContext: Running Spark version 3.5.1 (the container restarted)"
            )
        elif role == "executor":
            self.log(
                item,
                "INFO CoarseGrainedExecutorBackend: Started executor (the container restarted)",
            )

    # ------------------------------------------------------------------------------ apps
    def submit(self, app: AppConfig) -> dict[str, Any]:
        with self.lock:
            if app.launch == "operator":
                self.operator.templates[(app.namespace, app.name)] = app
            if app.launch == "apache":
                self.apache.templates[(app.namespace, app.name)] = app
            return self.spark.submit(app)

    def scale_executors(self, namespace: str, app_name: str, executors: int) -> None:
        """Change an application's executor target, as dynamic allocation would."""
        for app in self.spark.apps.values():
            if app.name == app_name and app.namespace == namespace:
                app.executors = executors

    def ensure_namespace(self, name: str) -> None:
        try:
            self.client.create("/api/v1/namespaces", {"metadata": {"name": name}})
        except SimApiError as err:
            if err.status != 409:
                raise

    # ----------------------------------------------------------------------------- faults
    def _running(self, namespace: str, name: str) -> tuple[dict[str, Any], Kubelet]:
        item = self.client.get(pod(namespace, name))
        if item is None:
            raise LookupError(f"pod {namespace}/{name} not found")
        node = item["spec"].get("nodeName")
        if not node or node not in self.kubelets:
            raise LookupError(f"pod {namespace}/{name} is not on a simulated node")
        return item, self.kubelets[node]

    def exit_container(
        self,
        namespace: str,
        name: str,
        code: int,
        *,
        reason: str = "",
        container: str | None = None,
        exception: str = "",
    ) -> None:
        """The container exits with ``code``; a driver first writes ``exception`` on its pod.

        As Spark 4.1+ does with spark.kubernetes.driver.annotateExitException
        (SparkKubernetesDiagnosticsSetter: the stringified exception, cut to 64 KiB).
        """
        item, kubelet = self._running(namespace, name)
        if exception:
            notes = {spark_labels.EXIT_EXCEPTION: exception[: 64 * 1024]}
            self.client.patch(pod(namespace, name), {"metadata": {"annotations": notes}})
        if not kubelet.plan_exit(
            item["metadata"]["uid"],
            code,
            reason or ("Completed" if code == 0 else "Error"),
            container,
        ):
            raise LookupError(f"pod {namespace}/{name} has no running container")

    def oom_kill(self, namespace: str, name: str, *, container: str | None = None) -> None:
        self.exit_container(namespace, name, 137, reason="OOMKilled", container=container)

    def evict(self, namespace: str, name: str, message: str | None = None) -> None:
        item, kubelet = self._running(namespace, name)
        text = message or EVICTION_MESSAGE.format(container=item["spec"]["containers"][0]["name"])
        if not kubelet.evict(item["metadata"]["uid"], text):
            raise LookupError(f"pod {namespace}/{name} is not running")

    def preempt(self, victim: dict[str, Any], preemptor: dict[str, Any] | None, node: str) -> None:
        meta = victim["metadata"]
        by = preemptor["metadata"]["uid"] if preemptor else "00000000-0000-0000-0000-000000000000"
        conditions = objects.with_disruption(
            victim,
            "PreemptionByScheduler",
            "default-scheduler: preempting to accommodate a higher priority pod",
            self.now_text(),
        )
        self.client.patch(
            pod(meta["namespace"], meta["name"]) + "/status", {"status": {"conditions": conditions}}
        )
        self.events.event(
            victim,
            "Preempted",
            f"Preempted by pod {by} on node {node}",
            component="default-scheduler",
        )
        self.client.delete(pod(meta["namespace"], meta["name"]), uid=meta["uid"])

    def preempt_pod(self, namespace: str, name: str) -> None:
        item, kubelet = self._running(namespace, name)
        self.preempt(item, None, kubelet.node.name)

    def fail_image_pull(self, namespace: str, name: str) -> None:
        for kubelet in self.kubelets.values():
            kubelet.pull_failures.add(f"{namespace}/{name}")

    def fail_config(self, namespace: str, name: str) -> None:
        for kubelet in self.kubelets.values():
            kubelet.config_failures.add(f"{namespace}/{name}")

    def delete_pod(self, namespace: str, name: str, *, grace: int | None = None) -> None:
        item = self.client.get(pod(namespace, name))
        if item is not None:
            self.client.delete(pod(namespace, name), grace=grace, uid=item["metadata"]["uid"])

    def set_gc(self, *, enabled: bool) -> None:
        self.side.set_gc(enabled=enabled)

    # ---------------------------------------------------------------------------- lookups
    def find_pods(self, namespace: str, **labels: str) -> list[dict[str, Any]]:
        selector = ",".join(f"{k.replace('_', '-')}={v}" for k, v in labels.items())
        return sorted(
            self.client.list(pods(namespace), labelSelector=selector),
            key=lambda p: (p["metadata"]["creationTimestamp"], p["metadata"]["name"]),
        )


def later(world: World, seconds: float) -> Any:
    return world.clock.now() + timedelta(seconds=seconds)
