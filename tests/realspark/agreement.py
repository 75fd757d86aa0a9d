"""Whether kubectl spark says of each lost executor what Spark itself said (its allexecutors)."""

from __future__ import annotations

import json
import re
from typing import Any

from kubectl_spark.core.summaries import read_summaries, summaries_from

from .bed import Cluster

_EXIT = re.compile(r"exited with exit code (-?\d+)")


def described_executors(c: Cluster, app: str, attempt: int | None) -> dict[str, dict[str, Any]]:
    """``describe -o json``'s executors by Spark id: of one attempt, or of the last."""
    found = json.loads(c.kubectl_spark("describe", app, "-o", "json").stdout)
    attempts = found["attempts"]
    chosen = next(a for a in attempts if a["number"] == attempt) if attempt else attempts[-1]
    return {e["id"]: e for e in chosen["executors"]}


def sparks_counters(text: str) -> tuple[bool, bool] | None:
    """(exitCausedByApp, counted toward spark.executor.maxNumFailures) as Spark's text implies.

    ExecutorPodsLifecycleManager: an executor first seen PodFailed is removed with the "exited"
    text, exitCausedByApp true, and counted (ExecutorFailureTracker.registerExecutorFailure);
    one seen only as deleted ("deleted by a user or the framework") neither, nor one missing
    from the cluster past missingPodDetectDelta ("was not found in the cluster"). The driver's own
    kill ("Executor killed by driver.") is ExecutorKilled and a decommission ("Executor
    decommission: …") ExecutorDecommission: not the app's (TaskSetManager.executorLost), not
    counted.
    HeartbeatReceiver's expiry is ExecutorProcessLost (the app's, by default) and the pod is then
    deleted by the driver: not counted.
    """
    if _EXIT.search(text):
        return True, True
    if (
        "deleted by a user or the framework" in text
        or "was not found in the cluster" in text  # ExecutorExited(-1, exitCausedByApp = false)
        or text.startswith(("Executor killed by driver", "Executor decommission"))
    ):
        return False, False
    if text.startswith("Executor heartbeat timed out"):
        return True, False
    return None


def assert_agrees_with_spark(
    c: Cluster, app: str, driver: dict[str, Any], attempt: int | None = None
) -> list[dict[str, Any]]:
    """Each executor Spark removed: kubectl spark's reason agrees with Spark's removeReason."""
    answer = c.executors_answer(driver)
    # Spark's own list takes the fast way (read from its bytes) and reads as parsed whole
    read = summaries_from(answer)
    assert read is not None and read.summaries == read_summaries(json.loads(answer)), answer
    removed = [e for e in json.loads(answer) if not e["isActive"] and e["id"] != "driver"]
    ours = described_executors(c, app, attempt)
    for spark in removed:
        mine = ours.get(spark["id"])
        assert mine is not None and mine["reason"], (spark, sorted(ours))
        reason = mine["reason"]
        said = spark["removeReason"]
        assert reason["code"] != "Unknown", (said, reason)
        exited = _EXIT.search(said)
        if exited:
            assert reason["exitCode"] == int(exited.group(1)), (said, reason)
            assert reason["code"] != "Deleted", (said, reason)
        counters = sparks_counters(said)
        assert counters is not None, f"a text of Spark's this test does not know: {said!r}"
        assert (reason["countsAsFailure"], reason["countsTowardMaxNumFailures"]) == counters, (
            said,
            reason,
        )
    return removed
