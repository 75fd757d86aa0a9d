"""Safe reading of the API's JSON.

Cluster data is untrusted and may be partial or malformed (a proxy, an old server, a hostile
label): every accessor here returns a typed default instead of raising, so the core never fails
on bad input, it just knows less. What they return may be the object's own dict or list (no
copy when it is already the right shape): read it, never change it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

import msgspec

T = TypeVar("T")

RawObject = Mapping[str, object]
"""An object as the API sent it: untrusted, so read through the accessors below."""


# ``text``, ``number`` and ``mapping`` read one key of a dict (the common case: the classifier
# reads dozens a pod) with ``obj.get(key)`` in line rather than through ``get``: the call and its
# argument packing cost more than the read. A JSON object's keys are text, so the two agree.


def objects(found: Iterable[object]) -> list[RawObject]:
    """The items of a list that are objects; anything else in it (a proxy's odd answer) is dropped."""
    return [o for o in found if type(o) is dict or isinstance(o, Mapping)]


def get(obj: object, *path: str | int) -> object:
    cur: Any = obj  # narrowed by type() checks below, which mypy cannot follow
    for key in path:
        if type(cur) is dict and type(key) is str:  # the common case, first
            cur = cur.get(key)
            continue
        if cur is None:  # a missing field: skip the (slow) abstract-class checks below
            return None
        if isinstance(key, int):
            if not isinstance(cur, list) or not -len(cur) <= key < len(cur):
                return None
            cur = cur[key]
        else:
            if not isinstance(cur, Mapping):
                if isinstance(cur, msgspec.Struct):  # a typed pod or node: read by its fields
                    raise TypeError(f"{type(cur).__name__} is typed: read its fields, not {path}")
                return None
            cur = cur.get(key)
    return cur


def text(obj: object, *path: str | int, default: str = "") -> str:
    value = obj.get(path[0]) if len(path) == 1 and type(obj) is dict else get(obj, *path)
    if type(value) is str:  # the common case, first
        return value
    if value is None or isinstance(value, (dict, list)):
        return default
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def number(obj: object, *path: str | int) -> int | None:
    value = obj.get(path[0]) if len(path) == 1 and type(obj) is dict else get(obj, *path)
    if type(value) is int:  # the common case, first (a bool is not one)
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.lstrip("-").isdecimal():
        return int(value)
    return None


def mapping(obj: object, *path: str | int) -> dict[str, object]:
    value = obj.get(path[0]) if len(path) == 1 and type(obj) is dict else get(obj, *path)
    if type(value) is dict:
        return value
    if value is None:
        return {}
    return dict(value) if isinstance(value, Mapping) else {}


def items(obj: object, *path: str | int) -> list[dict[str, object]]:
    value = get(obj, *path)
    if not isinstance(value, list):
        return []
    for v in value:  # a loop, not all(...): read for every container and condition, it is hot
        if type(v) is not dict:
            return [dict(v) for v in value if isinstance(v, Mapping)]
    return value


def texts(obj: object, *path: str | int) -> list[str]:
    """A list of strings (a command's args, a volume's access modes); anything else is dropped."""
    value = get(obj, *path)
    return [v for v in value if type(v) is str] if isinstance(value, list) else []


def _strings(value: dict[str, Any]) -> dict[str, str]:
    """Labels or annotations as text: the API sends only strings; numbers are kept as text."""
    for k, v in value.items():
        if type(k) is not str or type(v) is not str:
            return {str(k): str(v) for k, v in value.items() if isinstance(v, (str, int, float))}
    return value


def _metadata(obj: object) -> Any:
    """The object's metadata when both are dicts (the common case, read in line), else None.

    The accessors below read one or two keys of it for every pod of every scan; going through
    ``get`` and its argument packing cost more than the reads themselves (2-4 % of ``ls``'s
    CPU at 10,000 pods). Anything else takes the general path, so the answers are the same.
    """
    if type(obj) is dict:
        meta = obj.get("metadata")
        if type(meta) is dict:
            return meta
    return None


def text_map(obj: object, *path: str | int) -> dict[str, str]:
    """A map of texts (labels, annotations): the API sends only strings; numbers kept as text."""
    return _strings(mapping(obj, *path))


def labels(obj: object) -> dict[str, str]:
    return text_map(obj, "metadata", "labels")


def label(obj: object, key: str) -> str:
    """One label as ``labels`` reads it, without reading them all when it is text or missing."""
    meta = _metadata(obj)
    found = meta.get("labels") if meta is not None else None
    value = found.get(key) if type(found) is dict else get(obj, "metadata", "labels", key)
    if value is None or type(value) is str:
        return value or ""
    return labels(obj).get(key, "")


def annotation_map(obj: object) -> dict[str, str]:
    return text_map(obj, "metadata", "annotations")


def _meta_text(obj: object, key: str) -> str:
    meta = _metadata(obj)
    value = meta.get(key) if meta is not None else None
    return value if type(value) is str else text(obj, "metadata", key)


def uid(obj: object) -> str:
    return _meta_text(obj, "uid")


def name(obj: object) -> str:
    return _meta_text(obj, "name")


def namespace(obj: object) -> str:
    return _meta_text(obj, "namespace")


def condition(obj: object, kind: str) -> dict[str, object]:
    for cond in items(obj, "status", "conditions"):
        if cond.get("type") == kind:
            return cond
    return {}


def controller_ref(obj: object) -> dict[str, object]:
    meta = _metadata(obj)
    if meta is not None and "ownerReferences" not in meta:
        return {}  # a driver's metadata: no owner
    refs = items(obj, "metadata", "ownerReferences")
    for ref in refs:
        if ref.get("controller") is True:
            return ref
    return {}
