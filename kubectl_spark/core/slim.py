"""The part of each object the core reads, so long-lived views hold thousands of pods cheaply.

A watched pod is kept for as long as the view is open; a full pod (environment, volumes,
tolerations, managedFields) is several times the size of what grouping, loss reasons and
alerts read. ``slim`` keeps the API's JSON shape, so the core cannot tell the difference:
``tests/functional/test_live_analysis.py`` checks that the analysis of slim objects equals the
analysis of whole ones in each kind of scenario. Views that show a whole object (YAML, an action's
plan) read it again from the API.

A pod list's page is decoded slim in one pass (``pod_page``): msgspec decodes the keys ``slim``
keeps and skips the rest without building them, where parsing the whole page and then
picking spent three quarters of its time building what is thrown away (environments, volumes,
managedFields). A pod already parsed (a watch event, a page the decoder refused) is slimmed
by the same schema (``pod`` follows it through the object), so there is one list of what a
pod keeps, not a decoder and a picker to keep alike; a test still compares a page's items
with its pods slimmed one by one, and ``KUBECTL_SPARK_EAGER_KUBERNETES`` turns the page's
fast path off.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, TypedDict, TypeVar

import msgspec

T = TypeVar("T")

# Large annotations nothing here reads (kubectl apply's copy of the whole object).
_DROPPED_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)
_METADATA = (
    "name",
    "namespace",
    "uid",
    "labels",
    "annotations",
    "ownerReferences",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "resourceVersion",
)
_POD_SPEC = ("nodeName", "restartPolicy", "priority", "priorityClassName")
# podIP: Spark's executor list names an executor by host:port, the pod IP (Deployment executors)
_POD_STATUS = ("phase", "reason", "message", "startTime", "conditions", "podIP")
_CONTAINER_STATUS = ("name", "state", "lastState", "restartCount", "ready", "started")
# Of the init containers' specs only what tells a sidecar (restartPolicy Always): its restarts
# count in RESTARTS as kubectl counts them.
_INIT_CONTAINER = ("name", "restartPolicy")
# Of the containers' specs only their names and ports: the driver's spark-ui port is where its
# executor list is asked for (``kube.sparkapi``).
_CONTAINER = ("name", "ports")
# Of the volumes only the claims (``core.alerts`` reads which claim two attempts share).
_VOLUME = ("name", "persistentVolumeClaim")


def _pick(obj: Any, keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: obj[k] for k in keys if k in obj} if isinstance(obj, dict) else {}


def _metadata(obj: dict[str, Any]) -> dict[str, Any]:
    meta = _pick(obj.get("metadata"), _METADATA)
    notes = meta.get("annotations")
    if isinstance(notes, dict) and any(k in notes for k in _DROPPED_ANNOTATIONS):
        meta["annotations"] = {k: v for k, v in notes.items() if k not in _DROPPED_ANNOTATIONS}
    return meta


def pod(obj: T) -> T | dict[str, object]:
    """One pod already parsed (a watch event, a kept copy), slimmed by ``pod_page``'s schema.

    One schema says what a pod keeps, read two ways: msgspec decodes a page's bytes by it, and
    ``_walk`` follows it through an object already parsed. Where the object is not shaped as
    the schema says (a hand-made or hostile pod), a part that should be an object is kept empty
    and a list that is not one is left out, so the core reads it as missing, as ``raw`` would.
    """
    if not isinstance(obj, dict):
        return obj  # malformed: the core's accessors cope, and it is rare
    return _as_pod(_walk(obj, _POD_SHAPE), None)


def _walk(value: object, shape: Any) -> dict[str, Any]:
    """``value``'s keys that ``shape`` (a TypedDict of ``_shape``) names, followed down."""
    if not isinstance(value, dict):
        return {}
    kept: dict[str, Any] = {}
    for key, kind in shape.__annotations__.items():
        if key not in value:
            continue
        found = value[key]
        if kind is Any:
            kept[key] = found
        elif isinstance(kind, types.GenericAlias):  # a list of shapes
            if isinstance(found, list):
                kept[key] = [_walk(item, kind.__args__[0]) for item in found]
        else:
            kept[key] = _walk(found, kind)
    return kept


def other(obj: T) -> T | dict[str, object]:
    """Jobs, Events, SparkApplications, volumes: small, read in many places; only metadata slims."""
    if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
        return obj
    return {**obj, "metadata": _metadata(obj)}


def _shape(name: str, fields: dict[str, Any]) -> Any:
    """A TypedDict of ``fields``, each optional: msgspec decodes those keys and skips the rest."""
    return TypedDict(name, fields, total=False)  # type: ignore[operator]


def _list_of(shape: Any) -> Any:
    return types.GenericAlias(list, (shape,))


def _any(keys: tuple[str, ...]) -> dict[str, Any]:
    return dict.fromkeys(keys, Any)


_CONTAINER_STATUSES = _list_of(_shape("ContainerStatus", _any(_CONTAINER_STATUS)))
_POD_SHAPE = _shape(
    "Pod",
    {
        "metadata": _shape("Metadata", _any(_METADATA)),
        "spec": _shape(
            "Spec",
            {
                **_any(_POD_SPEC),
                "initContainers": _list_of(_shape("Init", _any(_INIT_CONTAINER))),
                "containers": _list_of(_shape("Container", _any(_CONTAINER))),
                "volumes": _list_of(_shape("Volume", _any(_VOLUME))),
            },
        ),
        "status": _shape(
            "Status",
            {
                **_any(_POD_STATUS),
                "containerStatuses": _CONTAINER_STATUSES,
                "initContainerStatuses": _CONTAINER_STATUSES,
            },
        ),
    },
)
# kind: a 200 answer that is a Status, not a list, is the caller's error to tell
_POD_PAGE = msgspec.json.Decoder(
    _shape("PodList", {"kind": Any, "metadata": Any, "items": _list_of(_POD_SHAPE)})
)


def pod_page(data: bytes, shared: dict[object, object] | None = None) -> dict[str, object] | None:
    """A pod list's answer with its items already ``pod``-slim; None when it is not as expected.

    None (an item that is not an object, a field of another type, JSON msgspec refuses): the
    caller parses the answer whole and slims it item by item, which copes with anything.

    ``shared``: what the pods of one list repeat, kept for its pages (``_share``).
    """
    try:
        doc = _POD_PAGE.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("items"), list):
        return None
    doc["items"] = [_as_pod(item, shared) for item in doc["items"]]
    return doc


def _as_pod(item: dict[str, Any], shared: dict[object, object] | None) -> dict[str, Any]:
    """The choices beyond keys that slimming makes, for a page's item and a walked pod alike.

    Their keys' order is the server's for a page, the schema's for a walked pod, which no
    reader depends on (a test compares every command's output both ways).
    """
    meta = item.get("metadata", {})
    notes = meta.get("annotations")
    if isinstance(notes, dict) and any(k in notes for k in _DROPPED_ANNOTATIONS):
        meta["annotations"] = {k: v for k, v in notes.items() if k not in _DROPPED_ANNOTATIONS}
    spec = item.get("spec", {})
    containers = spec.get("containers")
    if containers is not None and not any("ports" in c for c in containers):
        del spec["containers"]
    volumes = spec.get("volumes")
    if volumes is not None:
        # Claims only: a ReadWriteOncePod claim an earlier attempt holds is why a new one waits.
        claims = [v for v in volumes if _VOLUME[1] in v]
        if claims:
            spec["volumes"] = claims
        else:
            del spec["volumes"]
    status = item.get("status", {})
    if shared is not None:
        _share(meta, status, shared)
    return {"metadata": meta, "spec": spec, "status": status}


def _share(meta: dict[str, Any], status: dict[str, Any], shared: dict[object, object]) -> None:
    """What a pod repeats of the pods before it in the list made the one object they hold.

    An application's executors name one driver (the same ``ownerReferences``), carry its
    labels' values, and most started in the same few seconds (the same running container's
    status). At 50,000 pods those copies are most of what the pods hold; held once, the peak
    RSS of ``ls -A`` fits its target (docs/performance.md). Whole lists are shared, by two
    lookups, where sharing each text in them cost about 5 µs a pod.

    Only a list equal to the one held is shared, and equal must mean the same reading:
    ``==`` holds ``1``, ``1.0`` and ``True`` equal, so a list is shared only where its values
    are text and flags (and a running container's restart count a whole number: ``_owner_key``,
    ``_status_key``); a pod shaped otherwise keeps its own. Shared objects are read, never
    changed (``raw``'s rule).
    """
    _share_list(meta, "ownerReferences", _owner_key, shared)
    labels = meta.get("labels")
    if type(labels) is dict:
        keep = shared.setdefault
        for name, value in labels.items():
            if type(value) is str:
                labels[name] = keep(value, value)
    _share_list(status, "containerStatuses", _status_key, shared)


def _share_list(
    obj: dict[str, Any],
    field: str,
    key_of: Callable[[object], tuple[str, str] | None],
    shared: dict[object, object],
) -> None:
    """``obj[field]``, a list of one item, made the equal one the list holds under its key."""
    found = obj.get(field)
    if type(found) is list and len(found) == 1:
        key = key_of(found[0])
        if key is not None:
            held = shared.setdefault(key, found)
            if held is not found and held == found:
                obj[field] = held


# The types a shared list's values may have, each field as the API sends it (``_share``).
_TEXT_OR_FLAG = frozenset({str, bool})
_WHOLE_OR_NONE = frozenset({int, type(None)})
_FLAG_OR_NONE = frozenset({bool, type(None)})
_TEXT_OR_NONE = frozenset({str, type(None)})


def _owner_key(ref: object) -> tuple[str, str] | None:
    """An owner reference's key among the list's: its uid.

    None where a value is neither text nor a flag: a number would be equal to a flag.
    """
    if type(ref) is not dict:
        return None
    uid = ref.get("uid")
    if type(uid) is not str or not _TEXT_OR_FLAG.issuperset(map(type, ref.values())):
        return None
    return ("owner", uid)


def _status_key(container: object) -> tuple[str, str] | None:
    """A running container's status's key: when it started; None for any other shape.

    Its keys are the schema's (``_CONTAINER_STATUS``); each must hold what the API sends
    there (text, a flag, a whole number, an empty last state) or nothing, so that equal
    statuses read the same.
    """
    if type(container) is not dict:
        return None
    state = container.get("state")
    if type(state) is not dict or len(state) != 1:
        return None
    running = state.get("running")
    if type(running) is not dict or len(running) != 1:
        return None
    started = running.get("startedAt")
    last = container.get("lastState")
    if (
        type(started) is not str
        or not (last is None or (type(last) is dict and not last))
        or type(container.get("restartCount")) not in _WHOLE_OR_NONE
        or type(container.get("ready")) not in _FLAG_OR_NONE
        or type(container.get("started")) not in _FLAG_OR_NONE
        or type(container.get("name")) not in _TEXT_OR_NONE
    ):
        return None
    return ("running", started)


def slim(kind: str, obj: T) -> T | dict[str, object]:
    """``kind`` is a LiveCluster resource key: pods, or anything else but nodes (``core.node``)."""
    if kind == "pods":
        return pod(obj)
    return other(obj)
