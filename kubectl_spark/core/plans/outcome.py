"""Whether a write whose answer never came took effect, read from the object as it is now.

A write is sent once (kube/client.py): when its answer is lost, re-sending could apply it
twice (a second Lease transition, a second copy of a driver), so the action re-reads the object
and decides from what it sees. Pure: the object (or None when it is gone) in, a verdict out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubectl_spark.core import raw
from kubectl_spark.core.raw import RawObject

from .base import Operation

# What the server adds or rewrites in an object it stores: never part of what was asked.
SERVER_SET = ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields")


def took_effect(op: Operation, found: RawObject | None) -> bool:
    """Whether ``op`` shows in ``found`` (the object at its path now; None: not found)."""
    if op.verb == "delete":
        if found is None:
            return True
        replaced = bool(op.uid) and raw.uid(found) != op.uid
        return replaced or bool(raw.text(found, "metadata", "deletionTimestamp"))
    if found is None:
        return False
    wanted = op.body or {}
    if op.verb == "patch":
        return _merged(wanted, found)
    if op.verb == "create":
        # A created object is defaulted (a pod's tolerations, a container's pull policy):
        # its name with the labels and annotations asked for is what marks it as this one.
        meta = raw.mapping(_asked(wanted), "metadata")
        asked = {k: meta[k] for k in ("labels", "annotations") if k in meta}
        return _holds(asked, raw.mapping(found, "metadata"))
    if op.verb == "update":
        return _holds(_asked(wanted), found)
    return False


def _asked(body: Mapping[str, object]) -> dict[str, object]:
    """The body without what the server sets (a create's or update's own metadata fields)."""
    meta = {k: v for k, v in raw.mapping(body, "metadata").items() if k not in SERVER_SET}
    meta.pop("generateName", None)
    out = {k: v for k, v in body.items() if k not in ("status", "metadata")}
    return {**out, "metadata": meta} if meta else out


def _holds(wanted: Any, found: Any) -> bool:
    """Every field asked for is there with its value (the server may add fields)."""
    if isinstance(wanted, dict):
        return isinstance(found, dict) and all(
            k in found and _holds(v, found[k]) for k, v in wanted.items()
        )
    if isinstance(wanted, list):
        return (
            isinstance(found, list)
            and len(wanted) == len(found)
            and all(_holds(w, f) for w, f in zip(wanted, found, strict=True))
        )
    return bool(wanted == found)


def _merged(patch: Any, found: Any) -> bool:
    """A JSON merge patch (RFC 7386) shows: null removed, objects merged, the rest replaced."""
    if not isinstance(patch, dict):
        return _holds(patch, found)  # replaced whole; the server may default list items' fields
    if not isinstance(found, dict):
        return False
    for key, value in patch.items():
        if value is None:
            if key in found:
                return False
        elif key not in found or not _merged(value, found[key]):
            return False
    return True


def reached(op: Operation, found: RawObject | None) -> str:
    """Why the end ``op`` wants already holds (``found``: the object at its path now), or "".

    What the API server refuses is not always a failure of the plan: a pod already gone is the
    end a delete wants (a garbage collector, a kubelet or another user got there first), and one
    whose name now belongs to another UID is not this plan's to touch; a create that finds the
    object made as asked (a half-done action run again) is done. Running the same action again
    then finishes what an earlier run left half-done.
    """
    replaced = found is not None and bool(op.uid) and raw.uid(found) != op.uid
    if op.verb == "delete":
        if found is None:
            return "already gone"
        if replaced:
            return (
                f"already gone (a {op.resource[:-1]} of that name now has another uid: not touched)"
            )
        return ""
    if op.verb == "patch" and op.uid:
        if found is None:
            return f"the {op.resource[:-1]} is gone: nothing left to mark"
        if replaced:
            return f"the {op.resource[:-1]} is gone (one of that name now has another uid: not touched)"
        return ""
    if op.verb == "create" and found is not None and _made_as_asked(op, found):
        return "already exists as asked"
    return ""


def _made_as_asked(op: Operation, found: RawObject) -> bool:
    """``found`` holds what ``op`` would create: its labels and every field but its metadata.

    Annotations are left out: kubectl spark's own say who acted and when, which differ from run
    to run of the same action.
    """
    wanted = _asked(op.body or {})
    labels = raw.mapping(wanted, "metadata", "labels")
    rest = {k: v for k, v in wanted.items() if k != "metadata"}
    return _holds(labels, raw.mapping(found, "metadata", "labels")) and _holds(rest, found)
