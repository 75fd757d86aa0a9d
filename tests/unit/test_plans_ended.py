"""fence and force-kill of an attempt that has ended: nothing to do, unless its executors run."""

from __future__ import annotations

import pytest

from kubectl_spark.core import plans
from kubectl_spark.core.model import App, Attempt, Executor, Reason

EXIT_1 = Reason(
    category="app",
    code="ExitCode",
    exit_code=1,
    counts_as_failure=True,
    message="exit code 1",
    evidence=(),
)


def attempt(state: str, *executor_states: str) -> Attempt:
    executors = tuple(
        Executor(str(i), f"pi-exec-{i}", f"e{i}", "node-b", "Running", s, 0, None)
        for i, s in enumerate(executor_states, start=1)
    )
    return Attempt(
        3, "pi-driver", "u3", "node-d", state, state, None, None, None, 0, False, EXIT_1, executors
    )


def app(a: Attempt) -> App:
    return App("spark-dev", "pi", "spark-1", "sparkapplication", a.state, None, attempts=(a,))


def fence(a: Attempt) -> plans.Plan:
    return plans.fence_plan(
        app(a),
        a,
        lease=None,
        allow=None,
        keep_executors=False,
        now="2026-03-01T03:00:00Z",
        actor="me",
    )


def kill(a: Attempt) -> plans.Plan:
    return plans.force_kill_plan(
        app(a),
        a,
        plans.KillContext(),
        force=False,
        detach_volumes=False,
        out_of_service=False,
        no_replace=False,
        now="2026-03-01T03:00:00Z",
        actor="me",
    )


@pytest.mark.parametrize("state", ["Failed", "Succeeded"])
@pytest.mark.parametrize("make", [fence, kill])
def test_an_ended_attempt_with_nothing_running_is_left_as_evidence(state, make) -> None:
    """Its driver cannot act again: a fence would guard nothing, and a kill would only delete
    the pod that holds the exit code and the log."""
    plan = make(attempt(state, "Failed", "Succeeded"))
    assert plan.operations == () and not plan.refusal
    assert plan.noop.startswith(f"attempt 3 has ended ({state}")
    assert "kept as evidence" in plan.noop


@pytest.mark.parametrize("make", [fence, kill])
def test_an_ended_attempt_whose_executors_still_run_is_acted_on(make) -> None:
    """A driver that failed while its executors run (on a lost node, say): they are the target."""
    plan = make(attempt("Failed", "Running", "Failed"))
    assert not plan.noop and not plan.refusal
    touched = {op.name for op in plan.operations if op.resource == "pods"}
    assert "pi-exec-1" in touched
