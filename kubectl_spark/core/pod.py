"""A pod as the core reads it: typed once, where the gateway reads it from the API (issue 47).

What the core reads of a pod is a few dozen fields of the API's JSON (names, labels, owners,
phase, each container's state and last state, conditions, claims, the Spark UI's port). The
gateway decodes them into these structs once: a list's page straight from its bytes (msgspec
skips every other field without building it, so the structs are the only slim form), a watch
event or a kept copy from its parsed JSON (``Pod.of``). Every reader after that reads typed
fields, which mypy checks, and never the JSON again; there is one reader of the JSON, here,
not a fast one and a careful twin.

The field names are the API's (``rename="camel"``, and ``name=`` where the API is not camel
case: ``podIP``, ``containerID``), so a struct encodes back to the API's JSON shape, which is
what the history store and the in-cluster recorder keep. ``source`` and ``seen_at`` say where
a pod was read and, for a kept copy of a gone pod, when it was last seen: fields, not
annotations a pod in the cluster could carry too (the bug fixed in ``cc488d2``).

A pod that is not well formed (a hand-made or hostile object, a proxy's odd answer) fails the
decoder's type checks and is read field by field with ``raw``'s rules instead
(``_careful``): a text that is a number is read as its digits, anything else missing; a list
that is not one is empty. So it never raises, and reads as ``raw`` read it before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any, Final

import msgspec

from . import raw

CLUSTER: Final = "cluster"  # read from the API now, not a kept copy


class _Typed(msgspec.Struct, rename="camel", omit_defaults=True, gc=False):
    """What every struct here shares: the API's field names, no empty fields written back.

    ``gc=False``: they hold only texts, numbers and each other, never a cycle, so the cyclic
    collector need not track 50,000 pods' worth of them.
    """


class OwnerReference(_Typed):
    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(_Typed):
    name: str = ""
    namespace: str = ""
    uid: str = ""
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    owner_references: list[OwnerReference] = []
    creation_timestamp: str = ""
    deletion_timestamp: str = ""
    deletion_grace_period_seconds: int | None = None
    resource_version: str = ""


class ContainerPort(_Typed):
    name: str = ""
    container_port: int | None = None
    protocol: str = ""


class ProbeTarget(_Typed):
    """Where a probe asks (``httpGet`` or ``tcpSocket``): a port number or a port's name."""

    port: int | str | None = None


class Probe(_Typed):
    http_get: ProbeTarget | None = None
    tcp_socket: ProbeTarget | None = None


class EnvVar(_Typed):
    """A variable of a container's environment set to a value (one from a source is "")."""

    name: str = ""
    value: str = ""


class Container(_Typed):
    """A container of the spec: its name, ports, liveness probe and environment.

    The driver's spark-ui port is where its executor list is asked for; an executor's
    ``SPARK_DRIVER_URL`` names a driver outside the cluster.
    """

    name: str = ""
    ports: list[ContainerPort] = []
    liveness_probe: Probe | None = None
    env: list[EnvVar] = []


class InitContainer(_Typed):
    """An init container: its name, and ``restartPolicy`` Always for a sidecar."""

    name: str = ""
    restart_policy: str = ""


class ClaimSource(_Typed):
    claim_name: str = ""
    read_only: bool | None = None


class Volume(_Typed):
    """A volume: kept only for its claim (an earlier attempt holding it is why one waits)."""

    name: str = ""
    persistent_volume_claim: ClaimSource | None = None


class PodSpec(_Typed):
    node_name: str = ""
    restart_policy: str = ""
    priority: int | None = None
    priority_class_name: str = ""
    init_containers: list[InitContainer] = []
    containers: list[Container] = []
    volumes: list[Volume] = []


class Waiting(_Typed):
    reason: str = ""
    message: str = ""


class Running(_Typed):
    started_at: str = ""


class Terminated(_Typed):
    exit_code: int | None = None
    signal: int | None = None
    reason: str = ""
    message: str = ""
    started_at: str = ""
    finished_at: str = ""
    container_id: str = msgspec.field(default="", name="containerID")


class ContainerState(_Typed):
    """At most one of the three is set (the kubelet's); none when the state is not known."""

    waiting: Waiting | None = None
    running: Running | None = None
    terminated: Terminated | None = None


class ContainerStatus(_Typed):
    name: str = ""
    state: ContainerState | None = None
    last_state: ContainerState | None = None
    restart_count: int | None = None
    ready: bool | None = None
    started: bool | None = None

    def waiting(self) -> Waiting | None:
        return self.state.waiting if self.state is not None else None

    def terminated(self) -> Terminated | None:
        return self.state.terminated if self.state is not None else None

    def last_terminated(self) -> Terminated | None:
        """How it ended before its last restart (``lastState.terminated``)."""
        return self.last_state.terminated if self.last_state is not None else None


NOT_WAITING: Final = Waiting()  # read as a container not waiting: no reason, no message
# A pod that has no container status yet (Pending, not scheduled): read as one that says nothing.
NO_STATUS: Final = ContainerStatus()


class PodCondition(_Typed):
    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""
    last_transition_time: str = ""


class PodStatus(_Typed):
    phase: str = ""
    reason: str = ""
    message: str = ""
    start_time: str = ""
    pod_ip: str = msgspec.field(default="", name="podIP")
    conditions: list[PodCondition] = []
    container_statuses: list[ContainerStatus] = []
    init_container_statuses: list[ContainerStatus] = []


class Pod(_Typed):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PodSpec = msgspec.field(default_factory=PodSpec)
    status: PodStatus = msgspec.field(default_factory=PodStatus)
    # Where it was read: the cluster, or a kept copy of a gone pod (watch, history, recorder)
    source: str = CLUSTER
    seen_at: str = ""  # a kept copy's last sight, RFC 3339 as its keeper wrote it

    @classmethod
    def of(cls, obj: object) -> Pod:
        """A pod from its parsed JSON (a typed one as it is: reading twice changes nothing)."""
        if type(obj) is Pod:
            return obj
        try:
            return msgspec.convert(obj, Pod)
        except msgspec.ValidationError:
            read: Pod = _careful(obj, Pod)
            return read

    def condition(self, kind: str) -> PodCondition | None:
        return next((c for c in self.status.conditions if c.type == kind), None)

    def controller(self) -> OwnerReference | None:
        """The owner reference marked controller (the API allows one), if any."""
        return next((r for r in self.metadata.owner_references if r.controller is True), None)

    @property
    def kept(self) -> bool:
        """A kept copy of a gone pod (a watch's, the history store's, the recorder's)."""
        return self.source != CLUSTER


def pods_of(found: Iterable[object]) -> list[Pod]:
    """Every pod of a list, typed; anything in it is read as a pod (``raw``'s rules)."""
    return [p if type(p) is Pod else Pod.of(p) for p in found]  # typed ones at C speed


def kept_copy(pod: Pod, source: str, seen_at: str) -> Pod:
    """A gone pod's last state, marked with who kept it and when it was last seen."""
    return msgspec.structs.replace(pod, source=source, seen_at=seen_at)


def as_json(pod: Pod) -> dict[str, object]:
    """The pod in the API's JSON shape, what it holds of it (for the history store).

    Where it was read is not the API's, so it is left out: the store keeps that beside it.
    """
    found: dict[str, object] = msgspec.to_builtins(pod)
    found.pop("source", None)
    found.pop("seenAt", None)
    return found


# ---------------------------------------------------------------- pods not well formed


def _careful(value: object, kind: type) -> Any:
    """``value`` read as a ``kind`` struct field by field, with ``raw``'s rules for each type.

    Followed through the structs' own type information, so the rules are written once for
    every field: a text (``raw.text``: a number or a flag read as text, anything else ""), a
    whole number (``raw.number``), a flag (only ``true`` is true), a map of texts
    (``raw.text_map``: numbers kept as text), a list of structs (its items that are objects),
    a struct (an object, else missing).
    """
    return _read(value, _type_info(kind))


@cache
def _type_info(kind: type) -> msgspec.inspect.Type:
    return msgspec.inspect.type_info(kind)


def _read(value: object, info: msgspec.inspect.Type) -> Any:
    if isinstance(info, msgspec.inspect.StructType):
        found = raw.mapping(value)
        return info.cls(
            **{
                f.name: _read(found[f.encode_name], f.type)
                for f in info.fields
                if f.encode_name in found
            }
        )
    if isinstance(info, msgspec.inspect.UnionType):  # X | None, or a port: a number or a name
        return _one_of(value, info.types)
    if isinstance(info, msgspec.inspect.StrType):
        return raw.text(value)
    if isinstance(info, msgspec.inspect.IntType):
        return raw.number(value)
    if isinstance(info, msgspec.inspect.BoolType):
        return value is True
    if isinstance(info, msgspec.inspect.DictType):
        return raw.text_map(value)
    if isinstance(info, msgspec.inspect.ListType):
        return [_read(item, info.item_type) for item in raw.items(value)]
    raise TypeError(f"no rule to read {info!r}")  # a field of a type added without one


def _one_of(value: object, kinds: tuple[msgspec.inspect.Type, ...]) -> Any:
    """A union's value: the member its JSON type is, read by that member's rule; else None."""
    for kind in kinds:
        if isinstance(kind, msgspec.inspect.StructType) and isinstance(value, Mapping):
            return _read(value, kind)
        if isinstance(kind, msgspec.inspect.IntType) and type(value) is int:
            return value
        if isinstance(kind, msgspec.inspect.StrType) and type(value) is str:
            return value
        if isinstance(kind, msgspec.inspect.BoolType) and type(value) is bool:
            return value
    if len(kinds) == 2 and any(isinstance(k, msgspec.inspect.NoneType) for k in kinds):
        # X | None, the value of another JSON type: read by X's rule where X is a scalar
        inner = next(k for k in kinds if not isinstance(k, msgspec.inspect.NoneType))
        if not isinstance(inner, msgspec.inspect.StructType) and value is not None:
            return _read(value, inner)
    return None
