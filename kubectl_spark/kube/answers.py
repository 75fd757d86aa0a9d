"""What the server answered: bodies, JSON, list pages, objects that cannot be used.

A body is read to a deadline, JSON parsed at any depth, a list page checked, an object that
cannot be used named. The gateway's HTTP policy (``client.Api``) reads through these; each says what went wrong in
words a person can act on, and none lets one bad object cost the whole answer.
"""

from __future__ import annotations

import contextlib
import time
from functools import partial
from typing import Any

import orjson
import urllib3

from kubectl_spark import errors
from kubectl_spark.core.pod import Pod

from . import jsondeep
from .watchdog import DEADLINES

TIMER_SLACK = 0.05  # a socket timeout fires this close to the budget, or later
MAX_PAGES = 10_000  # 5 million objects at 500 a page: more is a server paging in circles
# kube-apiserver fills a page before it answers (storage/etcd3/store.go GetList reads on
# until ``limit`` items match or none are left): pages that keep coming empty go nowhere.
EMPTY_PAGES = 50
DEEPEST = 100  # levels of nesting: a Spark object needs about 20; orjson writes at most 254
# Built-in groups whose objects the API server validates against a fixed schema; a custom
# resource (the operators' SparkApplication) may hold anything, nested as deep as 10,000.
BUILT_IN = ("/api/v1", "/apis/batch/", "/apis/apps/", "/apis/coordination.k8s.io/")


def free_form(path: str) -> bool:
    return not path.startswith(BUILT_IN)


def page_of(doc: Any, what: str) -> tuple[list[Any], dict[str, Any]]:
    """A list answer's items and metadata, or a clear error for an answer that is not a list."""
    if not isinstance(doc, dict):
        raise errors.ServerError(f"{what}: the server's answer is not a list", status=0)
    if doc.get("kind") == "Status":
        said = " ".join(str(doc.get("message") or doc.get("reason") or "").split())[:200]
        raise errors.ServerError(
            f"{what}: the server answered a Status, not a list" + (f": {said}" if said else ""),
            status=0,
        )
    items = doc.get("items")
    if items is not None and not isinstance(items, list):
        raise errors.ServerError(f"{what}: the server's answer has no list of items", status=0)
    meta = doc.get("metadata")
    return items or [], meta if isinstance(meta, dict) else {}


def unusable(item: Any, *, deep: bool = True) -> str:
    """Why an object from the server cannot be used ("" when it can).

    A pod typed from a page's bytes (``core.slim.pod_page``) is shaped by its struct: only its
    uid is left to check.
    """
    if isinstance(item, Pod):
        return "" if item.metadata.uid else "it has no metadata.uid"
    if not isinstance(item, dict):
        return "not an object"
    meta = item.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("uid"), str) or not meta["uid"]:
        return "it has no metadata.uid"
    if deep and jsondeep.deeper_than(item, DEEPEST):
        return f"nested deeper than {DEEPEST} levels"
    return ""


def uid_of(item: Any) -> str:
    """The uid of an object ``unusable`` found usable (a typed pod's, or the JSON's)."""
    return item.metadata.uid if isinstance(item, Pod) else str(item["metadata"]["uid"])


def named(item: Any) -> str:
    """``Kind namespace/name`` of an object from the server, for a note."""
    if isinstance(item, Pod):
        return f"Pod {item.metadata.namespace}/{item.metadata.name}"
    if not isinstance(item, dict):
        return "an item"
    found = item.get("metadata")
    meta: dict[str, Any] = found if isinstance(found, dict) else {}
    name = "/".join(str(meta.get(k)) for k in ("namespace", "name") if meta.get(k))
    return f"{item.get('kind') or 'object'} {name or '(no name)'}"


def read_body(raw: Any, end: float | None) -> bytes | None:
    """The whole body, or None when ``end`` (time.monotonic()) came first.

    urllib3's read timeout is per socket read: a server sending one byte every half second
    never trips it. The process's watchdog shuts the socket at the deadline instead, which ends
    a read blocked in another thread at once.
    """
    if end is None:
        return bytes(raw.data)
    timer = DEADLINES.watch(end, partial(cut, raw))
    data = b""
    try:
        data = bytes(raw.data)  # a cut socket ends the read: what came, or an error
    except (urllib3.exceptions.HTTPError, OSError):
        if time.monotonic() < end:
            raise
    finally:
        DEADLINES.cancel(timer)
    if time.monotonic() >= end:
        raw.close()  # never back to the pool: the rest of that answer is still on its way
        return None
    return data


def cut(raw: Any) -> None:
    """Shut a response's socket, whoever reads it: the read returns at once."""
    with contextlib.suppress(RuntimeError, ValueError, OSError):
        raw.shutdown()  # unless already released or closed: the read is over then anyway


def parse(data: bytes) -> Any:
    """JSON at any depth kube-apiserver stores; text that is not JSON as text."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        deep = jsondeep.loads(data)  # orjson stops at 1,024 levels; kube-apiserver at 10,000
        return data.decode("utf-8", "replace") if deep is jsondeep.NOT_JSON else deep


def seconds_text(value: float | None) -> str:
    return "none" if value is None else f"{value:g}s"
