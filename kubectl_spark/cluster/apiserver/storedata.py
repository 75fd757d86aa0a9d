"""What the store keeps: stored objects, per-resource storage, list snapshots, delete options."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import orjson

from . import kinds
from .errors import (
    bad_request,
    conflict,
    invalid,
)
from .resources import ResourceType
from .selectors import FieldSelector, LabelSelector
from .watch import Watcher, WatchEvent

Key = tuple[str, str]  # (namespace, name); namespace is "" for cluster-scoped objects
GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
CONTINUE_TOO_OLD = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this response "
    "to retrieve the remainder of the results. Continuing with the provided token results in an "
    "inconsistent list - objects that were created, modified, or deleted between the time the "
    "first chunk was returned and now may show up in the list."
)
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
# How long a deleted namespace stays Terminating after it is emptied (the namespace controller's
# pass; a real one takes a fraction of a second to a few).
NAMESPACE_FINISH_SECONDS = 1.0


def without_type_meta(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}


@dataclass
class Stored:
    obj: dict[str, Any]
    _raw: bytes | None = None
    _list_raw: bytes | None = None

    @property
    def raw(self) -> bytes:
        if self._raw is None:
            self._raw = orjson.dumps(self.obj)
        return self._raw

    @property
    def list_raw(self) -> bytes:
        """As a built-in list's item, without apiVersion and kind.

        kube-apiserver encodes a typed list's items without their TypeMeta; custom resources
        keep theirs.
        """
        if self._list_raw is None:
            self._list_raw = orjson.dumps(without_type_meta(self.obj))
        return self._list_raw

    @property
    def rv(self) -> int:
        return int(self.obj["metadata"]["resourceVersion"])


def list_order(stored: Stored) -> tuple[str, str]:
    """Where an object comes in a list: by namespace, then name (etcd's key order)."""
    meta = stored.obj["metadata"]
    return meta.get("namespace", ""), meta["name"]


def selected(
    rt: ResourceType,
    obj: dict[str, Any],
    namespace: str,
    labels: LabelSelector,
    fields: FieldSelector,
    getters: dict[str, Any],
) -> bool:
    """Whether a list or a watch of ``namespace`` with these selectors holds ``obj``."""
    meta = obj["metadata"]
    if rt.namespaced and namespace and meta.get("namespace") != namespace:
        return False
    if not labels.empty and not labels.matches(meta.get("labels")):
        return False
    return fields.empty or fields.matches(obj, getters)


@dataclass
class Storage:
    """All objects of one storage key (e.g. every core Event, whichever API version reads it)."""

    rt: ResourceType
    objects: dict[Key, Stored] = field(default_factory=dict)
    history: deque[WatchEvent] = field(default_factory=deque)
    compacted_rv: int = 0
    last_write_rv: int = 0
    watchers: set[Watcher] = field(default_factory=set)


@dataclass
class Snapshot:
    rv: int
    storage_key: str
    items: list[Stored]
    created: float


@dataclass
class ListResult:
    items: list[Stored | dict[str, Any]]
    rv: int
    continue_token: str
    remaining: int | None


@dataclass
class DeleteOptions:
    grace_period_seconds: int | None = None
    propagation_policy: str | None = None
    orphan_dependents: bool | None = None
    precondition_uid: str | None = None
    precondition_rv: str | None = None
    dry_run: bool = False

    @classmethod
    def from_body(cls, body: dict[str, Any] | None, query: dict[str, str]) -> DeleteOptions:
        body = body or {}
        pre = body.get("preconditions") or {}
        grace = body.get("gracePeriodSeconds", query.get("gracePeriodSeconds"))
        orphan = body.get("orphanDependents", query.get("orphanDependents"))
        dry = body.get("dryRun") or query.get("dryRun")
        try:
            grace_int = None if grace is None else int(grace)
        except (TypeError, ValueError) as exc:
            raise bad_request(f"invalid gracePeriodSeconds: {grace!r}") from exc
        return cls(
            grace_period_seconds=grace_int,
            propagation_policy=body.get("propagationPolicy") or query.get("propagationPolicy"),
            orphan_dependents=None if orphan is None else str(orphan).lower() not in ("0", "false"),
            precondition_uid=pre.get("uid"),
            precondition_rv=pre.get("resourceVersion"),
            dry_run=bool(dry) and (dry == "All" or (isinstance(dry, list) and "All" in dry)),
        )


def checked_policy(
    rt: ResourceType, stored_rt: ResourceType, meta: dict[str, Any], name: str, opts: DeleteOptions
) -> str:
    """The preconditions, then the propagation policy (the kind's default when not given)."""
    # rest.BeforeDelete checks the preconditions first, naming the Kind, not the resource
    # (staging/src/k8s.io/apiserver/pkg/registry/rest/delete.go).
    if opts.precondition_uid and opts.precondition_uid != meta["uid"]:
        raise conflict(
            rt.kind,
            rt.group,
            name,
            f"the UID in the precondition ({opts.precondition_uid}) does not match the UID in record ({meta['uid']}). The object might have been deleted and then recreated",
        )
    if opts.precondition_rv and opts.precondition_rv != meta["resourceVersion"]:
        raise conflict(
            rt.kind,
            rt.group,
            name,
            f"the ResourceVersion in the precondition ({opts.precondition_rv}) does not match the ResourceVersion in record ({meta['resourceVersion']}). The object might have been modified",
        )
    if opts.propagation_policy and opts.orphan_dependents is not None:
        raise invalid(
            "DeleteOptions",
            "meta.k8s.io",
            "",
            [
                (
                    "FieldValueInvalid",
                    "propagationPolicy",
                    "Invalid value: orphanDependents and deletionPropagation cannot be both set",
                )
            ],
        )
    policy = opts.propagation_policy
    if policy is None and opts.orphan_dependents is not None:
        policy = "Orphan" if opts.orphan_dependents else "Background"
    policy = policy or kinds.default_propagation(stored_rt)
    if policy not in ("Orphan", "Background", "Foreground"):
        raise invalid(
            "DeleteOptions",
            "meta.k8s.io",
            "",
            [
                (
                    "FieldValueNotSupported",
                    "propagationPolicy",
                    f'Unsupported value: "{policy}": supported values: "Foreground", "Background", "Orphan", "nil"',
                )
            ],
        )
    return policy
