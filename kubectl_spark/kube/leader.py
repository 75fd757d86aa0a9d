"""Leader election on a coordination.k8s.io Lease, as client-go's leaderelection package runs it.

Two recorders run; one holds the Lease and records, the other waits. The rules are client-go's
(tools/leaderelection/leaderelection.go, resourcelock/leaselock.go):

- The holder renews ``spec.renewTime`` every ``renew_seconds``; every write is a compare-and-swap
  on the Lease's resourceVersion, so two candidates cannot both win.
- A candidate takes the Lease when its record has not changed for ``lease_seconds`` *as the
  candidate observed it* (its own monotonic clock, not the times written in the Lease: clocks
  of two machines may disagree), then increments ``leaseTransitions``.
- A leader that cannot renew within ``lease_seconds`` of its last renewal stops acting: another
  may have taken over by then.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kubectl_spark import errors

from .client import Api


def _micro(moment: datetime) -> str:
    """A MicroTime, as the Lease's acquireTime and renewTime are written."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class LeaseElector:
    api_factory: Callable[[], Api]
    namespace: str
    name: str
    identity: str
    lease_seconds: int = 15
    renew_seconds: float = 5.0
    clock: Callable[[], float] = time.monotonic
    # What this candidate last saw of the Lease: its resourceVersion, and when (own clock).
    _observed: tuple[str, float] | None = None
    _renewed_at: float | None = None  # when this leader last renewed (own clock)

    @property
    def path(self) -> str:
        return f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases/{self.name}"

    def is_leader(self) -> bool:
        """Whether it may act now: it renewed less than ``lease_seconds`` ago."""
        return self._renewed_at is not None and self.clock() - self._renewed_at < self.lease_seconds

    def try_acquire_or_renew(self) -> bool:
        """One round: create, renew or take the Lease; True when it holds it afterwards."""
        now = datetime.now(UTC)
        try:
            with self.api_factory() as api:
                lease = self._get(api)
                if lease is None:
                    return self._create(api, now)
                spec = lease.get("spec") or {}
                version = str((lease.get("metadata") or {}).get("resourceVersion") or "")
                if self._observed is None or self._observed[0] != version:
                    self._observed = (version, self.clock())
                holder = spec.get("holderIdentity")
                duration = int(spec.get("leaseDurationSeconds") or self.lease_seconds)
                held = holder and holder != self.identity
                if held and self.clock() - self._observed[1] < duration:
                    self._renewed_at = None
                    return False  # another holds it, and renews
                return self._update(api, lease, spec, holder == self.identity, now)
        except errors.Conflict:
            return False  # another candidate wrote first
        except (errors.KubectlSparkError, OSError, ValueError):
            return self.is_leader()  # a lost request: still leader only within the lease

    def release(self) -> None:
        """On a clean stop: clear the holder, so the other takes over at once."""
        if not self.is_leader():
            return
        try:
            with self.api_factory() as api:
                lease = self._get(api)
                if lease is not None and (lease.get("spec") or {}).get("holderIdentity") == (
                    self.identity
                ):
                    spec = {**lease["spec"], "holderIdentity": None, "leaseDurationSeconds": 1}
                    api.request(
                        "PUT", self.path, body={**lease, "spec": spec}, what="release lease"
                    )
        except (errors.KubectlSparkError, OSError, ValueError):
            pass
        self._renewed_at = None

    def _get(self, api: Api) -> dict[str, Any] | None:
        try:
            found: dict[str, Any] = api.request("GET", self.path, what=f"get lease {self.name}")
        except errors.NotFound:
            return None
        return found

    def _create(self, api: Api, now: datetime) -> bool:
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": {
                "holderIdentity": self.identity,
                "leaseDurationSeconds": self.lease_seconds,
                "acquireTime": _micro(now),
                "renewTime": _micro(now),
                "leaseTransitions": 0,
            },
        }
        api.request(  # 409 AlreadyExists: another created it first (Conflict, above)
            "POST",
            f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases",
            body=body,
            what=f"create lease {self.name}",
        )
        self._renewed_at = self.clock()
        return True

    def _update(
        self, api: Api, lease: dict[str, Any], spec: dict[str, Any], mine: bool, now: datetime
    ) -> bool:
        renewed = {
            **spec,
            "holderIdentity": self.identity,
            "leaseDurationSeconds": self.lease_seconds,
            "renewTime": _micro(now),
        }
        if not mine:
            renewed["acquireTime"] = _micro(now)
            renewed["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
        started = self.clock()
        api.request(  # resourceVersion in the body: a compare-and-swap
            "PUT", self.path, body={**lease, "spec": renewed}, what=f"renew lease {self.name}"
        )
        self._renewed_at = started
        return True
