"""The Apache operator's SparkApplication status, read as its own sources write it.

The statuses below follow ApplicationStatus.appendNewState / terminateOrRestart
(apache/spark-kubernetes-operator, spark-operator-api): one stateTransitionHistory keyed by a
counter, an attempt per Submitted/ScheduledToRestart, attempt info with restart counters.
"""

from __future__ import annotations

from kubectl_spark.core import apache
from kubectl_spark.core.analyze import analyze
from tests.apache_objects import RESTARTED, TIMED_OUT, apache_attempt, sparkapp, state
from tests.core_pods import NOW, printed, typed_snapshot


def test_a_retry_after_an_infrastructure_failure_is_one_application_with_its_verdict() -> None:
    owner = sparkapp([*TIMED_OUT, *RESTARTED], attempt=1, restarts=1, failures=1)
    pods = apache_attempt(1, "2026-03-01T00:10:00Z")
    (app,) = analyze(typed_snapshot(pods=pods, apacheapps=[owner], now=NOW)).apps
    assert (app.source, app.owner, app.state) == ("apache-operator", "pi", "Running")
    first, second = app.attempts
    assert (first.driver_pod, first.state, first.created_at, first.ended_at) == (
        "pi-0-driver",
        "Failed",
        "2026-03-01T00:00:00Z",
        "2026-03-01T00:05:01Z",
    )
    assert first.reason is not None
    assert (first.reason.code, first.reason.category) == ("DriverStartTimedOut", "cluster")
    assert any(
        e.startswith("SparkApplication status.stateTransitionHistory[2]: DriverStartTimedOut")
        for e in first.reason.evidence
    )
    assert (second.driver_pod, second.state) == ("pi-1-driver", "Running")
    view = printed(app)["operator"]
    assert view["state"] == "RunningHealthy" and view["attemptId"] == 1
    assert view["restart"].startswith("OnInfrastructureFailure (after SchedulingFailure")
    assert "1 of 3 restarts used" in view["restart"]
    told = [(h.attempt, h.message) for h in app.history if h.kind == "OperatorState"]
    assert told[0] == (1, "SparkApplication Submitted (attempt id 0)")
    assert told[-1] == (
        2,
        "SparkApplication RunningHealthy (attempt id 1): Application is running healthy.",
    )


def test_a_failed_attempt_is_explained_by_the_driver_status_the_operator_kept() -> None:
    """Its Failed names no cause; the lastObservedDriverStatus it kept still has the exit code."""
    observed = {
        "phase": "Failed",
        "containerStatuses": [
            {
                "name": "spark-kubernetes-driver",
                "state": {"terminated": {"exitCode": 52, "reason": "Error"}},
            }
        ],
    }
    failed = state(
        "Failed", "2026-03-01T00:03:00Z", "Driver has one or more failed…",
        lastObservedDriverStatus=observed,
    )  # fmt: skip
    history = [*TIMED_OUT[:2], state("DriverStarted", "2026-03-01T00:00:10Z"), failed]
    released = state("ResourceReleased", "2026-03-01T00:03:02Z")
    owner = sparkapp([*history, released], policy="Never")
    (app,) = analyze(typed_snapshot(apacheapps=[owner], now=NOW)).apps
    assert app.state == "Failed"
    (only,) = app.attempts
    assert only.reason is not None and only.reason.code == "JvmOutOfMemory"
    assert only.reason.category == "app"
    assert "its lastObservedDriverStatus was classified" in only.reason.evidence[-1]
    assert printed(app)["operator"]["restart"] == "Never (the operator does not restart it)"


def test_trimmed_history_and_terminal_states() -> None:
    """With trimming on, the previous attempt's states are in previousAttemptSummary."""
    owner = sparkapp(RESTARTED, attempt=1, restarts=1, trimmed=TIMED_OUT)
    assert [(s.attempt_id, s.states[-1].summary) for s in apache.spans(owner)] == [
        (0, "DriverStartTimedOut"),
        (1, "RunningHealthy"),
    ]
    done = sparkapp(
        [
            state("Submitted", "2026-03-01T00:00:00Z"),
            state("Succeeded", "2026-03-01T00:09:00Z"),
            state("ResourceReleased", "2026-03-01T00:09:01Z"),
        ]
    )
    assert apache.app_state(done) == "Succeeded"
    (app,) = analyze(typed_snapshot(apacheapps=[done], now=NOW)).apps
    assert [(a.state, a.reason.code if a.reason else None) for a in app.attempts] == [
        ("Succeeded", "Completed")
    ]
    cancelled = sparkapp(
        [
            state("Submitted", "2026-03-01T00:00:00Z"),
            state("ResourceReleased", "2026-03-01T00:01:00Z"),
        ]
    )
    assert apache.app_state(cancelled) == "Unknown"
    assert apache.app_state(sparkapp([state("ScheduledToRestart", "2026-03-01T00:00:00Z")])) == (
        "Pending"
    )
