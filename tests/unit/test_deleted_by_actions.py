"""Executors an action deleted are still told once their pods are gone: from its own Events.

Real Spark 4.1.1 says of such an executor only that it "was not found in the cluster … Marking
this executor as failed" (ExecutorPodsLifecycleManager.onNewSnapshots, exitCausedByApp false) or
that it "was deleted by a user or the framework"; a fenced driver on a cut-off node cannot even be
asked (tests/realspark/test_split_brain.py plays it with Spark's own JVMs).
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from kubectl_spark.core import plans, raw
from kubectl_spark.core.analyze import analyze
from kubectl_spark.core.incremental import Change, LiveAnalysis
from kubectl_spark.core.model import App, Attempt
from kubectl_spark.knowledge.labels import EXECUTOR_DELETED
from tests.core_pods import NOW, three_apps, typed_snapshot

AT = "2026-03-01T00:30:00Z"


def app_named(analysis: Any, name: str) -> App:
    return next(a for a in analysis.apps if a.name == name)


def fenced(app: App, attempt: Attempt) -> plans.Plan:
    return plans.fence_plan(
        app,
        attempt,
        lease=None,
        allow=None,
        keep_executors=False,
        now=AT,
        actor="oncall",
        force=True,
    )


def applied_events(plan: plans.Plan) -> list[dict[str, Any]]:
    """The Events the plan creates, as the API server stores them (a uid of their own)."""
    out = []
    for op in plan.operations:
        if op.resource == "events" and op.body and op.body["reason"] == EXECUTOR_DELETED:
            body: Any = copy.deepcopy(dict(op.body))
            body["metadata"]["uid"] = f"ev-{op.name}"
            out.append(body)
    return out


def test_the_fence_leaves_an_event_on_each_live_executor_before_deleting_it() -> None:
    """Named by the pod's uid, tied to its driver pod (``related``), with Spark's executor id."""
    app = app_named(analyze(typed_snapshot(pods=three_apps(), now=NOW)), "a")
    attempt = app.attempts[-1]
    plan = fenced(app, attempt)
    ops = [(op.verb, op.resource, op.name) for op in plan.operations]
    for executor in attempt.executors:
        made = ops.index(("create", "events", next(
            op.name for op in plan.operations
            if raw.text(op.body, "involvedObject", "uid") == executor.uid
        )))  # fmt: skip
        assert made < ops.index(("delete", "pods", executor.pod))
    (event, *_) = applied_events(plan)
    assert event["involvedObject"]["uid"] == "uid-a-exec-1"
    assert event["related"] == {
        "kind": "Pod",
        "apiVersion": "v1",
        "namespace": "ns",
        "name": "a-driver",
        "uid": "uid-a-driver",
    }
    assert event["metadata"]["annotations"]["kubectl-spark.io/executor-id"] == "1"
    assert event["message"] == "executor 1 of attempt 1 deleted by kubectl spark fence (oncall)"


def test_an_executor_that_already_ended_keeps_its_own_loss() -> None:
    """Deleting the pod of an executor that failed first does not make it the user's loss."""
    before = three_apps()
    failed = next(p for p in before if p["metadata"]["name"] == "a-exec-2")
    failed["status"] = {
        "phase": "Failed",
        "containerStatuses": [
            {
                "name": "spark-kubernetes-executor",
                "state": {"terminated": {"exitCode": 52, "reason": "Error"}},
            }
        ],
    }
    app = app_named(analyze(typed_snapshot(pods=before, now=NOW)), "a")
    told = [e["involvedObject"]["name"] for e in applied_events(fenced(app, app.attempts[-1]))]
    assert told == ["a-exec-1"]


def gone_after_fence() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(pods before, pods after, the Events left): app a fenced, its executors deleted."""
    before = three_apps()
    app = app_named(analyze(typed_snapshot(pods=before, now=NOW)), "a")
    events = applied_events(fenced(app, app.attempts[-1]))
    after = [p for p in before if not p["metadata"]["name"].startswith("a-exec-")]
    return before, after, events


def test_describe_tells_the_deleted_executors_from_the_events() -> None:
    """As a kept copy of the pod would (its action annotation): the user's, no failure."""
    _, after, events = gone_after_fence()
    attempt = app_named(analyze(typed_snapshot(pods=after, events=events, now=NOW)), "a").attempts[
        -1
    ]
    assert [(e.id, e.pod, e.state, e.source) for e in attempt.executors] == [
        ("1", "a-exec-1", "Gone", "events"),
        ("2", "a-exec-2", "Gone", "events"),
    ]
    reason = attempt.executors[0].reason
    assert reason is not None
    assert (reason.category, reason.code, reason.counts_as_failure) == (
        "user",
        "DeletedByUser",
        False,
    )
    assert reason.counts_toward_max_failures is False
    assert reason.message == "deleted by kubectl spark fence"
    assert reason.evidence[0].startswith(f"event {EXECUTOR_DELETED}: executor 1 of attempt 1")
    assert attempt.executors[0].ended_at == AT


def test_an_event_about_another_pod_of_the_same_driver_name_is_not_this_attempts() -> None:
    _, after, events = gone_after_fence()
    for event in events:
        event["related"]["uid"] = "uid-of-an-earlier-a-driver"
    attempt = app_named(analyze(typed_snapshot(pods=after, events=events, now=NOW)), "a").attempts[
        -1
    ]
    assert attempt.executors == ()


def test_the_incremental_analysis_reads_them_as_the_full_one() -> None:
    before, after, events = gone_after_fence()
    live = LiveAnalysis()
    live.update(typed_snapshot(pods=before, now=NOW), None)
    changes: dict[str, dict[str, Change]] = {
        "pods": {
            p["metadata"]["uid"]: Change(p, deleted=True)
            for p in before
            if p["metadata"]["name"].startswith("a-exec-")
        },
        "events": {e["metadata"]["uid"]: Change(e) for e in events},
    }
    snapshot = typed_snapshot(pods=after, events=events, now=NOW)
    fast = live.update(snapshot, changes)
    full = analyze(snapshot)
    assert [dataclasses.asdict(a) for a in fast.apps] == [dataclasses.asdict(a) for a in full.apps]
    assert len(app_named(fast, "a").attempts[-1].executors) == 2


def test_force_kill_leaves_them_too() -> None:
    app = app_named(analyze(typed_snapshot(pods=three_apps(), now=NOW)), "a")
    plan = plans.force_kill_plan(
        app,
        app.attempts[-1],
        plans.KillContext(),
        force=True,
        detach_volumes=False,
        out_of_service=False,
        no_replace=False,
        now=AT,
        actor="oncall",
    )
    assert [e["message"] for e in applied_events(plan)] == [
        f"executor {i} of attempt 1 deleted by kubectl spark force-kill (oncall)" for i in (1, 2)
    ]
