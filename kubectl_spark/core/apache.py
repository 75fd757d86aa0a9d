"""What the Apache Spark Kubernetes Operator's SparkApplication says of its own attempts.

The operator (apache/spark-kubernetes-operator, ``spark.apache.org``) records more than any other
Spark tool: ``status.stateTransitionHistory`` (every state with its time, message and the driver
pod's last observed status), ``currentAttemptSummary``/``previousAttemptSummary`` (attempt id and
restart counters) and failure states that already tell the cluster's fault from the app's. This
module reads them into plain values; ``analyze`` uses them for attempts whose pods are gone, the
application's state, the history and the restart budget.

The facts are from its sources (spark-operator-api, status/ and spec/):
- ApplicationStateSummary.java: the states, in order; ``infrastructureFailures`` (DriverStartTimedOut,
  ExecutorsStartTimedOut, SchedulingFailure) and ``failures`` (those, DriverEvicted, Failed,
  DriverReadyTimedOut); Submitted and ScheduledToRestart start an attempt.
- ApplicationStatus.terminateOrRestart: a restart increments the attempt id and the counters;
  ``maxRestartAttempts`` (3) is always checked, then ``maxRestartOnSchedulingFailure`` or
  ``maxRestartOnFailure`` for consecutive failures.
- RestartPolicy.java: Never (the default), Always, OnFailure, OnInfrastructureFailure.
- SparkAppSubmissionWorker.generateSparkAppId: an attempt's app id is ``<name>-<attemptId>``,
  hashed when longer than 46 characters (``app_id_of``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kubectl_spark.knowledge import times
from kubectl_spark.knowledge.operator_names import app_id_of

from . import raw
from .jsonvalue import JsonObject
from .losses import classify
from .model import Reason, ReasonCode
from .pod import Pod
from .reasons import PodContext

API_GROUP = "spark.apache.org"
INITIALIZING = ("Submitted", "ScheduledToRestart")
PENDING = ("Submitted", "ScheduledToRestart", "DriverRequested")
RUNNING = (
    "DriverStarted",
    "DriverReady",
    "InitializedBelowThresholdExecutors",
    "RunningHealthy",
    "RunningWithPartialCapacity",
    "RunningWithBelowThresholdExecutors",
)
INFRASTRUCTURE_FAILURES = ("DriverStartTimedOut", "ExecutorsStartTimedOut", "SchedulingFailure")
FAILURES = (*INFRASTRUCTURE_FAILURES, "DriverEvicted", "Failed", "DriverReadyTimedOut")
TERMINATED = ("ResourceReleased", "TerminatedWithoutReleaseResources")
ENDINGS = (*FAILURES, "Succeeded")  # the stopping states that end an attempt


@dataclass(frozen=True, slots=True)
class State:
    """One entry of ``stateTransitionHistory``: the operator's key orders them."""

    seq: int
    summary: str
    time: str | None  # RFC 3339
    message: str
    driver_status: Mapping[str, object] | None  # lastObservedDriverStatus: a PodStatus


@dataclass(frozen=True, slots=True)
class AttemptSpan:
    """The states of one attempt, from the one that started it (Submitted, ScheduledToRestart)."""

    attempt_id: int
    states: tuple[State, ...]

    @property
    def started(self) -> str | None:
        return self.states[0].time if self.states else None

    @property
    def ending(self) -> State | None:
        """The stopping state that ended it (a failure or Succeeded), None while it goes on."""
        return next((s for s in self.states if s.summary in ENDINGS), None)


@dataclass(frozen=True, slots=True)
class RestartBudget:
    """The restart policy and what is left of it, as ``terminateOrRestart`` will count."""

    policy: str
    max_restarts: int
    restarts: int
    failures_in_a_row: int
    scheduling_failures_in_a_row: int
    max_on_failure: int | None
    max_on_scheduling_failure: int | None
    backoff_seconds: float
    # RestartConfig (spark-operator-api): the backoff after a failure and after a scheduling
    # failure (each falls back to the one before it: getEffectiveRestartBackoffMillis), and the
    # run that resets every counter (restartCounterResetMillis; -1, the default: never).
    failure_backoff_seconds: float | None = None
    scheduling_backoff_seconds: float | None = None
    reset_after_seconds: float | None = None

    def text(self) -> str:
        if self.policy == "Never":
            return "Never (the operator does not restart it)"
        limits = [f"{self.restarts} of {self.max_restarts} restarts used"]
        if self.max_on_failure is not None:
            limits.append(f"{self.failures_in_a_row} of {self.max_on_failure} failures in a row")
        if self.max_on_scheduling_failure is not None:
            limits.append(
                f"{self.scheduling_failures_in_a_row} of {self.max_on_scheduling_failure} "
                "scheduling failures in a row"
            )
        restarts_on = {
            "Always": "after any end",
            "OnFailure": "after a failure",
            "OnInfrastructureFailure": "after SchedulingFailure, DriverStartTimedOut or "
            "ExecutorsStartTimedOut only",
        }.get(self.policy, "")
        backoff = f"; backoff {self.backoff_seconds:g}s"
        failure = self.failure_backoff_seconds
        scheduling = self.scheduling_backoff_seconds
        if failure is not None:
            backoff += f", {failure:g}s after a failure"
        if scheduling is not None:
            backoff += f", {scheduling:g}s after a scheduling failure"
        if self.reset_after_seconds is not None:
            backoff += (
                f"; the counters reset after an attempt that ran {self.reset_after_seconds:g}s "
                "(from DriverRequested)"
            )
        return f"{self.policy} ({restarts_on}): " + ", ".join(limits) + backoff


def is_apache(obj: object) -> bool:
    return raw.text(obj, "apiVersion").startswith(API_GROUP + "/")


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def _states(history: object) -> dict[int, State]:
    out: dict[int, State] = {}
    if not isinstance(history, dict):
        return out
    for key, entry in history.items():
        seq = _int(key)
        if seq is None or not isinstance(entry, dict):
            continue
        summary = raw.text(entry, "currentStateSummary")
        if not summary:
            continue
        observed = entry.get("lastObservedDriverStatus")
        out[seq] = State(
            seq,
            summary,
            times.rfc3339(times.parse(raw.text(entry, "lastTransitionTime"))),
            raw.text(entry, "message"),
            observed if isinstance(observed, dict) else None,
        )
    return out


def history(app: object) -> tuple[State, ...]:
    """Every state the operator kept, in order.

    With ``trimAttemptStateTransitionHistory`` on, the previous attempt's states move to
    ``previousAttemptSummary.stateTransitionHistory``; the keys stay one sequence, so both merge.
    """
    merged = _states(
        raw.mapping(app, "status", "previousAttemptSummary").get("stateTransitionHistory")
    )
    merged.update(_states(raw.mapping(app, "status").get("stateTransitionHistory")))
    current = raw.mapping(app, "status", "currentState")
    if not merged and raw.text(current, "currentStateSummary"):
        merged = _states({"0": current})
    return tuple(merged[k] for k in sorted(merged))


def attempt_id(app: object) -> int:
    """The current attempt's id (ModelUtils.getAttemptId: 0 before any restart)."""
    info = raw.mapping(app, "status", "currentAttemptSummary", "attemptInfo")
    return _int(info.get("id")) or 0


def spans(app: object) -> tuple[AttemptSpan, ...]:
    """The attempts the history tells, the last numbered as the current attempt id."""
    groups: list[list[State]] = []
    for state in history(app):
        if not groups or (state.summary in INITIALIZING and groups[-1]):
            groups.append([])
        groups[-1].append(state)
    last = attempt_id(app)
    first = last - len(groups) + 1
    return tuple(AttemptSpan(first + i, tuple(g)) for i, g in enumerate(groups))


def summary(app: object) -> str:
    return raw.text(raw.mapping(app, "status", "currentState"), "currentStateSummary")


def app_state(app: object) -> str:
    """The application's state in ``ls``'s words, from the operator's current state."""
    states = history(app)
    now = states[-1].summary if states else summary(app)
    if now in TERMINATED:  # released: what it was before says how it ended
        before = [s.summary for s in states if s.summary not in TERMINATED]
        now = before[-1] if before else ""
        if now not in ENDINGS:
            return "Unknown"  # cancelled, or released by its retain duration
    if now in PENDING or not now:
        return "Pending"
    if now in RUNNING:
        return "Running"
    if now == "Succeeded":
        return "Succeeded"
    if now in FAILURES:
        return "Failed"
    return "Unknown"


def budget(app: object) -> RestartBudget:
    config = raw.mapping(app, "spec", "applicationTolerations", "restartConfig")
    info = raw.mapping(app, "status", "currentAttemptSummary", "attemptInfo")

    def number(key: str) -> int | None:
        return _int(config.get(key))

    backoff = number("restartBackoffMillis")
    on_failure = number("restartBackoffMillisForFailure")
    on_scheduling = number("restartBackoffMillisForSchedulingFailure")
    reset = number("restartCounterResetMillis")
    return RestartBudget(
        policy=raw.text(config, "restartPolicy") or "Never",
        max_restarts=3
        if number("maxRestartAttempts") is None
        else int(number("maxRestartAttempts") or 0),
        restarts=_int(info.get("restartCounter")) or 0,
        failures_in_a_row=_int(info.get("failureRestartCounter")) or 0,
        scheduling_failures_in_a_row=_int(info.get("schedulingFailureRestartCounter")) or 0,
        max_on_failure=number("maxRestartOnFailure"),
        max_on_scheduling_failure=number("maxRestartOnSchedulingFailure"),
        backoff_seconds=(30000 if backoff is None else backoff) / 1000,
        failure_backoff_seconds=None if on_failure is None else on_failure / 1000,
        scheduling_backoff_seconds=None if on_scheduling is None else on_scheduling / 1000,
        reset_after_seconds=None if reset is None or reset < 0 else reset / 1000,
    )


def force_termination_seconds(app: object) -> float:
    """The operator's forceTerminationGracePeriodMillis (300 s): then it deletes with grace 0."""
    millis = _int(
        raw.mapping(app, "spec", "applicationTolerations", "applicationTimeoutConfig").get(
            "forceTerminationGracePeriodMillis"
        )
    )
    return (300_000 if millis is None else millis) / 1000


def evidence(state: State) -> str:
    return (
        f"SparkApplication status.stateTransitionHistory[{state.seq}]: {state.summary}"
        + (f" at {state.time}" if state.time else "")
        + (f": {state.message}" if state.message else "")
    )


# The operator's failure states as reason codes, and whose fault each is. Its own docs call the
# first three "infrastructure failures" (best effort: capacity, IPs, image pulls, the API
# server); an eviction is the cluster's (node pressure, a drain); a driver that started but was
# not ready in time may be either.
# Words of a SchedulingFailure whose request was refused as invalid (fabric8's
# KubernetesClientException quotes the API server's Status: "is invalid", code=422, Invalid).
INVALID_SPEC = ("is invalid", "code=422", "reason=Invalid", "IllegalArgumentException")
FAILURE_REASONS: dict[str, tuple[ReasonCode, str, str]] = {
    "SchedulingFailure": (
        "SchedulingFailure",
        "cluster",
        "the operator could not create the driver (API server refusal, quota, RBAC, a bad template)",
    ),
    "DriverStartTimedOut": (
        "DriverStartTimedOut",
        "cluster",
        "the driver pod did not start in driverStartTimeoutMillis (scheduling, image pull, IPs)",
    ),
    "ExecutorsStartTimedOut": (
        "ExecutorsStartTimedOut",
        "cluster",
        "too few executors started in executorStartTimeoutMillis (capacity, quota)",
    ),
    "DriverReadyTimedOut": (
        "DriverReadyTimedOut",
        "unknown",
        "the driver started but was not ready in driverReadyTimeoutMillis",
    ),
    "DriverEvicted": ("Evicted", "cluster", "the driver pod was evicted"),
}


def span_reason(span: AttemptSpan) -> Reason | None:
    """Why an attempt ended, as the operator recorded it; None while it goes on.

    ``Failed`` names no cause of its own: the driver's last observed status (a PodStatus the
    operator kept) is classified as the pod would have been, so an exit 52 still reads as the
    JVM's OutOfMemoryError after the pod is gone.
    """
    end = span.ending
    if end is None:
        return None
    told = evidence(end)
    if end.summary == "Succeeded":
        return Reason(
            category="app",
            code="Completed",
            exit_code=0,
            counts_as_failure=False,
            message="the application completed (the operator's Succeeded)",
            evidence=(told,),
        )
    if end.summary == "SchedulingFailure" and any(w in end.message for w in INVALID_SPEC):
        # AppInitStep: SCHEDULE_FAILURE_MESSAGE + " StackTrace: " + the exception; a 422 from
        # the API server (or Spark refusing its conf) is the application's spec, not capacity.
        return Reason(
            category="app",
            code="SchedulingFailure",
            exit_code=None,
            counts_as_failure=True,
            message="the driver's resources were refused as invalid (a pod template or Spark "
            "conf error; the operator's SchedulingFailure): fix the spec",
            evidence=(told,),
        )
    if end.summary in FAILURE_REASONS:
        code, category, why = FAILURE_REASONS[end.summary]
        return Reason(
            category=category,
            code=code,
            exit_code=None,
            counts_as_failure=True,
            message=f"{why} (the operator's {end.summary})",
            evidence=(told,),
        )
    observed = end.driver_status
    if observed:
        found = classify(PodContext(Pod.of({"status": observed}), "driver"))
        if found is not None and found.code == "Completed":
            # Its PodUtils: a driver that "exited 0 without SparkContext / SparkSession
            # initialization" failed (the corner case the operator names): no Completed here.
            return Reason(
                category="app",
                code="ExitCode",
                exit_code=0,
                counts_as_failure=True,
                message="the driver exited 0 before its SparkContext was ready: the operator "
                "counts that as a failure (the main class returned, or failed quietly, early)",
                evidence=(*found.evidence, told + " (its lastObservedDriverStatus was classified)"),
            )
        if found is not None:
            return dataclasses.replace(
                found,
                evidence=(
                    *found.evidence,
                    told + " (its lastObservedDriverStatus was classified)",
                ),
            )
    return Reason(
        category="unknown",
        code="Unknown",
        exit_code=None,
        counts_as_failure=True,
        message="the driver failed; the operator kept no status that says why"
        + (f": {end.message}" if end.message else ""),
        evidence=(told,),
    )


def span_of(chain: Sequence[object], app_id: str) -> AttemptSpan | None:
    """The attempt of the operator's state history that ran as ``app_id``, if it tells one."""
    for cr in chain:
        for span in spans(cr):
            if app_id_of(raw.namespace(cr), raw.name(cr), span.attempt_id) == app_id:
                return span
    return None


def with_verdict(
    found: Reason | None, waiting: Reason | None, span: AttemptSpan | None
) -> Reason | None:
    """A live driver's reason beside the operator's verdict on its attempt.

    The operator has ended the attempt while its pod is still there (it releases it next): its
    verdict is used when the pod tells no end yet (Pending: DriverStartTimedOut, with the image
    pull failure it waited on as evidence), nothing of its own (Unknown), or a success the
    operator counts as a failure; otherwise the pod's own evidence is the more precise (an
    eviction for the pod's own storage limit, an exit code) and the operator's state is added.
    """
    told = span_reason(span) if span is not None else None
    if told is None:
        return found
    if found is None:
        if told.code == "Completed":
            return None
        kept = waiting.evidence if waiting is not None else ()
        return dataclasses.replace(told, evidence=(*told.evidence, *kept))
    if found.code == "Unknown" or (found.code == "Completed" and told.counts_as_failure):
        return dataclasses.replace(told, evidence=(*told.evidence, *found.evidence))
    return dataclasses.replace(found, evidence=(*found.evidence, *told.evidence))


def operator_view(app: object) -> JsonObject:
    """What ``describe`` and the JSON say of the operator's own view: state, attempt, budget."""
    budget_ = budget(app)
    current = raw.mapping(app, "status", "currentState")
    return {
        "kind": "SparkApplication",
        "apiVersion": raw.text(app, "apiVersion") or f"{API_GROUP}/v1",
        "state": raw.text(current, "currentStateSummary") or None,
        "message": raw.text(current, "message") or None,
        "attemptId": attempt_id(app),
        "restartPolicy": budget_.policy,
        "maxRestartAttempts": budget_.max_restarts,
        "restartCounter": budget_.restarts,
        "failureRestartCounter": budget_.failures_in_a_row,
        "schedulingFailureRestartCounter": budget_.scheduling_failures_in_a_row,
        "maxRestartOnFailure": budget_.max_on_failure,
        "maxRestartOnSchedulingFailure": budget_.max_on_scheduling_failure,
        "restartBackoffSeconds": budget_.backoff_seconds,
        "restartBackoffSecondsForFailure": budget_.failure_backoff_seconds,
        "restartBackoffSecondsForSchedulingFailure": budget_.scheduling_backoff_seconds,
        "restartCounterResetSeconds": budget_.reset_after_seconds,
        "resourceRetainPolicy": raw.text(
            raw.mapping(app, "spec", "applicationTolerations"), "resourceRetainPolicy"
        )
        or "Never",
        "restart": budget_.text(),
    }


# ClusterStateSummary.java: a SparkCluster's states.
CLUSTER_STATES = {
    "Submitted": "Pending",
    "SchedulingFailure": "Failed",
    "RunningHealthy": "Running",
    "Failed": "Failed",
    "ResourceReleased": "Unknown",
}


def cluster_state(cluster: object) -> str:
    return CLUSTER_STATES.get(summary(cluster), "Pending" if not summary(cluster) else "Unknown")


def cluster_view(cluster: object) -> JsonObject:
    current = raw.mapping(cluster, "status", "currentState")
    return {
        "kind": "SparkCluster",
        "apiVersion": raw.text(cluster, "apiVersion") or f"{API_GROUP}/v1",
        "state": raw.text(current, "currentStateSummary") or None,
        "message": raw.text(current, "message") or None,
    }
