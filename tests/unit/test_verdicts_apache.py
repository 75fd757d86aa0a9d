"""Issue 50, point 7: the Apache operator's own words (apache/spark-kubernetes-operator).

``SparkAppSubmissionWorker.generateSparkAppId``: an attempt's app id is ``<name>-<attemptId>``,
or, when that is longer than DEFAULT_ID_LENGTH_LIMIT (46), its first 9 characters, "-", and the
first 36 base-36 digits of SHA-256("<namespace>/<name>/<attemptId>"); every resource of the
attempt is named from it. The vector below was computed by that algorithm run on Java 17.
"""

from __future__ import annotations

from typing import Any

from kubectl_spark.core.analyze import analyze
from kubectl_spark.knowledge.operator_names import app_id_of
from tests.apache_objects import apache_attempt, sparkapp, state
from tests.core_pods import NOW, mk, printed, ref, typed_snapshot

LONG = "a-very-long-spark-application-name-for-the-nightly-run"
HASHED = "a-very-lo-fn2hdf4op6wf1d6wts1recbco4drr2oy41us"


def test_the_operators_app_id_is_hashed_when_too_long() -> None:
    """SparkAppSubmissionWorker.generateSparkAppId, run on Java 17 for this vector."""
    assert app_id_of("spark-prod", LONG, 0) == HASHED
    assert app_id_of("default", "short", 3) == "short-3"


def attempt_pods(app_id: str, name: str) -> list[dict[str, Any]]:
    labels = {"spark.operator/spark-app-name": name, "spark-app-selector": app_id}
    driver = mk(f"{app_id}-driver", "driver", "2026-03-01T00:00:05Z", labels=labels)
    executor = mk(
        f"{app_id}-exec-1",
        "executor",
        "2026-03-01T00:00:10Z",
        labels={**labels, "spark-exec-id": "1"},
        owner=ref("Pod", f"{app_id}-driver", f"uid-{app_id}-driver"),
    )
    for pod in (driver, executor):
        pod["metadata"]["namespace"] = "spark-prod"
    return [driver, executor]


def test_a_long_named_application_has_no_phantom_attempt() -> None:
    """Read as ``<name>-0``, the running attempt's pods were not found and a second, gone
    attempt was made up from the operator's history."""
    owner = sparkapp(
        [
            state("Submitted", "2026-03-01T00:00:00Z"),
            state("DriverRequested", "2026-03-01T00:00:01Z"),
            state("RunningHealthy", "2026-03-01T00:00:30Z"),
        ]
    )
    owner["metadata"].update(name=LONG, namespace="spark-prod")
    (app,) = analyze(
        typed_snapshot(pods=attempt_pods(HASHED, LONG), apacheapps=[owner], now=NOW)
    ).apps
    assert [(a.driver_pod, a.state) for a in app.attempts] == [(f"{HASHED}-driver", "Running")]
    assert app.app_id == HASHED


def ended_with(*history: dict[str, Any]) -> dict[str, Any]:
    return sparkapp([state("Submitted", "2026-03-01T00:00:00Z"), *history])


def driver_of(pods: list[dict[str, Any]], **status: Any) -> list[dict[str, Any]]:
    pods[0]["status"] = status
    return pods


def test_the_operators_verdict_is_used_while_the_driver_pod_is_still_there() -> None:
    """DriverStartTimedOut (AppDriverTimeoutObserver) on a driver still Pending on its image:
    the operator ended the attempt; the image pull failure it waited on is the evidence."""
    owner = ended_with(
        state("DriverRequested", "2026-03-01T00:00:01Z"),
        state("DriverStartTimedOut", "2026-03-01T00:05:01Z", "The driver has not started"),
    )
    pods = driver_of(
        apache_attempt(0, "2026-03-01T00:00:02Z"),
        phase="Pending",
        containerStatuses=[
            {"name": "spark-kubernetes-driver",
             "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling"}}}
        ],
    )  # fmt: skip
    (app,) = analyze(typed_snapshot(pods=pods, apacheapps=[owner], now=NOW)).apps
    reason = app.attempts[0].reason
    assert reason is not None and (reason.code, reason.category) == (
        "DriverStartTimedOut",
        "cluster",
    )
    assert any("ImagePullBackOff" in e for e in reason.evidence), reason.evidence


def test_exit_0_before_the_spark_context_was_ready_is_a_failure() -> None:
    """The operator's PodUtils: a driver that "exited 0 without SparkContext / SparkSession
    initialization" failed; its Failed state kept that exit (lastObservedDriverStatus)."""
    exited = {
        "phase": "Succeeded",
        "containerStatuses": [
            {"name": "spark-kubernetes-driver",
             "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
        ],
    }  # fmt: skip
    owner = ended_with(
        state("DriverRequested", "2026-03-01T00:00:01Z"),
        state("DriverStarted", "2026-03-01T00:00:20Z"),
        state("Failed", "2026-03-01T00:00:40Z", "Driver exited", lastObservedDriverStatus=exited),
    )
    pods = driver_of(apache_attempt(0, "2026-03-01T00:00:02Z"), **exited)
    (app,) = analyze(typed_snapshot(pods=pods, apacheapps=[owner], now=NOW)).apps
    reason = app.attempts[0].reason
    assert reason is not None
    assert (reason.code, reason.exit_code, reason.counts_as_failure) == ("ExitCode", 0, True)
    assert "before its SparkContext was ready" in reason.message


def test_a_driver_evicted_for_its_own_storage_keeps_the_pods_precise_verdict() -> None:
    """DriverEvicted names no cause; the kubelet's message says the pod outgrew its own limit."""
    message = 'Container spark-kubernetes-driver exceeded its local ephemeral storage limit "1Gi". '
    owner = ended_with(
        state("DriverRequested", "2026-03-01T00:00:01Z"),
        state("DriverEvicted", "2026-03-01T00:03:00Z"),
    )
    pods = driver_of(
        apache_attempt(0, "2026-03-01T00:00:02Z"), phase="Failed", reason="Evicted", message=message
    )
    (app,) = analyze(typed_snapshot(pods=pods, apacheapps=[owner], now=NOW)).apps
    reason = app.attempts[0].reason
    assert reason is not None and (reason.code, reason.category) == ("Evicted", "app")
    assert any("DriverEvicted" in e for e in reason.evidence), reason.evidence


def test_the_restart_budget_says_its_backoffs_and_counter_reset() -> None:
    """RestartConfig: restartBackoffMillisForFailure / ForSchedulingFailure (each falling back
    to the one before), restartCounterResetMillis (-1: never)."""
    owner = ended_with(state("DriverRequested", "2026-03-01T00:00:01Z"))
    owner["spec"]["applicationTolerations"]["restartConfig"].update(
        restartPolicy="OnFailure",
        restartBackoffMillisForFailure=60000,
        restartCounterResetMillis=3600000,
    )
    (app,) = analyze(typed_snapshot(apacheapps=[owner], now=NOW)).apps
    view = printed(app)["operator"]
    assert view["restartBackoffSecondsForFailure"] == 60
    assert view["restartBackoffSecondsForSchedulingFailure"] is None
    assert view["restartCounterResetSeconds"] == 3600
    assert "60s after a failure" in view["restart"]
    assert "the counters reset after an attempt that ran 3600s" in view["restart"]


def test_a_scheduling_failure_from_an_invalid_template_is_the_apps() -> None:
    """AppInitStep: SCHEDULE_FAILURE_MESSAGE + " StackTrace: " + the exception; the API server's
    422 (fabric8 quotes its Status) says the spec is wrong, not the cluster's capacity."""
    said = (
        "Failed to request driver from scheduler backend. StackTrace: "
        "io.fabric8.kubernetes.client.KubernetesClientException: Failure executing: POST at: "
        'https://10.96.0.1/api/v1/namespaces/ns/pods. Message: Pod "pi-0-driver" is invalid: '
        "spec.containers[0].image: Required value. Received status: Status(code=422, "
        "reason=Invalid)"
    )
    owner = ended_with(state("SchedulingFailure", "2026-03-01T00:00:02Z", said))
    (app,) = analyze(typed_snapshot(apacheapps=[owner], now=NOW)).apps
    reason = app.attempts[0].reason
    assert reason is not None and (reason.code, reason.category) == ("SchedulingFailure", "app")
    quota = ended_with(state("SchedulingFailure", "2026-03-01T00:00:02Z", "exceeded quota"))
    (other,) = analyze(typed_snapshot(apacheapps=[quota], now=NOW)).apps
    told = other.attempts[0].reason
    assert told is not None and told.category == "cluster"


def test_a_driver_container_that_restarted_is_failed_as_the_operator_says() -> None:
    """The operator's PodUtils count a driver whose container restarted as failed; its pod still
    runs (the container came back), and the attempt is over by the operator's Failed."""
    restarted = {
        "phase": "Running",
        "containerStatuses": [
            {"name": "spark-kubernetes-driver", "restartCount": 1,
             "state": {"running": {"startedAt": "2026-03-01T00:02:00Z"}},
             "lastState": {"terminated": {"exitCode": 52, "reason": "Error"}}}
        ],
    }  # fmt: skip
    failed_status = {
        "phase": "Failed",
        "containerStatuses": [
            {"name": "spark-kubernetes-driver",
             "state": {"terminated": {"exitCode": 52, "reason": "Error"}}}
        ],
    }  # fmt: skip
    owner = ended_with(
        state("DriverRequested", "2026-03-01T00:00:01Z"),
        state("DriverReady", "2026-03-01T00:00:30Z"),
        state("Failed", "2026-03-01T00:02:01Z", "", lastObservedDriverStatus=failed_status),
    )
    pods = driver_of(apache_attempt(0, "2026-03-01T00:00:02Z"), **restarted)
    (app,) = analyze(typed_snapshot(pods=pods, apacheapps=[owner], now=NOW)).apps
    reason = app.attempts[0].reason
    assert reason is not None and (reason.code, reason.exit_code) == ("JvmOutOfMemory", 52)
    assert any("stateTransitionHistory" in e for e in reason.evidence)
