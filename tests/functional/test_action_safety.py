"""Issue 24's sharp edges, through the real entry point: an action names its attempt, and a
plan's YAML is plain."""

from __future__ import annotations

import json

import pytest

from tests.functional.test_read_commands import app_named, ls_json, run


@pytest.mark.parametrize("action", ["fence", "force-kill", "unfence"])
@pytest.mark.parametrize("reference", ["networkwordcount", "networkwordcount/latest"])
def test_an_action_needs_its_attempt_named(played, capsys, action: str, reference: str) -> None:
    """In s2 the latest attempt is the healthy one: an action must not pick it by default."""
    c = played("s2-partition")
    c.server.clear_audit()
    code, out, err = run(capsys, c, action, reference, "--yes")
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1, err
    assert f"{action} needs the attempt to act on" in err
    assert "networkwordcount/1 (Lost on node-a)" in err and "networkwordcount/2 (Running" in err
    assert c.server.audit_writes() == []


def test_a_plans_yaml_has_no_anchors(played, capsys) -> None:
    c = played("s2-partition")
    for args in (
        ("fence", "networkwordcount/1", "--dry-run", "-o", "yaml"),
        ("force-kill", "networkwordcount/1", "--node-down", "--dry-run", "-o", "yaml"),
    ):
        code, out, err = run(capsys, c, *args)
        assert code == 0, err
        assert "&id0" not in out and "*id0" not in out, out


def _ops(capsys, c, *args: str) -> list[dict]:
    code, out, err = run(capsys, c, *args, "--dry-run", "-o", "json")
    assert code == 0, err
    return json.loads(out)["operations"]


def test_force_kill_suspends_first_and_deletes_the_driver_before_its_executors(played, capsys):
    """--no-replace suspends the Job before any pod goes; the driver goes before its executors
    (a live driver replaces each executor it loses); the taint is pinned to the node as read."""
    c = played("s2b-partition-replacement-blocked")
    ops = _ops(capsys, c, "force-kill", "networkwordcount/1", "--no-replace", "--out-of-service")
    verbs = [(o["verb"], o["resource"]) for o in ops]
    assert verbs[0] == ("patch", "jobs") and ops[0]["body"] == {"spec": {"suspend": True}}
    deletes = [o["name"] for o in ops if o["verb"] == "delete"]
    assert "driver" in deletes[0] and all("exec" in name for name in deletes[1:])
    taint = next(o for o in ops if o["resource"] == "nodes")
    node = c.world.client.get("/api/v1/nodes/node-a")
    assert taint["body"]["metadata"]["resourceVersion"] == node["metadata"]["resourceVersion"]
    assert taint["preconditions"]["resourceVersion"] == node["metadata"]["resourceVersion"]


def test_a_stale_taint_is_refused_not_written_over(cluster, capsys) -> None:
    """The out-of-service taint replaces the whole taint list: a node changed since it was read
    is not patched (409), so no taint set meanwhile is lost."""
    c = cluster("s2b-partition-replacement-blocked")
    c.player.play()
    node = c.world.client.get("/api/v1/nodes/node-a")
    stale = node["metadata"]["resourceVersion"]
    c.world.client.patch("/api/v1/nodes/node-a", {"metadata": {"labels": {"touched": "yes"}}})
    from kubectl_spark.sim.client import SimApiError

    with pytest.raises(SimApiError) as caught:
        c.world.client.patch(
            "/api/v1/nodes/node-a", {"metadata": {"resourceVersion": stale}, "spec": {"taints": []}}
        )
    assert caught.value.status == 409


def test_orphaned_executors_are_what_force_kill_deletes(cluster, capsys) -> None:
    """s8: etl/1's driver pod is gone and its two executors run; describe's advice works."""
    c = cluster("s8-orphans-and-churn")
    c.player.play()
    code, out, err = run(capsys, c, "fence", "etl/1", "--yes")
    assert code == 0 and "force-kill etl/1" in out, out + err
    code, out, err = run(capsys, c, "force-kill", "etl/1", "--yes")
    assert code == 0 and "done" in out, out + err
    c.world.step(2)
    running = [
        p
        for p in c.world.find_pods("default", spark_role="executor")
        if p["metadata"]["labels"].get("spark-app-name") == "etl"
        and not p["metadata"].get("deletionTimestamp")
    ]
    assert running == []


def test_unfence_cleans_what_a_force_kill_left(cluster, capsys) -> None:
    """Fence, then force-kill: the pods are gone, the deny-all policy stayed; unfence removes it."""
    c = cluster("s2-partition")
    c.player.play()
    assert run(capsys, c, "fence", "networkwordcount/1", "--yes")[0] == 0
    assert run(capsys, c, "force-kill", "networkwordcount/1", "--yes")[0] == 0
    policies = "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies"
    admission = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
    assert len(c.world.client.list(policies)) == 1
    assert len(c.world.client.list(admission)) == 1
    code, out, err = run(capsys, c, "unfence", "networkwordcount/1", "--yes")
    assert code == 0 and "not fenced" not in out, out + err
    assert c.world.client.list(policies) == []
    assert c.world.client.list(admission) == []
    assert c.world.client.list(admission.replace("policies", "policybindings")) == []


def test_force_kill_on_an_unreachable_node_needs_the_node_said_down(played, capsys) -> None:
    """s2: attempt 1's node is only partitioned; deleting its pod would hide the split brain.
    The person must say the node is powered off (or taint it out-of-service, or fence first)."""
    c = played("s2-partition")
    c.server.clear_audit()
    code, out, err = run(capsys, c, "force-kill", "networkwordcount/1", "--yes")
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1, err
    assert "node node-a is unreachable" in err and "--node-down" in err
    assert "kubectl spark fence networkwordcount/1" in err
    assert c.server.audit_writes() == []
    code, out, err = run(capsys, c, "force-kill", "networkwordcount/1", "--node-down", "--dry-run")
    assert code == 0 and "delete pods" in out, err


def test_a_fence_names_the_policies_that_still_let_traffic_through(cluster, capsys) -> None:
    """NetworkPolicies add up: an allow-all beside the fence's deny-all keeps allowing."""
    c = cluster("s2-partition")
    c.player.play()
    c.world.client.create(
        "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies",
        {
            "metadata": {"name": "allow-all"},
            "spec": {"podSelector": {}, "ingress": [{}], "policyTypes": ["Ingress"]},
        },
    )
    c.world.client.create(
        "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies",
        {
            "metadata": {"name": "dns-egress"},
            "spec": {
                "podSelector": {"matchLabels": {"spark-role": "driver"}},
                "egress": [{"ports": [{"protocol": "UDP", "port": 53}]}],
                "policyTypes": ["Egress"],
            },
        },
    )
    c.world.client.create(
        "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies",
        {"metadata": {"name": "other-app"}, "spec": {"podSelector": {"matchLabels": {"app": "x"}}}},
    )
    code, _out, err = run(capsys, c, "fence", "networkwordcount/1", "--dry-run")
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("Warning: NetworkPolicy")]
    assert len(warnings) == 2, err
    assert (
        "allow-all also selects 3 fenced pods and still allows ingress from anywhere on every port"
        in warnings[0]
    )
    assert (
        "dns-egress also selects 1 fenced pod and still allows egress to anywhere on UDP/53"
        in warnings[1]
    )
    assert "other-app" not in err


def test_a_fence_says_what_it_does_not_guarantee(played, capsys) -> None:
    """Per mechanism. New pods of the fenced attempt are refused by owner, and by its own
    executor name prefix; never by app id, which a driver Job's attempts share (s2)."""
    c = played("s2-partition")
    code, out, err = run(capsys, c, "fence", "networkwordcount/1", "--dry-run", "-o", "json")
    assert code == 0, err
    plan = json.loads(out)
    said = " | ".join(plan["guarantees"])
    for mechanism in ("admission policy", "NetworkPolicy:", "Lease:", "force-kill"):
        assert mechanism in said, said
    assert "reads pass no admission" in said and "StatefulSet or Deployment" in said
    policy = plan["operations"][0]["body"]
    rules = [v["expression"] for v in policy["spec"]["validations"]]
    assert not any("spark-app-selector" in r for r in rules)
    first = app_named(ls_json(capsys, c), "networkwordcount")["attempts"][0]
    prefix = first["executors"][0]["pod"].rsplit("-exec-", 1)[0]
    assert any(f"startsWith('{prefix}-exec-')" in r for r in rules), rules
    assert all(v["reason"] == "Forbidden" for v in policy["spec"]["validations"])


def test_a_force_killed_bare_driver_can_still_be_resubmitted(cluster, capsys) -> None:
    """A spark-submit driver pod is the only copy of its spec: force-kill keeps it (and its
    ConfigMaps and Service) in the history store first, and resubmit starts it again from them."""
    c = cluster("s6-driver-restarts")
    c.player.play_until(30)
    code, out, err = run(capsys, c, "force-kill", "restarting-driver/1", "--force", "--dry-run")
    assert code == 0 and "kept in the local history store" in out, out + err
    code, out, err = run(capsys, c, "force-kill", "restarting-driver/1", "--force", "--yes")
    assert code == 0, out + err
    c.world.step(2)
    assert c.world.find_pods("default", spark_role="driver") == []
    rows = app_named(ls_json(capsys, c), "restarting-driver")["attempts"]
    assert [a["state"] for a in rows] == ["Gone"]  # still listed: resubmit finds it
    code, out, err = run(capsys, c, "resubmit", "restarting-driver", "--yes")
    assert code == 0, out + err
    assert "copied from what force-kill kept in the local history store" in out
    assert "create configmaps" in out and "create services" in out
    c.world.step(8)
    new = app_named(ls_json(capsys, c), "restarting-driver")["attempts"][-1]
    assert new["state"] == "Running" and len(new["executors"]) == 2


def test_resubmit_plan_of_a_running_spark_application_suspends_then_resumes(
    cluster, capsys
) -> None:
    """The plan: suspend, wait for SUSPENDED, resume, wait for a new submissionID."""
    c = cluster("s5-operator-retries")
    c.player.play_until(40)  # attempt 1 runs
    path = "/apis/sparkoperator.k8s.io/v1beta2/namespaces/default/sparkapplications/pi"
    before = c.world.client.get(path)
    assert before["status"]["applicationState"]["state"] == "RUNNING"
    code, out, err = run(capsys, c, "resubmit", "pi", "--force", "--dry-run", "-o", "json")
    assert code == 0, err
    ops = json.loads(out)["operations"]
    assert [(o["verb"], (o["body"] or {}).get("spec")) for o in ops[:3]] == [
        ("patch", {"suspend": True}),
        ("wait", None),
        ("patch", {"suspend": False}),
    ]
    assert ops[3]["body"]["differsFrom"] == before["status"]["submissionID"]
    # Run on both backends: test_scenarios_on_both.test_resubmit_suspends_and_resumes_...
