"""The node Leases of the simulated kubelets, renewed on a thread of their own.

A real kubelet renews its Lease from its own goroutine (pkg/kubelet/nodelease, through
k8s.io/component-helpers/apimachinery/lease's controller), whatever else it is busy with. On a
real control plane the simulator's kubelets otherwise renew only when the world is ticked; a
test that reads or runs a command for longer than the node-monitor grace (6 s on the test bed)
between two ticks, on a loaded machine, then sees a healthy node go NotReady and its pods
evicted by the real taint-eviction controller: a node loss no scenario asked for. On the
emulator the world's clock is stepped by the tick itself, so no keeper is needed there.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable

import urllib3

from kubectl_spark.knowledge.clock import Clock
from kubectl_spark.knowledge.times import rfc3339_micro

from . import nodestatus
from .client import Client, SimApiError


class LeaseKeeper:
    """Renews, every ``period`` seconds, the Lease of each node that ``up`` names."""

    def __init__(self, client: Client, clock: Clock, period: float) -> None:
        self.client = client  # its own connection: the world's is the ticking thread's
        self.clock = clock
        self.period = period
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def keep(self, up: Callable[[], list[str]]) -> None:
        """Start renewing the Leases of the nodes ``up`` returns (read afresh each round)."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(
            target=self._run, args=(up,), name="sim-lease-keeper", daemon=True
        )
        self._thread.start()

    def _run(self, up: Callable[[], list[str]]) -> None:
        while not self._stopped.wait(self.period):
            for name in up():
                self.renew(name)

    def renew(self, name: str) -> None:
        """One renewal, given up quietly when it fails.

        A node whose Lease is not there yet (its kubelet registers it) or an API server that is
        briefly away is tried again next round, as the kubelet does.
        """
        with contextlib.suppress(SimApiError, urllib3.exceptions.HTTPError, OSError):
            self.client.patch(
                f"{nodestatus.LEASES}/{name}",
                {"spec": {"renewTime": rfc3339_micro(self.clock.now())}},
            )

    def stop(self) -> None:
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.client.close()
