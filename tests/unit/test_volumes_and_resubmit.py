"""Issue 24 in the plans and alerts: ReadWriteOncePod volumes (Spark 4's default) and a resubmitted
driver pod with an identity of its own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kubectl_spark.core import slim
from kubectl_spark.core.analyze import analyze
from kubectl_spark.core.model import App, Attempt
from kubectl_spark.core.plans import KillContext, force_kill_plan
from tests.core_pods import APP, JOB, NOW, mk, node, typed_snapshot

# As kube-scheduler v1.33 wrote it on the test bed's real control plane (VolumeRestrictions's
# Filter on the live node, the taint on the lost one).
CONFLICT = (
    "0/2 nodes are available: 1 node has pod using PersistentVolumeClaim with the same name and "
    "ReadWriteOncePod access mode, 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: "
    "}. preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 "
    "Preemption is not helpful for scheduling."
)


def with_claim(pod: dict[str, Any], claim: str) -> dict[str, Any]:
    pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
    return pod


@pytest.mark.parametrize("kept", [lambda p: p, slim.pod], ids=["whole", "slim"])
def test_a_pending_attempt_kept_off_by_a_readwriteoncepod_claim_is_replacement_blocked(
    kept: Callable[[Any], Any],
) -> None:
    """Also from slim pods, as the CLI and the TUI hold them: the claims are kept."""
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
    pods = [kept(old), kept(new)]
    (app,) = analyze(typed_snapshot(pods=pods, nodes=[node("dead", "Unknown")], now=NOW)).apps
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
    (app,) = analyze(typed_snapshot(pods=[new], nodes=[node("n1")], now=NOW)).apps
    blocked = next(a for a in app.alerts if a.type == "ReplacementBlocked")
    assert "cannot be scheduled: 0/3 nodes are available: 3 Insufficient memory." in blocked.message


def test_a_resubmitted_driver_pod_gets_its_own_identity() -> None:
    """Issue 24: the copy mounts copied ConfigMaps naming the new pod, app id and Service."""
    from kubectl_spark.core.plans import resubmit_plan

    driver = mk(
        "pi-driver", "driver", "2026-03-01T00:00:00Z", labels=APP, node="n1", phase="Failed"
    )
    driver["spec"] = {
        "restartPolicy": "Never",
        "volumes": [{"name": "spark-conf-volume-driver",
                     "configMap": {"name": "spark-drv-abc-conf-map"}}],
        "containers": [{"name": "spark-kubernetes-driver", "args": ["driver"],
                        "env": [{"name": "SPARK_APPLICATION_ID", "value": "spark-1"}]}],
    }  # fmt: skip
    cm = {"metadata": {"name": "spark-drv-abc-conf-map"},
          "data": {"spark.properties": "spark.app.id=spark-1\n"
                   "spark.kubernetes.driver.pod.name=pi-driver\n"
                   "spark.driver.host=pi-svc.ns.svc\nspark.executor.instances=2\n"}}  # fmt: skip
    svc = {"metadata": {"name": "pi-svc"}, "spec": {"clusterIP": "None", "selector": {}}}
    (app,) = analyze(typed_snapshot(pods=[driver], now=NOW)).apps
    plan = resubmit_plan(app, driver=driver, job=None, sparkapp=None, configmaps=[cm],
                         services=[svc], force=False, suffix="abc123",
                         now="2026-03-01T01:00:00Z", actor="test")  # fmt: skip
    assert not plan.refusal, plan.refusal
    pod: Any = next(b for b in plan.created if b["kind"] == "Pod")
    copy: Any = next(b for b in plan.created if b["kind"] == "ConfigMap")
    new_id = pod["metadata"]["labels"]["spark-app-selector"]
    assert new_id != "spark-1" and new_id.startswith("spark-") and len(new_id) == 38
    assert pod["spec"]["volumes"][0]["configMap"]["name"] == copy["metadata"]["name"]
    env = pod["spec"]["containers"][0]["env"]
    assert {"name": "SPARK_APPLICATION_ID", "value": new_id} in env
    text = copy["data"]["spark.properties"]
    assert f"spark.app.id={new_id}" in text
    assert f"spark.kubernetes.driver.pod.name={pod['metadata']['name']}" in text
    assert "spark.driver.host=pi-svc-rabc123.ns.svc" in text
    assert "spark.executor.instances=2" in text
