"""S2's split brain, and (issue 24) a fence the API server enforces, on both backends.

Spark's drivers act here with their own identity: a service-account token bound to the
driver pod (TokenRequest), as the kubelet mounts it. After ``fence``, the zombie driver of s2
(attempt 1, its node partitioned) is refused (403) by the fence's ValidatingAdmissionPolicy
when it creates an executor or deletes the live attempt's; the live driver is not; ``unfence``
takes the refusal away.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kubectl_spark.sim.client import SimApiError
from kubectl_spark.sim.sparkapp import executor_pod
from tests.beds import grant_edit_to_default_account
from tests.stages import Stage, alerts

pytestmark = pytest.mark.slow
APP = "networkwordcount"
POLICIES = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
BINDINGS = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings"


@pytest.fixture
def stage(staged: Any) -> Stage:
    return staged("s2-partition")


def _drivers_may_act(s: Stage) -> None:
    """The drivers act as themselves; on the real control plane their account needs a role."""
    s.world.driver_identity = True
    if s.kind == "real":
        grant_edit_to_default_account(s.world.client, "spark-driver")


def _executor_of(s: Stage, driver: dict[str, Any], exec_id: str) -> dict[str, Any]:
    """The executor pod Spark's allocator would ask for next (the simulator's own body)."""
    state = s.world.spark.drivers[driver["metadata"]["uid"]]
    return executor_pod(driver, state, exec_id)


def _owned_by(s: Stage, driver: dict[str, Any]) -> list[dict[str, Any]]:
    uid = driver["metadata"]["uid"]
    return [
        p
        for p in s.running(spark_role="executor")
        if any(r["uid"] == uid for r in p["metadata"].get("ownerReferences") or [])
    ]


def _refused(call: Callable[[], Any]) -> SimApiError | None:
    try:
        call()
    except SimApiError as err:
        return err
    return None


def _partitioned_driver(s: Stage) -> tuple[dict[str, Any], Any]:
    """The application running, then its driver's node partitioned: (that driver, a client
    with its own token, mounted when it started)."""
    _drivers_may_act(s)
    s.do("submit", APP)
    s.until(
        "the driver and its two executors running",
        lambda: (
            len(s.running(spark_role="driver")) == 1 and len(s.running(spark_role="executor")) == 2
        ),
    )
    (zombie,) = s.running(spark_role="driver")
    zombie_client = s.world.driver_client(zombie)
    s.do("partition", zombie["spec"]["nodeName"])
    return zombie, zombie_client


def test_a_fenced_zombie_driver_is_refused_by_the_api_server(stage: Stage, capsys) -> None:
    s = stage
    zombie, zombie_client = _partitioned_driver(s)
    s.until(
        "attempt 2's driver running",
        lambda: any(
            d["metadata"]["uid"] != zombie["metadata"]["uid"]
            for d in s.running(spark_role="driver")
        ),
    )
    (live,) = [
        d
        for d in s.running(spark_role="driver")
        if d["metadata"]["uid"] != zombie["metadata"]["uid"]
    ]
    # S2's split brain, as test_scenarios_on_both reads S1 and S2b.
    app = s.app(capsys, APP)
    assert alerts(app)["SplitBrain"] == [1, 2]
    assert "ZombieDriver" in alerts(app)
    first, second = app["attempts"]
    assert (first["state"], first["node"], second["state"]) == (
        "Lost",
        zombie["spec"]["nodeName"],
        "Running",
    )
    assert alerts(app)["SharedAppId"] == [1, 2]  # one app id: each counts the other's
    assert "NameCollision" not in alerts(app)

    # NetworkPolicies add up: an allow-all beside the fence's deny-all keeps allowing, and the
    # plan says so (what it still allows is read from the policy, test_action_safety.py).
    s.world.client.create(
        "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies",
        {
            "metadata": {"name": "allow-all"},
            "spec": {"podSelector": {}, "ingress": [{}], "policyTypes": ["Ingress"]},
        },
    )
    # An action names its attempt: the app alone is refused, the attempts listed, nothing written.
    code, out, err = s.cli(capsys, "fence", APP, "--yes")
    assert code == 1 and out == "" and "fence needs the attempt to act on" in err, out + err
    assert f"{APP}/1 (Lost on {zombie['spec']['nodeName']})" in err
    assert s.world.client.list(POLICIES) == []
    code, out, err = s.cli(capsys, "fence", f"{APP}/1", "--dry-run", "-o", "json")
    assert code == 0, err
    plan = json.loads(out)
    assert any(w.startswith("NetworkPolicy allow-all also selects") for w in plan["warnings"])
    kinds = [o["resource"] for o in plan["operations"]]
    assert kinds[:2] == ["validatingadmissionpolicies", "validatingadmissionpolicybindings"], kinds
    assert any(
        g.startswith("admission policy (enforced by the API server") for g in plan["guarantees"]
    )
    assert any("get, list and watch pass no admission" in g for g in plan["guarantees"])
    code, out, err = s.cli(capsys, "fence", f"{APP}/1", "--yes")
    assert code == 0, out + err
    assert len(s.world.client.list(POLICIES)) == 1 and len(s.world.client.list(BINDINGS)) == 1

    ns = "/api/v1/namespaces/default/pods"
    # The fence is done once the server refuses (it waits for kube-apiserver to put the new
    # policy to work): the zombie's very first create is refused, not only a later one.
    assert "done: wait pods default/kubectl-spark-fence-probe-" in out, out
    body = _executor_of(s, zombie, "90")
    denied = _refused(lambda: zombie_client.create(ns, body))
    assert denied is not None and denied.status == 403, denied
    assert "ValidatingAdmissionPolicy" in str(denied) and "fenced" in str(denied)

    # The live driver is not refused. Both attempts share one app id, so attempt 2 counted
    # attempt 1's running executors as its own; the fence deleted them, and attempt 2 replaces
    # them itself, with its own identity.
    s.until("attempt 2's own executors running", lambda: len(_owned_by(s, live)) >= 1)
    victim = _owned_by(s, live)[0]
    victim_path = f"{ns}/{victim['metadata']['name']}"
    denied = _refused(lambda: zombie_client.delete(victim_path, uid=victim["metadata"]["uid"]))
    assert denied is not None and denied.status == 403, denied
    kept = s.world.client.get(victim_path)
    assert kept is not None and kept["metadata"]["uid"] == victim["metadata"]["uid"]

    # A fenced zombie may be force-killed without --node-down (the fence cut it off); its pods
    # go, the fence's policies stay; unfence then removes what the fence left.
    code, out, err = s.cli(capsys, "force-kill", f"{APP}/1", "--yes")
    assert code == 0, out + err
    assert zombie["metadata"]["uid"] not in {
        d["metadata"]["uid"] for d in s.pods(spark_role="driver")
    }

    def netpols() -> list[str]:
        path = "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies"
        return sorted(p["metadata"]["name"] for p in s.world.client.list(path))

    assert len(s.world.client.list(POLICIES)) == 1 and len(netpols()) == 2
    code, out, err = s.cli(capsys, "unfence", f"{APP}/1", "--yes")
    assert code == 0 and "not fenced" not in out, out + err
    assert s.world.client.list(POLICIES) == [] and s.world.client.list(BINDINGS) == []
    assert netpols() == ["allow-all"]  # the fence's own, and nothing it did not make


def test_a_fence_refuses_the_zombies_connections_not_an_admins_eviction(
    stage: Stage, capsys
) -> None:
    """issue 46: CONNECT (exec, attach, portforward, proxy) is no write, and the ``edit`` role
    grants it: the fence's policy refuses it to the fenced identity. An admin's eviction of a
    fenced executor (a drain) still works, and the Lease stays held."""
    s = stage
    zombie, zombie_client = _partitioned_driver(s)
    s.until(
        "attempt 1 Lost",
        lambda: s.app(capsys, APP)["attempts"][0]["state"] == "Lost",
    )
    code, out, err = s.cli(capsys, "fence", f"{APP}/1", "--keep-executors", "--yes")
    assert code == 0, out + err

    ns = "/api/v1/namespaces/default/pods"
    fenced = _owned_by(s, zombie) or [
        p
        for p in s.pods(spark_role="executor")
        if p["metadata"]["labels"].get("kubectl-spark.io/fenced")
    ]
    assert fenced, s.state()
    target = fenced[0]["metadata"]["name"]
    connections = [("POST", f"{ns}/{target}:4040/proxy/api/v1/applications")]
    if s.kind == "real":  # the emulator serves no exec, attach or portforward (docs/emulator.md)
        connections += [
            ("POST", f"{ns}/{target}/exec?command=true&stdout=true"),
            ("POST", f"{ns}/{target}/attach?stdout=true"),
            ("POST", f"{ns}/{target}/portforward?ports=4040"),
        ]
    for method, path in connections:
        denied = _refused(functools.partial(zombie_client.request, method, path))
        assert denied is not None and denied.status == 403, (path, denied)
        assert "fenced by kubectl spark" in str(denied), (path, denied)

    # A drain still moves a fenced pod: the admin's eviction is not a new pod of the attempt.
    eviction = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": target, "namespace": "default"},
    }
    s.world.client.create(f"{ns}/{target}/eviction", eviction)

    lease = s.world.client.get(
        f"/apis/coordination.k8s.io/v1/namespaces/default/leases/kubectl-spark-{APP}"
    )
    assert lease is not None
    renewed = datetime.fromisoformat(lease["spec"]["renewTime"])
    held_until = renewed + timedelta(seconds=lease["spec"]["leaseDurationSeconds"])
    assert held_until > datetime.now(UTC) + timedelta(seconds=60), lease  # still held in 60 s
    # Its executors were to be kept: nothing is left undone.
    assert "UnfinishedAction" not in alerts(s.app(capsys, APP))
