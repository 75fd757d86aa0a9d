"""What the simulator needs from the cluster it plays on, beyond the Kubernetes API.

On the emulator, an admin channel stands in for what a real node would do outside the API:
logs are written into the emulator, and it is told which nodes it cannot reach. On a real
control plane, the simulated kubelets serve logs themselves (:mod:`.kubeletapi`), a node that
is down or cut off stops answering, and the real controllers (node lifecycle, taint eviction,
Jobs, the scheduler, garbage collection, pod GC) do what the simulator's stand-ins do on the
emulator: none of those stand-ins run there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from kubectl_spark.knowledge.clock import Clock

from .client import Client, SimApiError
from .kubeletapi import KubeletApi
from .leases import LeaseKeeper


class ClusterSide(Protocol):
    #: True where real controllers run: the simulator's stand-ins for them stay idle.
    real_controllers: bool
    #: How often a kubelet renews its node Lease (the real node-monitor grace is short).
    lease_renew_seconds: float | None
    #: CrashLoopBackOff's first delay (real time is dear on the real control plane).
    crash_backoff_seconds: float | None

    def append_log(self, item: dict[str, Any], container: str, text: str) -> None: ...
    def rotate_log(self, item: dict[str, Any], container: str) -> None: ...
    def set_unreachable(self, nodes: set[str]) -> None: ...
    def set_gc(self, *, enabled: bool) -> None: ...
    def node_endpoint(self, node: str) -> tuple[str, int] | None: ...
    def keep_leases(self, up: Callable[[], list[str]]) -> None: ...
    def close(self) -> None: ...


class EmulatorSide:
    real_controllers = False
    lease_renew_seconds: float | None = None
    crash_backoff_seconds: float | None = None

    def __init__(self, client: Client) -> None:
        self.client = client

    def _logs(self, item: dict[str, Any], body: dict[str, Any]) -> None:
        meta = item["metadata"]
        try:
            self.client.admin(
                "POST", "logs", {"namespace": meta["namespace"], "pod": meta["name"], **body}
            )
        except SimApiError as err:
            if err.status != 404:
                raise

    def append_log(self, item: dict[str, Any], container: str, text: str) -> None:
        self._logs(item, {"container": container, "text": text})

    def rotate_log(self, item: dict[str, Any], container: str) -> None:
        self._logs(item, {"container": container, "rotate": True})

    def set_unreachable(self, nodes: set[str]) -> None:
        self.client.admin("PUT", "unreachable-nodes", {"nodes": sorted(nodes)})

    def set_gc(self, *, enabled: bool) -> None:
        self.client.admin("PUT", "gc", {"enabled": enabled})

    def node_endpoint(self, node: str) -> tuple[str, int] | None:
        del node
        return None

    def keep_leases(self, up: Callable[[], list[str]]) -> None:
        """Nothing to keep on the emulator.

        Its clock moves only when the world ticks, which renews every Lease that is due.
        """
        del up

    def close(self) -> None:
        return None


class RealControlPlaneSide:
    real_controllers = True
    lease_renew_seconds: float | None = 1.0
    crash_backoff_seconds: float | None = 1.0

    def __init__(self, clock: Clock, leases: LeaseKeeper) -> None:
        self.kubelets = KubeletApi(clock)
        self.leases = leases
        self.nodes: set[str] = set()

    def append_log(self, item: dict[str, Any], container: str, text: str) -> None:
        meta = item["metadata"]
        self.kubelets.append(meta["namespace"], meta["name"], meta["uid"], container, text)

    def rotate_log(self, item: dict[str, Any], container: str) -> None:
        meta = item["metadata"]
        self.kubelets.rotate(meta["namespace"], meta["name"], meta["uid"], container)

    def set_unreachable(self, nodes: set[str]) -> None:
        self.kubelets.reachable(set(self.kubelets.ports) - nodes)

    def set_gc(self, *, enabled: bool) -> None:
        del enabled
        raise SimApiError(
            501, {"message": "a real kube-controller-manager's garbage collector cannot be paused"}
        )

    def node_endpoint(self, node: str) -> tuple[str, int] | None:
        return ("127.0.0.1", self.kubelets.open(node))

    def keep_leases(self, up: Callable[[], list[str]]) -> None:
        """Real time passes between ticks here: the Leases are renewed on their own thread."""
        self.leases.keep(up)

    def close(self) -> None:
        self.leases.stop()
        self.kubelets.stop()
