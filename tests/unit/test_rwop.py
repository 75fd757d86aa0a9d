"""Issue 24: Spark 4 defaults its PVCs to ReadWriteOncePod; the product knows that access mode."""

from __future__ import annotations

from typing import Any

from kubectl_spark.core.analyze import analyze
from kubectl_spark.core.inputs import Snapshot
from kubectl_spark.core.model import App, Attempt
from kubectl_spark.core.plans import KillContext, force_kill_plan
from tests.unit.test_core_attempts_and_alerts import APP, JOB, node
from tests.unit.test_core_grouping import NOW, mk

CONFLICT = (
    "0/3 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, "
    "2 node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode."
)


def with_claim(pod: dict[str, Any], claim: str) -> dict[str, Any]:
    pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
    return pod


def test_a_pending_attempt_kept_off_by_a_readwriteoncepod_claim_is_replacement_blocked() -> None:
    old = with_claim(
        mk("wc-driver-a", "driver", "2026-03-01T00:00:00Z", labels=APP, owner=JOB, node="dead"),
        "checkpoint",
    )
    old["metadata"]["deletionTimestamp"] = "2026-03-01T00:09:00Z"
    new = with_claim(
        mk("wc-driver-b", "driver", "2026-03-01T00:10:00Z", labels=APP, owner=JOB, node=""),
        "checkpoint",
    )
    new["status"] = {
        "phase": "Pending",
        "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
             "message": CONFLICT}
        ],
    }  # fmt: skip
    (app,) = analyze(Snapshot(pods=[old, new], nodes=[node("dead", "Unknown")], now=NOW)).apps
    blocked = next(a for a in app.alerts if a.type == "ReplacementBlocked")
    assert blocked.attempts == (1, 2)
    assert "claim checkpoint is ReadWriteOncePod" in blocked.message
    assert "force-kill wc/1 --node-down" in blocked.message


def test_detach_volumes_knows_readwriteoncepod_claims() -> None:
    driver = with_claim(mk("wc-driver-a", "driver", "2026-03-01T00:00:00Z", node="dead"), "ckpt")
    claim = {
        "metadata": {"name": "ckpt", "namespace": "ns"},
        "spec": {"accessModes": ["ReadWriteOncePod"], "volumeName": "pv-1"},
    }
    attachment = {
        "metadata": {"name": "csi-123", "uid": "va-1"},
        "spec": {"nodeName": "dead", "source": {"persistentVolumeName": "pv-1"}},
    }
    attempt = Attempt(1, "wc-driver-a", "uid-wc-driver-a", "dead", "Running", "Lost",
                      None, None, None, 0, False, None)  # fmt: skip
    app = App("ns", "wc", "spark-1", "pod", "Unknown", None, (), (attempt,))
    ctx = KillContext(
        driver=driver,
        node_reachable=False,
        volumeattachments=(attachment,),
        pvcs=(claim,),
    )
    plan = force_kill_plan(
        app, attempt, ctx, force=False, detach_volumes=True, out_of_service=False,
        no_replace=False, now="2026-03-01T01:00:00Z", actor="test", node_down=True,
    )  # fmt: skip
    assert plan.refusal is None or plan.refusal == ""
    assert any(
        op.resource == "volumeattachments" and op.name == "csi-123" for op in plan.operations
    )


def test_a_pending_attempt_no_node_fits_is_replacement_blocked() -> None:
    """The scheduler's own words (the alert read a pod's facts, not the pod, and never fired)."""
    new = mk("wc-driver-b", "driver", "2026-03-01T00:10:00Z", labels=APP, owner=JOB, node="")
    new["status"] = {
        "phase": "Pending",
        "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
             "message": "0/3 nodes are available: 3 Insufficient memory."}
        ],
    }  # fmt: skip
    (app,) = analyze(Snapshot(pods=[new], nodes=[node("n1")], now=NOW)).apps
    blocked = next(a for a in app.alerts if a.type == "ReplacementBlocked")
    assert "cannot be scheduled: 0/3 nodes are available: 3 Insufficient memory." in blocked.message
