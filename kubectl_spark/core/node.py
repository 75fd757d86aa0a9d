"""A node as the core reads it: typed once, where the gateway reads it from the API.

The core asks a node three things: its name, whether it is Ready (and since when, and why
not), and its taints (unreachable, out-of-service; force-kill writes the list back with one
more). ``Node.of`` reads them from the API's JSON once, through ``raw``'s accessors, so a node
that is not well formed is read as ``raw`` would read it, and every reader after it reads
typed fields that mypy checks, never the JSON again (issue 47: typed objects at the gateway).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from . import raw
from .jsonvalue import JsonObject


@dataclass(frozen=True, slots=True)
class Taint:
    """One of the node's taints, with every field Kubernetes' ``Taint`` has.

    All four, because force-kill's merge patch replaces the whole list with the one read
    plus its own (k8s.io/api/core/v1/types.go, ``type Taint struct``: key, value, effect,
    timeAdded): a field not kept here would be taken off the node.
    """

    key: str
    value: str = ""
    effect: str = ""
    time_added: str = ""  # RFC 3339, "" when not set

    @classmethod
    def of(cls, taint: object) -> Taint:
        return cls(
            key=raw.text(taint, "key"),
            value=raw.text(taint, "value"),
            effect=raw.text(taint, "effect"),
            time_added=raw.text(taint, "timeAdded"),
        )

    def as_json(self) -> JsonObject:
        """As the API writes it: its empty optional fields left out (``omitempty``)."""
        found: JsonObject = {"key": self.key}
        if self.value:
            found["value"] = self.value
        if self.effect:
            found["effect"] = self.effect
        if self.time_added:
            found["timeAdded"] = self.time_added
        return found


@dataclass(frozen=True, slots=True)
class Readiness:
    """The node's Ready condition; ``status`` "" when the node has none."""

    status: str = ""
    reason: str = ""
    message: str = ""
    since: str = ""  # lastTransitionTime as the API wrote it, "" when not told


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    uid: str = ""  # what a watch keys it by
    resource_version: str = ""
    ready: Readiness = Readiness()
    taints: tuple[Taint, ...] = ()

    @classmethod
    def of(cls, node: object) -> Node:
        """A node from the API's JSON (a typed one as it is: reading twice changes nothing)."""
        if isinstance(node, Node):
            return node
        ready = raw.condition(node, "Ready")
        return cls(
            name=raw.name(node),
            uid=raw.uid(node),
            resource_version=raw.text(node, "metadata", "resourceVersion"),
            ready=Readiness(
                status=raw.text(ready, "status"),
                reason=raw.text(ready, "reason"),
                message=raw.text(ready, "message"),
                since=raw.text(ready, "lastTransitionTime"),
            ),
            taints=tuple(Taint.of(t) for t in raw.items(node, "spec", "taints")),
        )

    def tainted(self, key: str) -> bool:
        return any(t.key == key for t in self.taints)


def nodes_of(found: Iterable[object]) -> tuple[Node, ...]:
    """Every node of a list, typed; one without a name is kept (the core skips it by name)."""
    return tuple(Node.of(n) for n in found)


def named(nodes: Iterable[Node], name: str | None) -> Node | None:
    return next((n for n in nodes if n.name == name), None) if name else None
