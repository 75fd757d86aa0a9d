"""The Apache operator's SparkApplications and their pods as the core tests build them: its state
history (state, TIMED_OUT, RESTARTED), an application (sparkapp), one attempt's pods."""

from __future__ import annotations

from typing import Any

from tests.core_pods import mk, ref


def state(summary: str, at: str, message: str = "", **more: Any) -> dict[str, Any]:
    return {"currentStateSummary": summary, "lastTransitionTime": at, "message": message, **more}


def sparkapp(
    history: list[dict[str, Any]],
    *,
    attempt: int = 0,
    restarts: int = 0,
    failures: int = 0,
    policy: str = "OnInfrastructureFailure",
    trimmed: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    offset = len(trimmed or [])
    status: dict[str, Any] = {
        "currentState": history[-1],
        "stateTransitionHistory": {str(offset + i): s for i, s in enumerate(history)},
        "currentAttemptSummary": {
            "attemptInfo": {
                "id": attempt,
                "restartCounter": restarts,
                "failureRestartCounter": failures,
                "schedulingFailureRestartCounter": 0,
            }
        },
    }
    if trimmed:
        status["previousAttemptSummary"] = {
            "attemptInfo": {"id": attempt - 1},
            "stateTransitionHistory": {str(i): s for i, s in enumerate(trimmed)},
        }
    return {
        "apiVersion": "spark.apache.org/v1",
        "kind": "SparkApplication",
        "metadata": {
            "name": "pi",
            "namespace": "ns",
            "uid": "uid-app",
            "creationTimestamp": "2026-03-01T00:00:00Z",
        },
        "spec": {
            "applicationTolerations": {
                "restartConfig": {"restartPolicy": policy, "maxRestartAttempts": 3}
            }
        },
        "status": status,
    }


TIMED_OUT = [
    state("Submitted", "2026-03-01T00:00:00Z"),
    state("DriverRequested", "2026-03-01T00:00:01Z"),
    state("DriverStartTimedOut", "2026-03-01T00:05:01Z", "The driver has not responded…"),
]


RESTARTED = [
    state("ScheduledToRestart", "2026-03-01T00:05:03Z"),
    state("DriverRequested", "2026-03-01T00:10:00Z"),
    state("DriverStarted", "2026-03-01T00:10:20Z"),
    state("DriverReady", "2026-03-01T00:10:30Z"),
    state("RunningHealthy", "2026-03-01T00:10:40Z", "Application is running healthy."),
]


def apache_attempt(attempt: int, created: str, phase: str = "Running") -> list[dict[str, Any]]:
    """One attempt as the Apache operator makes it: app id and pod names per attempt."""
    app_id = f"pi-{attempt}"
    labels = {"spark.operator/spark-app-name": "pi", "spark-app-selector": app_id}
    driver = mk(f"{app_id}-driver", "driver", created, labels=labels, phase=phase)
    executor = mk(
        f"{app_id}-exec-1",
        "executor",
        created,
        labels={**labels, "spark-exec-id": "1"},
        owner=ref("Pod", f"{app_id}-driver", f"uid-{app_id}-driver"),
        phase=phase,
    )
    return [driver, executor]
