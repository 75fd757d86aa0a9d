"""Leader election on a Lease (kube.leader), on the emulator and the real control plane.

client-go's rules: one holder; a candidate takes over only once the Lease has not changed for
its duration as the candidate itself observed it; every write a compare-and-swap.
"""

from __future__ import annotations

from pathlib import Path

from kubectl_spark.kube.client import Connection, connect
from kubectl_spark.kube.leader import LeaseElector
from kubectl_spark.sim.client import Client
from tests.beds import Bed


def test_one_leader_a_takeover_after_the_lease_and_a_release(bed: Bed, tmp_path: Path) -> None:
    kubeconfig = str(bed.write_kubeconfig(tmp_path / "kubeconfig"))
    now = [0.0]

    def elector(identity: str) -> LeaseElector:
        return LeaseElector(
            lambda: connect(Connection(kubeconfig=kubeconfig)),
            "default",
            "kubectl-spark-recorder",
            identity,
            lease_seconds=15,
            clock=lambda: now[0],
        )

    a, b = elector("recorder-a"), elector("recorder-b")
    assert a.try_acquire_or_renew() and a.is_leader()
    assert not b.try_acquire_or_renew() and not b.is_leader()
    now[0] = 10.0
    assert a.try_acquire_or_renew()  # renewed: b's view of it changes
    now[0] = 20.0
    assert not b.try_acquire_or_renew()  # changed 10 s ago (b's clock): still held
    # a stops renewing (killed): 15 s after b last saw a change, b takes over.
    now[0] = 36.0
    assert b.try_acquire_or_renew() and b.is_leader()
    assert not a.is_leader()  # its last renewal is older than the lease
    assert not a.try_acquire_or_renew()
    admin = Client(bed.url, bed.token, bed.ca_pem)
    lease = admin.get(
        "/apis/coordination.k8s.io/v1/namespaces/default/leases/kubectl-spark-recorder"
    )
    assert lease is not None
    assert (lease["spec"]["holderIdentity"], lease["spec"]["leaseTransitions"]) == ("recorder-b", 1)
    b.release()
    assert not b.is_leader()
    assert a.try_acquire_or_renew()  # no holder: at once
    admin.close()
