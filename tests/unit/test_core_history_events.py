"""Where an Event the API aggregated sits in a timeline, and what its entry says of the repeats."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_spark.core.history import _aggregated
from tests.core_pods import typed_snapshot

A, B = "2026-03-01T00:00:00Z", "2026-03-01T00:05:00Z"


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        ({"count": 1, "firstTimestamp": A, "lastTimestamp": A}, (A, "")),
        ({"lastTimestamp": B}, (B, "")),  # no count: once
        ({"count": 3, "firstTimestamp": A, "lastTimestamp": B}, (A, f" (x3, the last at {B})")),
        ({"count": 2, "firstTimestamp": A, "lastTimestamp": A}, (A, " (x2)")),
        # events.k8s.io's form, as the core API shows it: eventTime and a series
        (
            {
                "eventTime": "2026-03-01T00:00:00.123456Z",
                "series": {"count": 4, "lastObservedTime": B},
            },
            (A, f" (x4, the last at {B})"),
        ),
        ({"count": 5, "lastTimestamp": B}, (B, " (x5)")),  # no first time: at the last one
        (
            {"count": "x", "firstTimestamp": A, "lastTimestamp": B, "series": []},
            (B, ""),
        ),  # malformed
    ],
)
def test_an_aggregated_event_sits_at_its_first_time(event: dict[str, Any], expected: Any) -> None:
    assert _aggregated(event) == expected


def test_a_waiting_executor_is_in_the_timeline_from_its_first_warning() -> None:
    """An executor no node fits lost nothing, yet it is the story of the attempt: the timeline
    says it waits, and since the scheduler's first FailedScheduling (not its last)."""
    from kubectl_spark.core.analyze import analyze
    from tests.core_pods import mk, ref

    labels = {"spark-app-selector": "spark-1", "spark-app-name": "etl"}
    driver = mk("etl-driver", "driver", A, labels=labels)
    stuck = mk(
        "etl-exec-1",
        "executor",
        A,
        labels={**labels, "spark-exec-id": "1"},
        owner=ref("Pod", "etl-driver", "uid-etl-driver"),
        phase="Pending",
        node="",
    )
    stuck["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
    ]
    event = {
        "metadata": {"name": "e1", "namespace": "ns", "uid": "ev-1"},
        "involvedObject": {"kind": "Pod", "name": "etl-exec-1", "namespace": "ns"},
        "reason": "FailedScheduling",
        "type": "Warning",
        "message": "0/3 nodes are available: 3 Insufficient memory.",
        "count": 7,
        "firstTimestamp": "2026-03-01T00:01:00Z",
        "lastTimestamp": B,
    }
    (app,) = analyze(typed_snapshot(pods=[driver, stuck], events=[event])).apps
    (executor,) = app.attempts[0].executors
    assert executor.reason is None and executor.waiting is not None
    (entry,) = [h for h in app.history if h.kind == "Waiting"]
    assert (entry.time, entry.attempt, entry.executor) == ("2026-03-01T00:01:00Z", 1, "1")
    assert entry.message.startswith(f"executor 1 waits: {executor.waiting.code} — ")
    assert "Insufficient memory" in entry.message
