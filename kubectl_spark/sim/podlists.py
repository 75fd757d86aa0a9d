"""Pod lists of one tick answered from the tick's full pod list, as an informer's indexers do.

In a tick the node lifecycle, the scheduler and the kubelets list every pod, and the Job
controller and Spark list them again by label (``batch.kubernetes.io/controller-uid``,
``spark-role=driver``, one application's executors). Real controllers read one shared informer
cache for all of these; here the narrower lists are cut from the full one, which the tick has
read anyway. Only equality and existence selectors are cut (the only ones the simulator sends);
anything else still goes to the server.
"""

from __future__ import annotations

import re
from typing import Any

ALL_PODS = "/api/v1/pods"
_NAMESPACED = re.compile(r"^/api/v1/namespaces/([^/]+)/pods$")
_KEY = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._/-]*[A-Za-z0-9])?$")
_VALUE = re.compile(r"^([A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?)?$")

Requirement = tuple[str, str | None]  # (key, value); None: the key exists


def narrowing(path: str, query: dict[str, Any] | None) -> tuple[str, list[Requirement]] | None:
    """(namespace or "", requirements) when this pod list can be cut from all pods, else None."""
    if path == ALL_PODS:
        namespace = ""
    elif match := _NAMESPACED.match(path):
        namespace = match.group(1)
    else:
        return None
    query = query or {}
    if set(query) - {"labelSelector"}:
        return None
    selector = str(query.get("labelSelector") or "")
    requirements: list[Requirement] = []
    for term in filter(None, selector.split(",")):
        key, eq, value = term.partition("==") if "==" in term else term.partition("=")
        if not _KEY.match(key) or (eq and not _VALUE.match(value)):
            return None  # set-based, negated or malformed: the server answers
        requirements.append((key, value if eq else None))
    return namespace, requirements


def cut(whole: dict[str, Any], namespace: str, requirements: list[Requirement]) -> dict[str, Any]:
    """The list the server would have sent for the narrower request (same order, same metadata)."""

    def wanted(item: dict[str, Any]) -> bool:
        meta = item.get("metadata") or {}
        if namespace and meta.get("namespace") != namespace:
            return False
        labels = meta.get("labels") or {}
        return all(
            key in labels if value is None else labels.get(key) == value
            for key, value in requirements
        )

    return {**whole, "items": [item for item in whole.get("items") or [] if wanted(item)]}
