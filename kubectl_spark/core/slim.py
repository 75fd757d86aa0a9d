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
_NODE_SPEC = ("taints", "unschedulable")
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


def node(obj: T) -> T | dict[str, object]:
    if not isinstance(obj, dict):
        return obj
    return {
        "metadata": _metadata(obj),
        "spec": _pick(obj.get("spec"), _NODE_SPEC),
        "status": {"conditions": (obj.get("status") or {}).get("conditions") or []}
        if isinstance(obj.get("status"), dict)
        else {},
    }


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


def pod_page(data: bytes, shared: dict[str, str] | None = None) -> dict[str, object] | None:
    """A pod list's answer with its items already ``pod``-slim; None when it is not as expected.

    None (an item that is not an object, a field of another type, JSON msgspec refuses): the
    caller parses the answer whole and slims it item by item, which copes with anything.

    ``shared``: texts already read, by value, kept for the pages of one list (``_share``).
    """
    try:
        doc = _POD_PAGE.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("items"), list):
        return None
    doc["items"] = [_as_pod(item, shared) for item in doc["items"]]
    return doc


def _as_pod(item: dict[str, Any], shared: dict[str, str] | None) -> dict[str, Any]:
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
        _share(meta, spec, status, shared)
    return {"metadata": meta, "spec": spec, "status": status}


# Of a pod's texts, those many pods repeat: its application's labels and driver (the owner),
# its namespace, node and phase, the seconds it was made and started in. Read once per list
# and held once (the pod's name, uid, resourceVersion and IP are its own and are not looked up).
_SHARED_META = ("namespace", "creationTimestamp")
_SHARED_OWNER = ("apiVersion", "kind", "name", "uid")
_SHARED_SPEC = ("nodeName", "restartPolicy", "priorityClassName")
_SHARED_STATUS = ("phase", "reason", "message", "startTime")


def _share(
    meta: dict[str, Any], spec: dict[str, Any], status: dict[str, Any], shared: dict[str, str]
) -> None:
    """Each repeated text of a pod made the one object equal to it that the list already holds.

    At 50,000 pods, 22 texts a pod, seven in eight of them repeats: held once, the peak RSS of
    ``ls -A`` fell from 259 to 196 MiB (2.5x to 1.9x the list's JSON), for about 5 µs of CPU a
    pod (docs/performance.md).
    """
    keep = shared.setdefault
    refs = meta.get("ownerReferences")
    owners = (
        [(ref, _SHARED_OWNER) for ref in refs if type(ref) is dict] if type(refs) is list else []
    )
    for obj, keys in (
        (meta, _SHARED_META),
        (spec, _SHARED_SPEC),
        (status, _SHARED_STATUS),
        *owners,
    ):
        for key in keys:
            value = obj.get(key)
            if type(value) is str:
                obj[key] = keep(value, value)
    _share_values(meta.get("labels"), keep)
    for container in status.get("containerStatuses") or ():
        name = container.get("name")
        if type(name) is str:
            container["name"] = keep(name, name)
        for key in ("state", "lastState"):
            state = container.get(key)
            if type(state) is dict:
                for told in state.values():  # running, terminated, waiting
                    _share_values(told, keep)


_Keep = Callable[[str, str], str]


def _share_values(obj: object, keep: _Keep) -> None:
    if type(obj) is dict:
        for key, value in obj.items():
            if type(value) is str:
                obj[key] = keep(value, value)


def slim(kind: str, obj: T) -> T | dict[str, object]:
    """``kind`` is a LiveCluster resource key: pods, nodes, or anything else."""
    if kind == "pods":
        return pod(obj)
    if kind == "nodes":
        return node(obj)
    return other(obj)
