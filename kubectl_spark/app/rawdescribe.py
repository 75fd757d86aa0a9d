"""``kubectl describe pod`` and ``describe node`` as text, from the API's JSON (the TUI's raw views).

The sections and their order are kubectl's (k8s.io/kubectl/pkg/describe/describe.go,
``describePod`` and ``describeNode``), kept to what a Spark operator reads at 3 a.m.: where a
pod runs, each container's state and last state with exit code and reason, conditions, the
pod's Events, and of its node the taints, conditions and allocatable resources.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from kubectl_spark.knowledge.times import age, parse

INDENT = "  "


def _field(name: str, value: object, width: int = 16) -> str:
    return f"{name + ':':<{width}}{value if value not in (None, '') else '<none>'}"


def _labels(mapping: Mapping[str, Any] | None) -> list[str]:
    pairs = sorted((mapping or {}).items())
    return [f"{k}={v}" for k, v in pairs] or ["<none>"]


def _block(name: str, lines: list[str]) -> list[str]:
    """``Labels:  a=b`` with the others under the first, as kubectl aligns them."""
    first, *rest = lines
    return [_field(name, first), *(" " * 16 + line for line in rest)]


def _state(state: Mapping[str, Any] | None) -> list[str]:
    """A container state, as kubectl's describeContainerState prints it."""
    if not state:
        return ["<none>"]
    kind, detail = next(iter(state.items()))
    detail = detail or {}
    lines = [kind.capitalize()]
    for key, label in (
        ("reason", "Reason"),
        ("message", "Message"),
        ("exitCode", "Exit Code"),
        ("signal", "Signal"),
        ("startedAt", "Started"),
        ("finishedAt", "Finished"),
    ):
        if detail.get(key) not in (None, ""):
            lines.append(f"{INDENT}{label}: {detail[key]}")
    return lines


def _resources(container: Mapping[str, Any]) -> list[str]:
    out = []
    for kind in ("limits", "requests"):
        values = (container.get("resources") or {}).get(kind) or {}
        if values:
            out.append(f"{kind.capitalize()}:")
            out += [f"{INDENT}{k}: {v}" for k, v in sorted(values.items())]
    return out


def describe_pod(pod: Mapping[str, Any], events: Iterable[Mapping[str, Any]], now: datetime) -> str:
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    owner = next(iter(meta.get("ownerReferences") or []), None)
    phase = str(status.get("phase") or "")
    if meta.get("deletionTimestamp"):
        phase = f"Terminating (since {meta['deletionTimestamp']})"
    lines = [
        _field("Name", meta.get("name")),
        _field("Namespace", meta.get("namespace")),
        _field("UID", meta.get("uid")),
        _field("Node", spec.get("nodeName")),
        _field("Start Time", status.get("startTime")),
        *_block("Labels", _labels(meta.get("labels"))),
        _field("Status", phase),
        *([_field("Reason", status["reason"])] if status.get("reason") else []),
        *([_field("Message", status["message"])] if status.get("message") else []),
        _field("IP", status.get("podIP")),
        _field("Controlled By", f"{owner.get('kind')}/{owner.get('name')}" if owner else None),
        _field("QoS Class", status.get("qosClass")),
    ]
    statuses = {
        c.get("name"): c
        for c in [
            *(status.get("initContainerStatuses") or []),
            *(status.get("containerStatuses") or []),
        ]
    }
    for title, key in (("Init Containers:", "initContainers"), ("Containers:", "containers")):
        containers = spec.get(key) or []
        if not containers:
            continue
        lines.append(title)
        for container in containers:
            seen = statuses.get(container.get("name")) or {}
            lines.append(f"{INDENT}{container.get('name')}:")
            body = [
                _field("Image", container.get("image")),
                *_block("State", _state(seen.get("state"))),
                *_block("Last State", _state(seen.get("lastState"))),
                _field("Ready", seen.get("ready")),
                _field("Restart Count", seen.get("restartCount", 0)),
                *_resources(container),
            ]
            lines += [INDENT * 2 + line for line in body]
    conditions = status.get("conditions") or []
    if conditions:
        lines.append("Conditions:")
        lines.append(f"{INDENT}{'Type':<28}Status  Reason")
        lines += [
            f"{INDENT}{c.get('type', ''):<28}{c.get('status', ''):<8}{c.get('reason') or ''}"
            for c in conditions
        ]
    lines += _block(
        "Tolerations",
        [
            f"{t.get('key', '')}:{t.get('effect', '')} op={t.get('operator', 'Equal')}"
            + (f" for {t['tolerationSeconds']}s" if t.get("tolerationSeconds") is not None else "")
            for t in spec.get("tolerations") or []
        ]
        or ["<none>"],
    )
    lines += _events(events, now)
    return "\n".join(lines) + "\n"


def _events(events: Iterable[Mapping[str, Any]], now: datetime) -> list[str]:
    """The Events table as kubectl prints it: oldest first, by when last seen."""

    def when(e: Mapping[str, Any]) -> str:
        return str(e.get("lastTimestamp") or e.get("eventTime") or e.get("firstTimestamp") or "")

    ordered = sorted(events, key=when)
    if not ordered:
        return ["Events:         <none>"]
    out = ["Events:", f"{INDENT}{'Type':<8}{'Reason':<22}{'Age':<8}{'From':<20}Message"]
    for e in ordered:
        source = (e.get("source") or {}).get("component") or e.get("reportingComponent") or ""
        out.append(
            f"{INDENT}{e.get('type', ''):<8}{e.get('reason', ''):<22}"
            f"{age(parse(when(e)), now):<8}{source:<20}{e.get('message', '')}"
        )
    return out


def describe_node(node: Mapping[str, Any], now: datetime) -> str:
    meta = node.get("metadata") or {}
    spec = node.get("spec") or {}
    status = node.get("status") or {}
    taints = [
        f"{t.get('key')}{'=' + t['value'] if t.get('value') else ''}:{t.get('effect')}"
        for t in spec.get("taints") or []
    ]
    lines = [
        _field("Name", meta.get("name")),
        *_block("Labels", _labels(meta.get("labels"))),
        _field("CreationTimestamp", meta.get("creationTimestamp")),
        *_block("Taints", taints or ["<none>"]),
        _field("Unschedulable", bool(spec.get("unschedulable"))),
        "Conditions:",
        f"{INDENT}{'Type':<22}{'Status':<8}{'LastHeartbeatTime':<22}Reason",
    ]
    for c in status.get("conditions") or []:
        heartbeat = age(parse(c.get("lastHeartbeatTime")), now) + " ago"
        lines.append(
            f"{INDENT}{c.get('type', ''):<22}{c.get('status', ''):<8}{heartbeat:<22}"
            f"{c.get('reason') or ''}"
        )
    for title, key in (("Capacity:", "capacity"), ("Allocatable:", "allocatable")):
        values = status.get(key) or {}
        lines.append(title)
        lines += [f"{INDENT}{k}: {v}" for k, v in sorted(values.items())] or [f"{INDENT}<none>"]
    return "\n".join(lines) + "\n"
