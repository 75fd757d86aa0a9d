"""The Kubeflow spark-operator's own view of a SparkApplication: its state, and its executors.

Read from its sources (kubeflow/spark-operator v2, ``internal/controller/sparkapplication/
controller.go`` and ``pkg/util``):

- ``status.applicationState.state``: FAILING, SUCCEEDING and SUBMISSION_FAILED are not final
  while ``ShouldRetry`` holds (restartPolicy Always; OnFailure with ``executionAttempts <=
  onFailureRetries``, or ``submissionAttempts <= onSubmissionFailureRetries``): the operator
  moves them to PENDING_RERUN. SUSPENDING and SUSPENDED are a suspended application (spec.suspend),
  RESUMING one starting again.
- ``status.executorState``: each executor pod by name, as the operator last saw it; a pod that
  is gone stays listed (UNKNOWN while the driver runs, FAILED once it does not, COMPLETED when
  the application completed), and a failed one has a ``SparkExecutorFailed`` Event on the
  SparkApplication: "Executor NAME failed with ExitCode: N, Reason: R, Pod Message: M".
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from . import raw
from .losses import classify
from .model import Executor, Reason
from .pod import ContainerState, ContainerStatus, Pod, PodSpec, PodStatus, Terminated
from .raw import RawObject
from .reasons import PodContext, event_evidence

# The operator's state → the application's state (the JSON contract's words), when final.
STATES = {
    "": "Pending",
    "NEW": "Pending",
    "SUBMITTED": "Pending",
    "PENDING_RERUN": "Pending",
    "RUNNING": "Running",
    "SUCCEEDING": "Succeeded",
    "COMPLETED": "Succeeded",
    "FAILING": "Failed",
    "FAILED": "Failed",
    "SUBMISSION_FAILED": "Failed",
    "INVALIDATING": "Pending",
    "SUSPENDING": "Suspended",
    "SUSPENDED": "Suspended",
    "RESUMING": "Pending",
    "UNKNOWN": "Unknown",
}


def state_of(app: object) -> str:
    """The operator's state of ``app`` (a SparkApplication), "" when it has none yet."""
    return raw.text(app, "status", "applicationState", "state")


def app_state(app: object) -> str:
    """The application's state by the operator, a rerun to come read as Pending."""
    state = state_of(app)
    if state in ("FAILING", "SUCCEEDING", "SUBMISSION_FAILED") and should_retry(app):
        return "Pending"  # PENDING_RERUN next: not the end
    return STATES.get(state, "Unknown")


def should_retry(app: object) -> bool:
    """The operator's ``ShouldRetry`` (pkg/util/sparkapplication.go), field for field."""
    state = state_of(app)
    policy = raw.mapping(app, "spec", "restartPolicy")
    kind = raw.text(policy, "type")
    if state == "SUCCEEDING":
        return kind == "Always"
    if state == "FAILING":
        retries = raw.number(policy, "onFailureRetries")
        attempts = raw.number(app, "status", "executionAttempts") or 0
        return kind == "Always" or (
            kind == "OnFailure" and retries is not None and attempts <= retries
        )
    if state == "SUBMISSION_FAILED":
        retries = raw.number(policy, "onSubmissionFailureRetries")
        attempts = raw.number(app, "status", "submissionAttempts") or 0
        return kind == "Always" or (
            kind == "OnFailure" and retries is not None and attempts <= retries
        )
    return False


_FAILED = re.compile(
    r"^Executor (?P<pod>\S+) failed with ExitCode: (?P<code>-?\d+), Reason: (?P<reason>.*?)"
    r"(?:, Pod Message: (?P<message>.*))?$",
    re.DOTALL,
)


def gone_executors(
    app: object,
    events: Sequence[RawObject],
    known: Sequence[Executor],
    driver_ended: Reason | None,
) -> list[Executor]:
    """The executors ``status.executorState`` lists whose pods no source holds.

    The operator resets the map at each rerun, so they are the current attempt's. A failed one
    is classified from the exit its Event quotes, as its pod would have been; one it marked
    FAILED only because its pod went once the driver had ended (``driver_ended``: that end) went
    with its driver.
    """
    listed = raw.mapping(app, "status", "executorState")
    if not listed:
        return []
    pods = {e.pod for e in known}
    told: dict[str, RawObject] = {}
    for event in events:
        found = _FAILED.match(raw.text(event, "message"))
        if raw.text(event, "reason") == "SparkExecutorFailed" and found:
            told[found["pod"]] = event
    gone = []
    for pod, state in sorted(listed.items()):
        exec_id = pod.rpartition("-")[2]
        if (
            pod in pods
            or not exec_id.isdecimal()
            or state not in ("FAILED", "UNKNOWN", "COMPLETED")
        ):
            continue
        gone.append(
            Executor(
                exec_id,
                pod,
                "",
                None,
                "Unknown",
                "Gone",
                0,
                _reason(pod, str(state), told.get(pod), driver_ended),
                source="operator",
            )
        )
    return gone


def _reason(pod: str, state: str, event: RawObject | None, driver_ended: Reason | None) -> Reason:
    listed = f"status.executorState[{pod}]={state}"
    if state == "COMPLETED":
        return Reason(
            category="app",
            code="Completed",
            exit_code=0,
            counts_as_failure=False,
            message="completed (the operator's word: its pod is gone)",
            evidence=(listed,),
        )
    found = _FAILED.match(raw.text(event, "message")) if event is not None else None
    if found is None and driver_ended is not None:
        return Reason(
            category=driver_ended.category,
            code="OwnerGone",
            exit_code=None,
            counts_as_failure=False,
            message="its pod went with its driver (the operator marks such a pod FAILED, "
            '"assuming it was deleted")',
            evidence=(listed, f"the driver ended: {driver_ended.code}"),
        )
    if found is None:
        return Reason(
            category="unknown",
            code="Gone",
            exit_code=None,
            counts_as_failure=False,
            message=f"its pod is gone; the operator last saw it {state} (it was not seen to fail)",
            evidence=(listed,),
        )
    reason = found["reason"] or ""
    terminated = Terminated(
        exit_code=int(found["code"]),
        reason="" if reason.startswith("Unknown (Container not Found)") else reason,
    )
    status = PodStatus(
        phase="Failed",
        message=found["message"] or "",
        container_statuses=[
            ContainerStatus(
                name="spark-kubernetes-executor", state=ContainerState(terminated=terminated)
            )
        ],
    )
    classified = classify(
        PodContext(Pod(spec=PodSpec(restart_policy="Never"), status=status), "executor")
    )
    evidence = (listed, event_evidence(dict(event or {})))
    if classified is None:
        return Reason(
            category="unknown",
            code="Unknown",
            exit_code=int(found["code"]),
            counts_as_failure=True,
            message=raw.text(event, "message"),
            evidence=evidence,
        )
    return dataclasses.replace(classified, evidence=evidence)
