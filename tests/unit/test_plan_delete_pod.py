"""The TUI's ctrl+d plan (core/plans/delete_pod.py): one executor's pod, by UID, and a record."""

from __future__ import annotations

from kubectl_spark.core.model import App, Attempt, Executor
from kubectl_spark.core.plans import delete_pod_plan


def _attempt(source: str = "cluster") -> Attempt:
    executor = Executor(
        "3",
        "etl-exec-3",
        "u3" if source == "cluster" else "",
        "node-a",
        "Running",
        "Running",
        0,
        None,
        source=source,
    )
    return Attempt(
        1,
        "etl-driver",
        "ud",
        "node-a",
        "Running",
        "Running",
        None,
        None,
        None,
        0,
        False,
        None,
        executors=(executor,),
    )


def test_the_pod_is_pinned_by_uid_and_recorded_first() -> None:
    app = App("spark", "etl", "spark-1", "pod", "Running", None)
    plan = delete_pod_plan(app, _attempt(), "3", now="2026-12-05T12:00:00Z", actor="me")
    assert not plan.refusal
    record, delete = plan.operations
    assert (record.verb, record.resource) == ("create", "events")
    assert (delete.verb, delete.name, delete.uid) == ("delete", "etl-exec-3", "u3")
    assert delete.body == {"propagationPolicy": "Background"}  # graceful: SIGTERM first


def test_an_executor_with_no_pod_left_is_refused() -> None:
    app = App("spark", "etl", "spark-1", "pod", "Running", None)
    plan = delete_pod_plan(app, _attempt("spark"), "3", now="t", actor="me")
    assert plan.refusal.startswith("executor 3 of etl/1 has no pod") and plan.operations == ()
    assert delete_pod_plan(app, _attempt(), "9", now="t", actor="me").refusal
