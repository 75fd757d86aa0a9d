"""Resubmitting a SparkApplication of the Kubeflow spark-operator.

From its controller (``internal/controller/sparkapplication/controller.go`` and
``event_filter.go``, spark-operator v2):

- ``spec.suspend: true`` moves any state but COMPLETED, FAILED and SUSPENDED to SUSPENDING: the
  operator deletes the driver and its resources, then SUSPENDED (app id, driver and executor
  state cleared; the attempt counters kept). ``spec.suspend: false`` then RESUMING: a new
  submission, with a new ``status.submissionID``. Changing ``suspend`` does not invalidate the
  run (the event filter leaves it out of the spec comparison).
- Any other spec change invalidates the run (INVALIDATING): resources deleted, the attempt
  counters reset to 0, submitted again. The operator calls its change detection best effort.
  A finished application (COMPLETED or FAILED) is not suspended: a spec change is then the way.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kubectl_spark.core import raw
from kubectl_spark.core.model import App
from kubectl_spark.core.raw import RawObject

from .base import PREFIX_CONF, Operation, Plan, event_on

API = "sparkoperator.k8s.io/v1beta2"
TERMINATED = ("COMPLETED", "FAILED")
WAIT_SECONDS = 180


def replaced(app: App) -> str:
    """What the resubmit replaces, said in its Event.

    The operator resets its status on a re-run and its pods keep their names, so the earlier
    attempts are told nowhere else once it has re-run (issue 48).
    """
    if not app.attempts:
        return ""
    last = app.attempts[-1]
    why = f": {last.reason.code} — {last.reason.message}" if last.reason is not None else ""
    count = len(app.attempts)
    return f", after {count} attempt{'s' if count != 1 else ''}, the last {last.state}{why}"


def operator_resubmit(
    base: Plan, app: App, sparkapp: RawObject, *, now: str, actor: str,
    stamp: dict[str, str],
) -> Plan:  # fmt: skip
    state = raw.text(sparkapp, "status", "applicationState", "state")
    uid = raw.uid(sparkapp)
    event = event_on(
        app.namespace, "SparkApplication", API, app.name, uid, "Resubmitted",
        f"{app.name} resubmitted by {actor}{replaced(app)}", now, actor,
    )  # fmt: skip
    fixed = raw.mapping(sparkapp, "spec", "sparkConf").get(PREFIX_CONF)
    warnings: tuple[str, ...] = ()
    if fixed:
        warnings = (
            (
                f"spec.sparkConf fixes {PREFIX_CONF}={fixed}: every run names its executors the "
                "same, and a run's executors still there make the next one's creates fail (409); "
                "removing it is a spec change, which re-runs the application and resets its counters"
            ),
        )
    if state in TERMINATED:
        plan = _by_spec_change(base, app, sparkapp, now, stamp, event, state)
        return dataclasses.replace(plan, warnings=warnings)
    submission = raw.text(sparkapp, "status", "submissionID")

    def suspend(value: bool, why: str) -> Operation:
        return Operation(
            "patch", API, "sparkapplications", app.namespace, app.name, why,
            {"metadata": {"uid": uid, "annotations": stamp}, "spec": {"suspend": value}},
            uid=uid,
        )  # fmt: skip

    def wait(body: dict[str, Any], why: str) -> Operation:
        return Operation(
            "wait", API, "sparkapplications", app.namespace, app.name, why,
            {**body, "timeoutSeconds": WAIT_SECONDS},
        )  # fmt: skip

    state_path = ["status", "applicationState", "state"]
    ops = (
        suspend(True, "suspend it: the operator deletes the driver and its resources, keeping "
                "the attempt counters (SUSPENDING, then SUSPENDED)"),
        wait({"path": state_path, "equals": "SUSPENDED"}, "the operator suspends it"),
        suspend(False, "resume it: the operator submits a new run (RESUMING)"),
        wait({"path": ["status", "submissionID"], "differsFrom": submission},
             "the operator makes a new submission (a new status.submissionID)"),
        event,
    )  # fmt: skip
    return dataclasses.replace(
        base,
        operations=ops,
        warnings=warnings,
        notes=(
            (
                "suspend and resume, not a spec change: a spec change invalidates the run and resets "
                "its attempt counters; the resubmission is checked by its new submissionID"
            ),
        ),
    )


def _by_spec_change(
    base: Plan, app: App, sparkapp: RawObject, now: str,
    stamp: dict[str, str], event: Operation, state: str,
) -> Plan:  # fmt: skip
    # Only a marker, never an executor name prefix or an app id: the operator re-runs this spec
    # on every retry, and a fixed prefix would name every run's executors the same (their pods
    # outlive the driver, owned by the SparkApplication too: spark-operator#2961), so each
    # retry's creates would fail (409). Left unset, Spark draws a fresh one per submission.
    conf = {
        **raw.mapping(sparkapp, "spec", "sparkConf"),
        "spark.kubectl-spark.io/resubmitted-at": now,
    }
    op = Operation(
        "patch", API, "sparkapplications", app.namespace, app.name,
        "change the spec (sparkConf) so that the operator re-runs the application",
        {"metadata": {"uid": raw.uid(sparkapp), "annotations": stamp}, "spec": {"sparkConf": conf}},
        uid=raw.uid(sparkapp),
    )  # fmt: skip
    return dataclasses.replace(
        base,
        operations=(op, event),
        notes=(
            (
                f"the application is {state}: the operator does not suspend or resume a finished "
                "one, but re-runs one whose spec changed (it invalidates the run and submits again, "
                "its attempt counters reset to 0); a sparkConf entry is the least intrusive change"
            ),
        ),
    )
