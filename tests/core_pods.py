"""The core tests' builders (pods, nodes, a driver Job and its Events, three applications) and
the clock they are read at (``NOW``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Protocol

import orjson

from kubectl_spark.core.inputs import Snapshot
from kubectl_spark.core.jsonvalue import JsonObject
from kubectl_spark.core.model import Reason
from kubectl_spark.core.node import Node, nodes_of
from kubectl_spark.core.pod import Pod, kept_copy, pods_of
from kubectl_spark.core.reasons import PodContext, restart_reasons

NOW = datetime(2026, 3, 1, 1, 0, tzinfo=UTC)


class Answer(Protocol):
    def to_json(self) -> JsonObject: ...


def printed(answer: Answer) -> Any:
    """An answer as ``-o json`` prints it, read back: a test can then index into it freely."""
    return orjson.loads(orjson.dumps(answer.to_json()))


def mk(
    name: str,
    role: str,
    created: str,
    *,
    uid: str | None = None,
    labels: dict[str, str] | None = None,
    owner: dict[str, Any] | None = None,
    phase: str = "Running",
    node: str = "n1",
) -> dict[str, Any]:
    """A Spark pod with what grouping reads: name, role, creation, labels, owner, phase, node."""
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "ns",
        "uid": uid or f"uid-{name}",
        "creationTimestamp": created,
        "labels": {"spark-role": role, **(labels or {})},
    }
    if owner:
        meta["ownerReferences"] = [owner]
    return {"metadata": meta, "spec": {"nodeName": node}, "status": {"phase": phase}}


def ref(kind: str, name: str, uid: str, controller: bool = True) -> dict[str, Any]:
    """An ownerReference (the controller one unless told)."""
    return {"apiVersion": "v1", "kind": kind, "name": name, "uid": uid, "controller": controller}


def driver_job(name: str, uid: str, failed: int) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": uid,
            "creationTimestamp": "2026-03-01T00:00:00Z",
        },
        "spec": {"template": {"metadata": {"labels": {"spark-role": "driver"}}}},
        "status": {"failed": failed, "active": 1},
    }


def pod_event(pod: str, reason: str, at: str) -> dict[str, Any]:
    return {
        "metadata": {"name": f"{pod}.{reason}", "namespace": "ns", "uid": f"ev-{pod}-{reason}"},
        "involvedObject": {"kind": "Pod", "name": pod, "namespace": "ns", "uid": f"gone-{pod}"},
        "reason": reason,
        "message": "m",
        "firstTimestamp": at,
    }


def job_pair() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Jobs ``etl`` and ``etl-daily``, each with a live driver and one attempt whose pod is gone."""
    pods, jobs = [], []
    for name, uid in (("etl", "job-etl"), ("etl-daily", "job-daily")):
        jobs.append(driver_job(name, uid, failed=1))
        labels = {"spark-app-selector": f"spark-{name}", "spark-app-name": name}
        pods.append(
            mk(
                f"{name}-live1",
                "driver",
                "2026-03-01T00:10:00Z",
                labels=labels,
                owner=ref("Job", name, uid),
            )
        )
    events = [
        pod_event("etl-gone1", "Killing", "2026-03-01T00:01:00Z"),
        pod_event("etl-daily-gone2", "Killing", "2026-03-01T00:02:00Z"),
    ]
    return pods, jobs, events


def three_apps() -> list[dict]:
    out = []
    for app in ("a", "b", "c"):
        labels = {"spark-app-selector": f"spark-{app}", "spark-app-name": app}
        driver = mk(f"{app}-driver", "driver", "2026-03-01T00:00:00Z", labels=labels)
        out.append(driver)
        for i in (1, 2):
            out.append(
                mk(
                    f"{app}-exec-{i}",
                    "executor",
                    "2026-03-01T00:00:05Z",
                    labels={**labels, "spark-exec-id": str(i)},
                    owner=ref("Pod", f"{app}-driver", f"uid-{app}-driver"),
                )
            )
    return out


APP = {"spark-app-selector": "spark-1", "spark-app-name": "wc"}


JOB = ref("Job", "wc-driver", "job-1")


def node(name: str, ready: str = "True", taints: list[dict[str, str]] | None = None) -> Node:
    """A node as the gateway reads it (typed from the API's JSON)."""
    return Node.of(
        {
            "metadata": {"name": name},
            "spec": {"taints": taints or []},
            "status": {
                "conditions": [
                    {"type": "Ready", "status": ready, "lastTransitionTime": "2026-03-01T00:05:00Z"}
                ]
            },
        }
    )


def typed_snapshot(*, pods: Any = (), owners: Any = (), nodes: Any = (), **lists: Any) -> Snapshot:
    """A snapshot of the API's JSON, its pods and nodes typed as the gateway types them."""
    return Snapshot(pods=pods_of(pods), owners=pods_of(owners), nodes=nodes_of(nodes), **lists)


def pod_context(pod: Any, role: str, *args: Any, **fields: Any) -> PodContext:
    """What the classifier knows of a pod given as the API's JSON, typed as the gateway types it."""
    return PodContext(Pod.of(pod), role, *args, **fields)


def restart_reasons_of(pod: Any) -> list[tuple[str | None, Reason | None]]:
    return restart_reasons(Pod.of(pod))


def kept(pod: Any, source: str, seen_at: str) -> Pod:
    """A kept copy of a gone pod given as the API's JSON (a watch's, the history store's)."""
    return kept_copy(Pod.of(pod), source, seen_at)
