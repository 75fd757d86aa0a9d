"""The part of each object the core reads, so long-lived views hold thousands of pods cheaply.

A watched pod is kept for as long as the view is open; a full pod (environment, volumes,
tolerations, managedFields) is several times the size of what grouping, loss reasons and
alerts read. Pods are typed (``core.pod.Pod``: the fields the core reads, nothing else), and
trimmed of the little the types still hold that no reader needs (``_trimmed``); other objects
(Jobs, Events, SparkApplications, claims) keep the API's JSON shape with their metadata
slim. Views that show a whole object (YAML, an action's plan) read it again from the API.

A pod list's page is decoded in one pass (``pod_page``): msgspec decodes the fields the types
name straight from the page's bytes and skips the rest without building it, where parsing the
whole page and then picking spent three quarters of its time building what is thrown away
(environments, volumes, managedFields). A pod already parsed (a watch event, a page the decoder
refused) is typed by the same structs (``pod``), so there is one list of what a pod keeps; a
test still compares a page's items with its pods typed one by one, and
``KUBECTL_SPARK_EAGER_KUBERNETES`` turns the page's fast path off.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict, TypeVar

import msgspec

from .pod import CLUSTER, Pod, as_json

T = TypeVar("T")

# Of a container's environment only what the core reads: where executors say their driver is
# (``core.provenance``), for a driver outside the cluster.
READ_ENV = frozenset({"SPARK_DRIVER_URL"})
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


def _pick(obj: Any, keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: obj[k] for k in keys if k in obj} if isinstance(obj, dict) else {}


def _metadata(obj: dict[str, Any]) -> dict[str, Any]:
    meta = _pick(obj.get("metadata"), _METADATA)
    notes = meta.get("annotations")
    if isinstance(notes, dict) and any(k in notes for k in _DROPPED_ANNOTATIONS):
        meta["annotations"] = {k: v for k, v in notes.items() if k not in _DROPPED_ANNOTATIONS}
    return meta


def pod(obj: object) -> Pod:
    """One pod already parsed (a watch event, a kept copy): typed, and trimmed as a page's are."""
    return _trimmed(Pod.of(obj), None)


def other(obj: T) -> T | dict[str, object]:
    """Jobs, Events, SparkApplications, volumes: small, read in many places; only metadata slims."""
    if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
        return obj
    return {**obj, "metadata": _metadata(obj)}


def shape(name: str, fields: Mapping[str, object]) -> object:
    """A TypedDict of ``fields``, each optional: msgspec decodes those keys and skips the rest."""
    return TypedDict(name, dict(fields), total=False)  # type: ignore[operator]


# kind: a 200 answer that is a Status, not a list, is the caller's error to tell
_POD_PAGE = msgspec.json.Decoder(
    shape("PodList", {"kind": Any, "metadata": Any, "items": list[Pod]})
)


def pod_page(data: bytes, shared: dict[object, object] | None = None) -> dict[str, object] | None:
    """A pod list's answer with its items typed (``core.pod.Pod``) and trimmed, or None.

    None (an item that is not an object, a field of another type, JSON msgspec refuses): the
    caller parses the answer whole and types it item by item (``pod``), which copes with
    anything.

    ``shared``: what the pods of one list repeat, kept for its pages (``_share``).
    """
    try:
        doc = _POD_PAGE.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("items"), list):
        return None
    doc["items"] = [_trimmed(item, shared) for item in doc["items"]]
    return doc


def _trimmed(item: Pod, shared: dict[object, object] | None) -> Pod:
    """A pod without what it need not hold, sharing what the pods before it hold already.

    kubectl apply's copy of the whole object is the largest annotation and nothing reads it;
    of the volumes only the claims are read (a ReadWriteOncePod claim an earlier attempt holds
    is why a new one waits), of the environment only ``READ_ENV``.
    """
    if item.source != CLUSTER or item.seen_at:  # the API's JSON has no say in where it was read
        item.source, item.seen_at = CLUSTER, ""
    meta = item.metadata
    notes = meta.annotations
    if notes and any(k in notes for k in _DROPPED_ANNOTATIONS):
        meta.annotations = {k: v for k, v in notes.items() if k not in _DROPPED_ANNOTATIONS}
    spec = item.spec
    if spec.volumes:
        spec.volumes = [v for v in spec.volumes if v.persistent_volume_claim is not None]
    for container in spec.containers:
        if container.env:
            container.env = [e for e in container.env if e.name in READ_ENV]
    if shared is not None:
        _share(item, shared)
    return item


def _share(item: Pod, shared: dict[object, object]) -> None:
    """What a pod repeats of the pods before it in the list made the one object they hold.

    An application's executors name one driver (the same owner references), carry its
    labels' values, and most started in the same few seconds (the same running container's
    status). At 50,000 pods those copies are most of what the pods hold; held once, the peak
    RSS of ``ls -A`` fits its target (docs/performance.md). Whole lists are shared, by one
    lookup, where sharing each text in them cost about 5 µs a pod. Typed, equal means the same
    reading (a flag is never a number here), and shared objects are read, never changed.
    """
    meta = item.metadata
    refs = meta.owner_references
    if len(refs) == 1:
        held = shared.setdefault(("owner", refs[0].uid), refs)
        if held is not refs and held == refs:
            meta.owner_references = held
    labels = meta.labels
    if labels:
        keep = shared.setdefault
        for name, value in labels.items():
            labels[name] = keep(value, value)  # type: ignore[assignment]  # the text held
    status = item.status
    statuses = status.container_statuses
    if len(statuses) == 1 and (state := statuses[0].state) is not None and state.running:
        held = shared.setdefault(("running", state.running.started_at), statuses)
        if held is not statuses and held == statuses:
            status.container_statuses = held


def slim(kind: str, obj: T) -> T | dict[str, object]:
    """What the core reads of an object of ``kind`` (a LiveCluster resource key), as JSON.

    For serving kept objects (the in-cluster recorder): a pod typed and trimmed, then written
    back in the API's shape; anything else as ``other`` keeps it.
    """
    if kind == "pods":
        return as_json(pod(obj))
    return other(obj)
