"""Actions that finish what they start (issue 46), on the emulator and on a real control plane.

A force-kill that meets the garbage collector racing it, and actions stopped half-way, run
again: each ends 0 with the attempt's pods gone, including those on a lost node, whose
graceful deletion that node's kubelet never confirms.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kubectl_spark.app.act import KillOptions, plan_fence, plan_force_kill
from kubectl_spark.app.view import Wanted, load
from kubectl_spark.core.model import App, Attempt
from kubectl_spark.kube import actions
from kubectl_spark.kube.client import Connection, connect
from kubectl_spark.sim import scenario as scenarios
from tests.stages import Stage

pytestmark = pytest.mark.slow
APP = "etl"
# The driver on node-a, one executor on each of node-b and node-c (each fits one executor's
# CPU request, node-a none); node-c will power off.
SCENARIO = {
    "name": "converge",
    "nodes": [
        {"name": "node-a", "cpu": 2},
        {"name": "node-b", "cpu": 6},
        {"name": "node-c", "cpu": 6},
    ],
    "apps": [
        {
            "name": APP,
            "launch": "submit",
            "executors": 2,
            "executor_cpu": "4",
            "driver_node": "node-a",
        }
    ],
}


def _staged(staged: Any) -> tuple[Stage, dict[str, Any]]:
    """The application running; node-c off and NotReady: (stage, the executor on node-c)."""
    s: Stage = staged(scenarios.parse(SCENARIO, "converge"))
    s.do("submit", APP)
    s.until(
        "the driver and its two executors running",
        lambda: (
            len(s.running(spark_role="driver")) == 1 and len(s.running(spark_role="executor")) == 2
        ),
    )
    nodes = {p["spec"]["nodeName"] for p in s.running(spark_role="executor")}
    assert nodes == {"node-b", "node-c"}, nodes
    (lost,) = [p for p in s.running(spark_role="executor") if p["spec"]["nodeName"] == "node-c"]
    s.do("shutdown", "node-c")
    s.until("node-c NotReady", lambda: _not_ready(s, "node-c"))
    return s, lost


def _not_ready(s: Stage, node: str) -> bool:
    found = s.world.client.get(f"/api/v1/nodes/{node}")
    return any(
        c["type"] == "Ready" and c["status"] != "True"
        for c in (found or {}).get("status", {}).get("conditions") or []
    )


def _attempt(api: Any) -> tuple[Any, App, Attempt]:
    view = load(api, Wanted(namespace="default", spark_api=False))
    (app,) = [a for a in view.analysis.apps if a.name == APP]
    return view.snapshot, app, app.attempts[-1]


def _uids(s: Stage) -> set[str]:
    return {p["metadata"]["uid"] for p in s.pods(spark_app_name=APP)}


def test_force_kill_raced_by_the_garbage_collector_finishes(staged: Any, capsys: Any) -> None:
    """The driver goes first (its cascade takes the executors on healthy nodes): every later
    step about a pod already gone is "already done", and the executor on the lost node, which
    the cascade leaves Terminating for good, is deleted with grace 0 — first of all."""
    s, lost = _staged(staged)
    with connect(Connection(kubeconfig=str(s.kubeconfig))) as api:
        snapshot, app, attempt = _attempt(api)
        plan = plan_force_kill(api, snapshot, app, attempt, KillOptions(force=True))
        deletes = [op for op in plan.operations if op.verb == "delete" and op.resource == "pods"]
        assert [op.name for op in deletes][:2] == [lost["metadata"]["name"], attempt.driver_pod]
        # The garbage collector (or anyone) got there first: the driver is gone, and with it
        # the executors its kubelets could confirm; the lost node's stays Terminating.
        s.world.client.delete(f"/api/v1/namespaces/default/pods/{attempt.driver_pod}")
        s.until(
            "the executor on node-b gone and node-c's Terminating",
            lambda: (
                [p["metadata"]["name"] for p in s.pods(spark_role="executor")]
                == [lost["metadata"]["name"]]
                and bool(s.pods(spark_role="executor")[0]["metadata"].get("deletionTimestamp"))
            ),
        )
        report = actions.apply(api, plan)
    assert report.failed is None, report.failed
    already = {op.name for op, _ in report.already if op.verb == "delete"}
    assert attempt.driver_pod in already, report.already
    s.until("every pod of the attempt gone", lambda: not _uids(s))


def test_force_kill_stopped_after_the_driver_is_finished_by_running_it_again(
    staged: Any, capsys: Any
) -> None:
    """Its driver pod gone, the attempt is what is left of it: the executor on the lost node."""
    s, lost = _staged(staged)
    driver = s.running(spark_role="driver")[0]["metadata"]["name"]
    s.world.client.delete(f"/api/v1/namespaces/default/pods/{driver}", grace=0)
    s.until(
        "only the lost node's executor left, Terminating",
        lambda: (
            [p["metadata"]["name"] for p in s.pods(spark_app_name=APP)]
            == [lost["metadata"]["name"]]
        ),
    )
    code, out, err = s.cli(capsys, "force-kill", f"{APP}/1", "--dry-run")
    assert code == 0 and "unreachable" not in out + err, out + err
    assert f"delete pods default/{lost['metadata']['name']}" in out, out
    code, out, err = s.cli(capsys, "force-kill", f"{APP}/1", "--yes")
    assert code == 0, out + err
    s.until("every pod of the attempt gone", lambda: not _uids(s))


@pytest.mark.parametrize("stopped_after", ["validatingadmissionpolicybindings", "networkpolicies"])
def test_a_fence_stopped_half_way_is_finished_by_running_it_again(
    staged: Any, capsys: Any, stopped_after: str
) -> None:
    """Stopped once its admission policy and binding existed (the pods not yet marked), or
    once its NetworkPolicy existed too (the pods marked, the executors still running): the same
    fence again finds what it made, made as asked, and goes on. The second half-done state is
    shown (UnfinishedAction) with the command that finishes it."""
    s, _ = _staged(staged)
    with connect(Connection(kubeconfig=str(s.kubeconfig))) as api:
        snapshot, app, attempt = _attempt(api)
        plan = plan_fence(api, snapshot, app, attempt, force=True)
        cut = next(i for i, op in enumerate(plan.operations) if op.resource == stopped_after)
        half = actions.apply(api, dataclasses.replace(plan, operations=plan.operations[: cut + 1]))
        assert half.failed is None and len(half.applied) == cut + 1
    unfinished = [a for a in s.app(capsys, APP)["alerts"] if a["type"] == "UnfinishedAction"]
    if stopped_after == "networkpolicies":
        (alert,) = unfinished
        assert f"kubectl spark fence {APP}/1" in alert["message"], alert
    code, out, err = s.cli(capsys, "fence", f"{APP}/1", "--force", "--yes")
    assert code == 0, out + err
    assert f"already done: create {stopped_after}" in out and "already exists as asked" in out, out
    after = s.app(capsys, APP)
    assert after["attempts"][0]["fenced"] is True, after["attempts"][0]
    assert not [a for a in after["alerts"] if a["type"] == "UnfinishedAction"], after["alerts"]
    code, out, err = s.cli(capsys, "fence", f"{APP}/1", "--force", "--yes")
    assert code == 0 and "nothing to do" in out and "already fenced" in out, out + err


def test_describe_shows_a_half_done_force_kill_and_the_command_that_finishes_it(
    staged: Any, capsys: Any
) -> None:
    """A run that marked the attempt's pods and stopped before deleting them (a lost
    connection, say): ls and describe say so and name the command; running it finishes."""
    s, _ = _staged(staged)
    with connect(Connection(kubeconfig=str(s.kubeconfig))) as api:
        snapshot, app, attempt = _attempt(api)
        plan = plan_force_kill(api, snapshot, app, attempt, KillOptions(force=True))
        marks = tuple(op for op in plan.operations if op.verb == "patch" and op.resource == "pods")
        half = actions.apply(api, dataclasses.replace(plan, operations=marks))
        assert half.failed is None and len(half.applied) == 3
    (alert,) = [a for a in s.app(capsys, APP)["alerts"] if a["type"] == "UnfinishedAction"]
    assert alert["attempts"] == [1] and f"kubectl spark force-kill {APP}/1" in alert["message"]
    code, out, err = s.cli(capsys, "describe", APP)
    assert code == 0 and f"kubectl spark force-kill {APP}/1" in out, out + err
    code, out, err = s.cli(capsys, "force-kill", f"{APP}/1", "--force", "--yes")
    assert code == 0, out + err
    s.until("every pod of the attempt gone", lambda: not _uids(s))
