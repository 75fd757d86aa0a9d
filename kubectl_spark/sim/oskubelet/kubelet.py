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
- its collaborators: the node's agent (:mod:`.node`: registration, heartbeats, Lease) and the
  status manager (:mod:`.status`: what is written of each pod);
- faults: :meth:`power_off` (every process of the node killed, nothing reported),
  :meth:`cut` (the node stops reaching the API server and the API server it, while its
  processes run on and keep their own API access: a zombie), :meth:`freeze` (SIGSTOP), and
  :meth:`heal`, after which pods deleted meanwhile are killed, never brought back.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from kubectl_spark.knowledge.clock import SystemClock
from kubectl_spark.knowledge.times import parse_time
from kubectl_spark.sim import objects
from kubectl_spark.sim.client import Client, SimApiError, pod
from kubectl_spark.sim.eventrecorder import EventRecorder
from kubectl_spark.sim.kubeletapi import KubeletApi

from .image import IMAGE_SPARK_HOME, ImageError, SparkImage
from .network import PodAddress, PodNetwork, hosts_file
from .node import NodeAgent
from .podfiles import NotReady, PodFiles, expand, memory_limit
from .runs import ContainerRun, NodeRun, PodRun
from .runtime import ContainerProcess, Execution, Mount
from .status import StatusManager

SYNC_SECONDS = 0.25
# CrashLoopBackOff's first delay (a kubelet's is 10 s; real time is dear here).
BACKOFF_SECONDS = 1.0
BACKOFF_MAX_SECONDS = 30.0
WORKDIR = f"{IMAGE_SPARK_HOME}/work-dir"


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
        self.logs.exec_into = self.exec_into
        self.events = EventRecorder(client, self.clock)
        self.nodes: dict[str, NodeRun] = {}
        self.pods: dict[str, PodRun] = {}
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._services: list[dict[str, Any]] = []
        self.status = StatusManager(client, self.clock)
        self.agent = NodeAgent(client, self.clock)
        #: Each pod's last status written, by uid (the status manager's, kept after the pod).
        self.reported = self.status.reported

    # ------------------------------------------------------------------------------ nodes
    def add_node(self, name: str) -> None:
        with self._lock:
            self.nodes[name] = NodeRun(name, self.logs.open(name))
            self.agent.register(self.nodes[name])

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
            self.agent.beat(node, force=True)

    def signal_container(self, namespace: str, name: str, sig: int) -> None:
        """Send a signal to a pod's processes on a node that stays up.

        SIGTERM: a stop from outside with nothing to say who sent it (the JVM runs its shutdown
        hooks, exit 143). SIGSTOP: a JVM stuck (a long GC pause, a hung thread) that sends no
        heartbeat while the kubelet still says it runs.
        """
        with self._lock:
            for run in self.pods.values():
                if (run.namespace, run.name) == (namespace, name):
                    for c in run.containers.values():
                        if c.process is not None:
                            c.process.signal(sig, tree=True)

    def kill_container(self, namespace: str, name: str, container: str | None = None) -> None:
        """SIGKILL a container's processes, as `crictl stop -t 0` or an outside OOM kill would."""
        with self._lock:
            for run in self.pods.values():
                if (run.namespace, run.name) == (namespace, name):
                    for c in run.containers.values():
                        if (container in (None, c.name)) and c.process is not None:
                            c.process.end()

    def exec_into(
        self, namespace: str, name: str, container: str, command: list[str], tty: bool
    ) -> Execution | None:
        """``command`` in a running container of the pod (the endpoint's exec); None: none runs."""
        with self._lock:
            run = next(
                (r for r in self.pods.values() if (r.namespace, r.name) == (namespace, name)), None
            )
            found = run.containers.get(container) if run is not None else None
            process = found.process if found is not None and found.terminated is None else None
        return process.exec(command, tty=tty) if process is not None else None

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
                self.agent.beat(node)
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
                self.status.lost(item)  # this kubelet has no such process: a node that came back
                return
            self._start(item)
            return
        self._advance(item, run)
        self.status.report(item, run)

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
            self.status.report_waiting(item, "ContainerCreating", None)
            return
        self.pods[run.uid] = run
        for container, env, mounts in launches:
            c = ContainerRun(container["name"], container.get("image", ""))
            run.containers[c.name] = c
            self._launch(item, run, c, container, env, mounts)
        self.status.report(item, run)

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
        command = [expand(a, env) for a in container.get("command") or []]
        args = [expand(a, env) for a in container.get("args") or []]
        if self.image.runs(c.image):
            try:
                argv = self.image.command(command, args, env)
            except ImageError as why:
                c.terminated = self.status.terminated(c, 128, "StartError", str(why))
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
                c.terminated = self.status.terminated(c, code, reason)
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
                self.status.report(item, run)
            self._forget(run)
        self.client.delete(pod(meta["namespace"], meta["name"]), grace=0, uid=meta["uid"])
