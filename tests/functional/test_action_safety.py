"""Issue 24's sharp edges, through the real entry point: an action names its attempt, and a
plan's YAML is plain."""

from __future__ import annotations

import json

import pytest

from tests.command_line import run


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
    # The merge patch replaces the list: every taint the node had is in it, as the API wrote it
    had = node["spec"].get("taints") or []
    assert had and taint["body"]["spec"]["taints"][: len(had)] == had


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
    """Per mechanism. New pods of the fenced attempt are refused by owner only: never by app id,
    which a driver Job's attempts share (s2), nor by executor name prefix, which a later attempt
    may reuse (issue 46); its connections (CONNECT) as well as its writes."""
    c = played("s2-partition")
    code, out, err = run(capsys, c, "fence", "networkwordcount/1", "--dry-run", "-o", "json")
    assert code == 0, err
    plan = json.loads(out)
    said = " | ".join(plan["guarantees"])
    for mechanism in ("admission policy", "NetworkPolicy:", "Lease:", "force-kill"):
        assert mechanism in said, said
    assert "get, list and watch pass no admission" in said and "StatefulSet or Deployment" in said
    policy = plan["operations"][0]["body"]
    (matched,) = policy["spec"]["matchConstraints"]["resourceRules"]
    assert "CONNECT" in matched["operations"], matched
    rules = [v["expression"] for v in policy["spec"]["validations"]]
    assert not any("spark-app-selector" in r for r in rules)
    assert not any("startsWith(" in r for r in rules), rules
    assert all(v["reason"] == "Forbidden" for v in policy["spec"]["validations"])


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
