"""The advice for a lost node's attempt follows what is left of it (issue 24)."""

from __future__ import annotations

from kubectl_spark.app.advice import NODE_LOST_GONE, NODE_LOST_KILLED, advice
from kubectl_spark.core.model import Reason


def _node_lost(message: str, *evidence: str) -> Reason:
    return Reason(
        category="cluster",
        code="NodeLost",
        exit_code=None,
        counts_as_failure=True,
        message=message,
        evidence=evidence,
    )


def test_a_zombie_that_may_run_is_to_be_fenced_or_killed() -> None:
    text = advice(_node_lost("its node became unreachable", "node node-a: Ready=Unknown"))
    assert text is not None and "fence it" in text


def test_a_gone_attempt_is_not_to_be_fenced() -> None:
    gone = _node_lost(
        "its node became unreachable and the pod was deleted (from Events; the pod is gone)"
    )
    assert advice(gone) == NODE_LOST_GONE
    killed = _node_lost(gone.message, "event ForceKilled: attempt 1 force-killed by admin")
    assert advice(killed) == NODE_LOST_KILLED
    for text in (NODE_LOST_GONE, NODE_LOST_KILLED):
        assert "fence it" not in text
