"""The core tests' pod builder: the few fields grouping and the classifiers read, and the
clock they are read at (``NOW``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Protocol

import orjson

from kubectl_spark.core.jsonvalue import JsonObject

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
