"""A kubelet whose containers are processes on this machine: real Spark drivers and executors.

Beside the simulated kubelet (``sim/kubelet.py``, whose containers are planned exits on a
manual clock), this one runs what a pod asks for, in real time, for the nodes it plays on a
real control plane, and reports it through the API as the kubelet does
(pkg/kubelet/status/status_manager.go, kubelet_pods.go ``generateAPIPodStatus``):

- the node: its Node object, Ready heartbeats and its Lease in ``kube-node-lease``, its
  InternalIP (loopback) and the port of its kubelet API, which serves the containers' logs
  (:class:`~kubectl_spark.sim.kubeletapi.KubeletApi`: ``kubectl logs``, ``-p``, ``-f``);
- a pod bound to it: files and environment (:mod:`.podfiles`), an address (:mod:`.network`),
  each container started (:mod:`.runtime`); status Running with ``podIP``, then each exit as
  ``terminated`` with the process's real exit status (reason ``Completed``, ``Error`` or
  ``OOMKilled``), restarted by ``restartPolicy`` with ``lastState`` and a back-off;
- a deletion: SIGTERM, SIGKILL when ``deletionGracePeriodSeconds`` runs out, the final status,
  then the DELETE with grace 0 and the pod's UID as precondition that ends it;
- faults: :meth:`power_off` (every process of the node killed, nothing reported),
  :meth:`cut` (the node stops reaching the API server and the API server it, while its
  processes run on and keep their own API access: a zombie), :meth:`freeze` (SIGSTOP), and
  :meth:`heal`, after which pods deleted meanwhile are killed, never brought back.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from kubectl_spark.knowledge.clock import SystemClock
from kubectl_spark.knowledge.times import parse_time, rfc3339, rfc3339_micro
from kubectl_spark.sim import nodestatus, objects
from kubectl_spark.sim.client import Client, SimApiError, pod
from kubectl_spark.sim.kubeletapi import KubeletApi
from kubectl_spark.sim.recorder import Recorder

from .image import IMAGE_SPARK_HOME, ImageError, SparkImage
from .network import PodAddress, PodNetwork, hosts_file
from .podfiles import NotReady, PodFiles, memory_limit
from .runtime import ContainerProcess, Mount

SYNC_SECONDS = 0.25
LEASE_RENEW_SECONDS = 1.0
BACKOFF_SECONDS = (
    1.0  # CrashLoopBackOff's first delay (a kubelet's is 10 s; real time is dear here)
)
BACKOFF_MAX_SECONDS = 30.0
WORKDIR = f"{IMAGE_SPARK_HOME}/work-dir"


@dataclass
class ContainerRun:
    name: str
    image: str
    process: ContainerProcess | None = None
    started: datetime | None = None
    restarts: int = 0
    terminated: dict[str, Any] | None = None
    last_terminated: dict[str, Any] | None = None
    backoff_until: float = 0.0


@dataclass
class PodRun:
    uid: str
    namespace: str
    name: str
    node: str
    address: PodAddress
    folder: Path
    containers: dict[str, ContainerRun] = field(default_factory=dict)
    stop_asked: float | None = None  # monotonic time SIGTERM was sent
    reported: dict[str, Any] | None = None

    def alive(self) -> bool:
        return any(c.process is not None and c.terminated is None for c in self.containers.values())


@dataclass
class NodeRun:
    name: str
    port: int
    state: str = "up"  # up, cut, down, frozen
    last_lease: float = 0.0


class ProcessKubelet:
    """Plays ``add_node``'s nodes until :meth:`stop`; one thread, as a kubelet's sync loop."""

    def __init__(
        self,
        client: Client,
        image: SparkImage,
        network: PodNetwork,
        root: Path,
        *,
        logs: KubeletApi | None = None,
    ) -> None:
        self.client = client
        self.image = image
        self.network = network
        self.root = root
        self.clock = SystemClock()
        self.logs = logs or KubeletApi(self.clock)
        self.events = Recorder(client, self.clock)
        self.nodes: dict[str, NodeRun] = {}
        self.pods: dict[str, PodRun] = {}
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._services: list[dict[str, Any]] = []
        #: Each pod's last status this kubelet wrote, by uid, kept after the pod is gone: what
        #: Spark read of a pod it has since deleted (a test compares Spark's words with it).
        self.reported: dict[str, dict[str, Any]] = {}
        self._hostname = socket.gethostname()

    # ------------------------------------------------------------------------------ nodes
    def add_node(self, name: str) -> None:
        with self._lock:
            port = self.logs.open(name)
            self.nodes[name] = NodeRun(name, port)
            node = nodestatus.node_object(name)
            try:
                self.client.create("/api/v1/nodes", node)
            except SimApiError as err:
                if err.status != 409:
                    raise
            self._heartbeat(self.nodes[name], force=True)

    def _node_status(self, node: NodeRun) -> dict[str, Any]:
        return nodestatus.ready_status(
            node.name,
            rfc3339(self.clock.now()),
            {"cpu": "8", "memory": "32Gi", "pods": "110"},
            ("127.0.0.1", node.port),
            "kubectl-spark-os://1",
            "v1.33.0",
        )

    def _heartbeat(self, node: NodeRun, *, force: bool = False) -> None:
        if node.state != "up":
            return
        now = time.monotonic()
        if not force and now - node.last_lease < LEASE_RENEW_SECONDS:
            return
        current = self.client.get(f"/api/v1/nodes/{node.name}")
        ready = objects.condition(current, "Ready") if current else None
        if force or ready is None or ready.get("status") != "True":
            self.client.patch(
                f"/api/v1/nodes/{node.name}/status", {"status": self._node_status(node)}
            )
        path = f"{nodestatus.LEASES}/{node.name}"
        renewed = rfc3339_micro(self.clock.now())
        if self.client.get(path) is None:
            self.client.create(nodestatus.LEASES, nodestatus.lease(node.name, renewed))
        else:
            self.client.patch(path, {"spec": {"renewTime": renewed}})
        node.last_lease = now

    # ------------------------------------------------------------------------------ faults
    def power_off(self, name: str) -> None:
        """Every process of the node ends at once; the node says nothing more."""
        with self._lock:
            self.nodes[name].state = "down"
            self.logs.close(name)
            self._reach(name, reachable=False)
            for run in list(self.pods.values()):
                if run.node == name:
                    for c in run.containers.values():
                        if c.process is not None:
                            c.process.end()
                    del self.pods[run.uid]

    def cut(self, name: str) -> None:
        """The node and the API server no longer reach each other; its processes run on.

        They keep their own way to the API server (the zombie's), but the API server reaches
        neither the node's kubelet (logs) nor its pods (the pod proxy: Spark's UI).
        """
        with self._lock:
            self.nodes[name].state = "cut"
            self.logs.close(name)
            self._reach(name, reachable=False)

    def _reach(self, node: str, *, reachable: bool) -> None:
        for run in self.pods.values():
            if run.node == node:
                self.network.reachable(run.address.local, reachable=reachable)

    def freeze(self, name: str) -> None:
        """The node hangs: its processes are stopped (SIGSTOP) and it reports nothing."""
        with self._lock:
            self.nodes[name].state = "frozen"
            for run in self.pods.values():
                if run.node == name:
                    for c in run.containers.values():
                        if c.process is not None:
                            c.process.signal(signal.SIGSTOP, tree=True)

    def heal(self, name: str) -> None:
        with self._lock:
            node = self.nodes[name]
            if node.state == "frozen":
                for run in self.pods.values():
                    if run.node == name:
                        for c in run.containers.values():
                            if c.process is not None:
                                c.process.signal(signal.SIGCONT, tree=True)
            node.state = "up"
            self.logs.open(name)
            self._reach(name, reachable=True)
            self._heartbeat(node, force=True)

    def kill_container(self, namespace: str, name: str, container: str | None = None) -> None:
        """SIGKILL a container's processes, as `crictl stop -t 0` or an outside OOM kill would."""
        with self._lock:
            for run in self.pods.values():
                if (run.namespace, run.name) == (namespace, name):
                    for c in run.containers.values():
                        if (container in (None, c.name)) and c.process is not None:
                            c.process.end()

    def local_address(self, namespace: str, name: str) -> str | None:
        """The loopback address a running pod's processes listen on (for a test to ask Spark)."""
        with self._lock:
            for run in self.pods.values():
                if (run.namespace, run.name) == (namespace, name):
                    return run.address.local
        return None

    # ------------------------------------------------------------------------------- loop
    def start(self) -> ProcessKubelet:
        self._thread = threading.Thread(target=self._loop, daemon=True, name="os-kubelet")
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        with self._lock:
            for run in self.pods.values():
                for c in run.containers.values():
                    if c.process is not None:
                        c.process.end()
            self.pods.clear()
        self.logs.stop()

    def _loop(self) -> None:
        # The processes die with this thread (PR_SET_PDEATHSIG): they are started only here.
        try:
            while not self._stop.is_set():
                started = time.monotonic()
                with contextlib.suppress(SimApiError, OSError):
                    self.sync_once()
                self._stop.wait(max(0.0, SYNC_SECONDS - (time.monotonic() - started)))
        finally:
            with self._lock:
                for run in self.pods.values():
                    for c in run.containers.values():
                        if c.process is not None:
                            c.process.end()

    def sync_once(self) -> None:
        with self._lock:
            for node in self.nodes.values():
                self._heartbeat(node)
            for run in self.pods.values():
                for c in run.containers.values():
                    if c.process is not None:
                        c.process.over_limit()
            talking = {n.name for n in self.nodes.values() if n.state == "up"}
            if not talking:
                return
            items = self.client.list("/api/v1/pods")
            self._services = self.client.list("/api/v1/services")
            present = {i["metadata"]["uid"] for i in items}
            for uid, run in list(self.pods.items()):
                if run.node in talking and uid not in present:
                    self._forget(run)  # deleted in the API while away: killed, never brought back
            self._write_hosts(items)
            for item in items:
                if (item.get("spec") or {}).get("nodeName") in talking:
                    try:
                        self._sync(item)
                    except SimApiError as err:
                        if err.status not in (404, 409):
                            raise

    def _forget(self, run: PodRun) -> None:
        for c in run.containers.values():
            if c.process is not None:
                c.process.end()
        self.pods.pop(run.uid, None)
        shutil.rmtree(run.folder, ignore_errors=True)

    # ------------------------------------------------------------------------------ hosts
    def _write_hosts(self, items: list[dict[str, Any]]) -> None:
        """Each pod's /etc/hosts, in place (a bind mount holds the file, not its name)."""
        local_by_name: dict[tuple[str, str], str] = {}
        for item in items:
            run = self.pods.get(item["metadata"]["uid"])
            if run is not None and run.alive():
                local_by_name[(run.namespace, run.name)] = run.address.local
        entries: list[tuple[str, str]] = []
        for service in self._services:
            meta = service["metadata"]
            selector = (service.get("spec") or {}).get("selector") or {}
            if not selector:
                continue
            for item in items:
                labels = item["metadata"].get("labels") or {}
                address = local_by_name.get(
                    (item["metadata"]["namespace"], item["metadata"]["name"])
                )
                if (
                    address
                    and item["metadata"]["namespace"] == meta["namespace"]
                    and all(labels.get(k) == v for k, v in selector.items())
                ):
                    base = f"{meta['name']}.{meta['namespace']}"
                    entries += [(address, f"{base}.svc"), (address, f"{base}.svc.cluster.local")]
                    break
        for run in self.pods.values():
            text = hosts_file(entries, run.name, run.address.local, self.network.api_service_ip)
            path = run.folder / "hosts"
            if not path.exists() or path.read_text() != text:
                with path.open("r+" if path.exists() else "w") as handle:
                    handle.write(text)
                    handle.truncate()

    # ------------------------------------------------------------------------------- pods
    def _sync(self, item: dict[str, Any]) -> None:
        meta = item["metadata"]
        run = self.pods.get(meta["uid"])
        if objects.deleting(item):
            self._finish_deletion(item, run)
            return
        if objects.is_terminal(item):
            if run is not None and not run.alive():
                self.pods.pop(run.uid, None)
            return
        if run is None:
            if objects.phase(item) == "Running":
                self._lost(item)  # this kubelet has no such process: a node that came back
                return
            self._start(item)
            return
        self._advance(item, run)
        self._report(item, run)

    def _start(self, item: dict[str, Any]) -> None:
        meta = item["metadata"]
        spec = item["spec"]
        address = self.network.allocate(meta["uid"])
        folder = self.root / "pods" / meta["uid"]
        folder.mkdir(parents=True, exist_ok=True)
        run = PodRun(
            meta["uid"], meta["namespace"], meta["name"], spec["nodeName"], address, folder
        )
        (folder / "hosts").write_text(
            hosts_file([], run.name, address.local, self.network.api_service_ip)
        )
        files = self._files(item, folder, address)
        try:
            volumes = files.volumes()
            launches = []
            for container in spec["containers"]:
                env = files.environment(container, self._base_env(address))
                launches.append((container, env, files.mounts(container, volumes)))
        except NotReady as why:
            self.events.event(
                item,
                "FailedMount",
                f"MountVolume.SetUp failed: {why}",
                type_="Warning",
                host=run.node,
            )
            self._report_waiting(item, "ContainerCreating", None)
            return
        self.pods[run.uid] = run
        for container, env, mounts in launches:
            c = ContainerRun(container["name"], container.get("image", ""))
            run.containers[c.name] = c
            self._launch(item, run, c, container, env, mounts)
        self._report(item, run)

    def _files(self, item: dict[str, Any], folder: Path, address: PodAddress) -> PodFiles:
        return PodFiles(
            self.client,
            item,
            folder,
            address.local,
            "127.0.0.1",
            lambda namespace, claim: self.root / "claims" / namespace / claim,
            self.network.api_service_ip,
        )

    def _base_env(self, address: PodAddress) -> dict[str, str]:
        """The image's environment, and the pod's address as the one a wildcard bind takes.

        In a pod, 0.0.0.0 is the pod's own network namespace; here every pod shares this
        machine's, so Spark's UI (WebUI binds $SPARK_LOCAL_IP, else 0.0.0.0) would take :4040
        on every address and a second driver's UI another port. SPARK_LOCAL_IP keeps each on its
        pod's address (Spark reads it for every socket it does not bind by configuration).
        """
        return {**self.image.environment(), "SPARK_LOCAL_IP": address.local}

    def _launch(
        self,
        item: dict[str, Any],
        run: PodRun,
        c: ContainerRun,
        container: dict[str, Any],
        env: dict[str, str],
        mounts: list[Mount],
    ) -> None:
        from .podfiles import expand

        command = [expand(a, env) for a in container.get("command") or []]
        args = [expand(a, env) for a in container.get("args") or []]
        if self.image.runs(c.image):
            try:
                argv = self.image.command(command, args, env)
            except ImageError as why:
                c.terminated = self._terminated(c, 128, "StartError", str(why))
                return
            mounts = [
                Mount(self.image.spark_home, IMAGE_SPARK_HOME),
                Mount(run.folder / "work-dir", WORKDIR),
                *mounts,
            ]
        else:
            argv = [*command, *args]
        (run.folder / "work-dir").mkdir(exist_ok=True)
        mounts = sorted(mounts, key=lambda m: m.target.count("/"))
        mounts.append(Mount(run.folder / "hosts", "/etc/hosts"))
        workdir = container.get("workingDir") or (WORKDIR if self.image.runs(c.image) else "/")
        namespace, name, uid = run.namespace, run.name, run.uid

        def keep(line: str, container_name: str = c.name) -> None:
            self.logs.append(namespace, name, uid, container_name, line)

        c.process = ContainerProcess(
            argv,
            env,
            mounts,
            workdir,
            keep,
            hostname=run.name[:63],
            memory_limit=memory_limit(container),
        )
        c.started = self.clock.now()
        c.terminated = None
        self.events.event(item, "Started", f"Started container {c.name}", host=run.node)

    def _terminated(
        self, c: ContainerRun, code: int, reason: str, message: str = ""
    ) -> dict[str, Any]:
        now = self.clock.now()
        found: dict[str, Any] = {
            "exitCode": code,
            "reason": reason,
            "startedAt": rfc3339(c.started or now),
            "finishedAt": rfc3339(now),
            "containerID": f"os://{c.process.pid if c.process else 0}",
        }
        if message:
            found["message"] = message
        return found

    def _advance(self, item: dict[str, Any], run: PodRun) -> None:
        """Collect exits; restart by restartPolicy once the back-off has passed."""
        policy = item["spec"].get("restartPolicy", "Always")
        for c in run.containers.values():
            if c.process is not None and c.terminated is None:
                code = c.process.poll()
                if code is None:
                    continue
                if c.process.oom_killed:
                    reason = "OOMKilled"
                else:
                    reason = "Completed" if code == 0 else "Error"
                c.terminated = self._terminated(c, code, reason)
                restart = policy == "Always" or (policy == "OnFailure" and code != 0)
                if restart:
                    delay = min(BACKOFF_SECONDS * 2**c.restarts, BACKOFF_MAX_SECONDS)
                    c.backoff_until = time.monotonic() + delay
            elif (
                c.terminated is not None and c.backoff_until and time.monotonic() >= c.backoff_until
            ):
                spec = next(s for s in item["spec"]["containers"] if s["name"] == c.name)
                c.last_terminated, c.restarts, c.backoff_until = c.terminated, c.restarts + 1, 0.0
                self.logs.rotate(run.namespace, run.name, run.uid, c.name)
                files = self._files(item, run.folder, run.address)
                try:
                    env = files.environment(spec, self._base_env(run.address))
                    mounts = files.mounts(spec, files.volumes())
                except NotReady:
                    continue
                self._launch(item, run, c, spec, env, mounts)

    def _container_status(self, c: ContainerRun) -> dict[str, Any]:
        state: dict[str, Any]
        if c.terminated is not None and c.backoff_until:
            state = {
                "waiting": {
                    "reason": "CrashLoopBackOff",
                    "message": f"back-off restarting failed container {c.name}",
                }
            }
        elif c.terminated is not None:
            state = {"terminated": c.terminated}
        else:
            state = {"running": {"startedAt": rfc3339(c.started or self.clock.now())}}
        running = "running" in state
        return {
            "name": c.name,
            "image": c.image,
            "imageID": "",
            "containerID": f"os://{c.process.pid if c.process else 0}",
            "ready": running,
            "started": running,
            "restartCount": c.restarts,
            "state": state,
            "lastState": {"terminated": c.last_terminated} if c.last_terminated else {},
        }

    def _report(self, item: dict[str, Any], run: PodRun) -> None:
        statuses = [self._container_status(c) for c in run.containers.values()]
        ended = [c.terminated for c in run.containers.values()]
        policy = item["spec"].get("restartPolicy", "Always")
        if all(t is not None for t in ended) and not any(
            c.backoff_until for c in run.containers.values()
        ):
            failed = any(t["exitCode"] != 0 for t in ended if t)
            phase = "Failed" if failed else "Succeeded"
            if policy == "Always" or (policy == "OnFailure" and failed):
                phase = "Running"
        else:
            phase = "Running"
        ready = phase == "Running" and all(s["ready"] for s in statuses)
        now = rfc3339(self.clock.now())
        conditions = (item.get("status") or {}).get("conditions")
        for kind, value in (
            ("PodReadyToStartContainers", "True" if run.alive() else "False"),
            ("Initialized", "True"),
            ("ContainersReady", "True" if ready else "False"),
            ("Ready", "True" if ready else "False"),
        ):
            old = objects.condition(item, kind)
            if old is None or old.get("status") != value:
                entry: dict[str, Any] = {
                    "type": kind,
                    "status": value,
                    "lastProbeTime": None,
                    "lastTransitionTime": now,
                }
                if value == "False" and kind in ("Ready", "ContainersReady"):
                    entry["reason"] = "PodCompleted" if phase != "Running" else "ContainersNotReady"
                conditions = objects.with_condition(conditions, entry)
        status = {
            "phase": phase,
            "hostIP": "127.0.0.1",
            "hostIPs": [{"ip": "127.0.0.1"}],
            "podIP": run.address.api,
            "podIPs": [{"ip": run.address.api}],
            "startTime": (item.get("status") or {}).get("startTime") or now,
            "conditions": conditions,
            "containerStatuses": statuses,
        }
        if run.reported == status:
            return
        self.client.patch(pod(run.namespace, run.name) + "/status", {"status": status})
        run.reported = status
        self.reported[run.uid] = status

    def _report_waiting(self, item: dict[str, Any], reason: str, message: str | None) -> None:
        waiting: dict[str, Any] = {"reason": reason, **({"message": message} if message else {})}
        statuses = [
            {
                "name": c["name"],
                "image": c.get("image"),
                "imageID": "",
                "ready": False,
                "restartCount": 0,
                "started": False,
                "state": {"waiting": waiting},
                "lastState": {},
            }
            for c in item["spec"]["containers"]
        ]
        if (item.get("status") or {}).get("containerStatuses") == statuses:
            return
        status = {
            "phase": "Pending",
            "hostIP": "127.0.0.1",
            "startTime": (item.get("status") or {}).get("startTime") or rfc3339(self.clock.now()),
            "containerStatuses": statuses,
        }
        meta = item["metadata"]
        self.client.patch(pod(meta["namespace"], meta["name"]) + "/status", {"status": status})

    def _lost(self, item: dict[str, Any]) -> None:
        """A Running pod with no process here: the node lost it (power-off, reboot)."""
        now = rfc3339(self.clock.now())
        statuses = []
        for s in (item.get("status") or {}).get("containerStatuses") or []:
            started = ((s.get("state") or {}).get("running") or {}).get("startedAt")
            statuses.append(
                {
                    **s,
                    "ready": False,
                    "started": False,
                    "state": {
                        "terminated": {
                            "exitCode": 137,
                            "reason": "ContainerStatusUnknown",
                            "message": "The container could not be located when the pod was terminated",
                            **({"startedAt": started} if started else {}),
                            "finishedAt": now,
                        }
                    },
                }
            )
        meta = item["metadata"]
        self.client.patch(
            pod(meta["namespace"], meta["name"]) + "/status",
            {"status": {"phase": "Failed", "containerStatuses": statuses}},
        )

    def _finish_deletion(self, item: dict[str, Any], run: PodRun | None) -> None:
        """SIGTERM, SIGKILL at the end of the grace period, the last status, DELETE with grace 0."""
        meta = item["metadata"]
        if run is not None and run.alive():
            now = time.monotonic()
            if run.stop_asked is None:
                run.stop_asked = now
                self.events.event(
                    item,
                    "Killing",
                    f"Stopping container {next(iter(run.containers))}",
                    host=run.node,
                )
                for c in run.containers.values():
                    if c.process is not None and c.terminated is None:
                        c.process.terminate()
            deadline = parse_time(meta["deletionTimestamp"])
            if datetime.now(UTC) >= deadline - timedelta(seconds=0.2):
                for c in run.containers.values():
                    if c.process is not None:
                        c.process.end()
            for c in run.containers.values():
                c.backoff_until = 0.0
            policy_free = {**item, "spec": {**item["spec"], "restartPolicy": "Never"}}
            self._advance(policy_free, run)
            if run.alive():
                return
        if run is not None:
            with contextlib.suppress(SimApiError):
                self._report(item, run)
            self._forget(run)
        self.client.delete(pod(meta["namespace"], meta["name"]), grace=0, uid=meta["uid"])


def wait_until(check: Callable[[], bool], seconds: float, what: str) -> None:
    """Poll ``check`` until it holds; a test bed helper for real time, where JVMs take seconds."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise TimeoutError(f"{what}: not within {seconds:.0f} s")
