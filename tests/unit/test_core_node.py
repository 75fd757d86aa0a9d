"""A node typed once at the gateway (``core.node``) reads as ``raw`` reads the API's JSON."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kubectl_spark.core import raw
from kubectl_spark.core.inputs import node_health
from kubectl_spark.core.node import Node, Taint, named, nodes_of
from tests.hostile import json_value

UNREACHABLE = {
    "key": "node.kubernetes.io/unreachable",
    "effect": "NoExecute",
    "timeAdded": "2026-03-01T00:05:00Z",
}
NODE: dict[str, Any] = {
    "metadata": {"name": "node-a", "uid": "u-a", "resourceVersion": "41"},
    "spec": {
        "taints": [UNREACHABLE, {"key": "dedicated", "value": "spark", "effect": "NoSchedule"}]
    },
    "status": {
        "conditions": [
            {"type": "MemoryPressure", "status": "False"},
            {
                "type": "Ready",
                "status": "Unknown",
                "reason": "NodeStatusUnknown",
                "message": "Kubelet stopped posting node status.",
                "lastTransitionTime": "2026-03-01T00:04:00Z",
            },
        ]
    },
}


def test_a_well_formed_node_keeps_what_the_core_reads() -> None:
    node = Node.of(NODE)
    assert (node.name, node.uid, node.resource_version) == ("node-a", "u-a", "41")
    assert node.ready.status == "Unknown" and node.ready.since == "2026-03-01T00:04:00Z"
    assert node.tainted("node.kubernetes.io/unreachable") and not node.tainted("other")
    health = node_health(node)
    assert not health.reachable
    assert "Kubelet stopped posting node status." in health.evidence
    assert Node.of(node) is node  # typed once: reading it again changes nothing


def test_each_taint_is_written_back_as_the_api_wrote_it() -> None:
    """force-kill's merge patch replaces the whole list: every field of each taint is kept."""
    assert [t.as_json() for t in Node.of(NODE).taints] == NODE["spec"]["taints"]


@given(st.dictionaries(st.sampled_from(["metadata", "spec", "status"]), json_value, max_size=3))
def test_any_json_reads_as_raw_reads_it(node: dict[str, Any]) -> None:
    """A node not well formed never raises, and each field is ``raw``'s reading of it."""
    typed = Node.of(node)
    ready = raw.condition(node, "Ready")
    assert typed.name == raw.name(node) and typed.uid == raw.uid(node)
    assert typed.ready.status == raw.text(ready, "status")
    assert typed.ready.since == raw.text(ready, "lastTransitionTime")
    assert [t.key for t in typed.taints] == [
        raw.text(t, "key") for t in raw.items(node, "spec", "taints")
    ]
    node_health(typed)


@given(st.lists(json_value, max_size=4))
def test_any_list_is_typed_whole(found: list[Any]) -> None:
    typed = nodes_of(found)
    assert len(typed) == len(found) and all(type(n) is Node for n in typed)


def test_a_node_is_found_by_name_only_when_named() -> None:
    nodes = nodes_of([NODE, {"metadata": {}}])
    assert named(nodes, "node-a") is nodes[0]
    assert named(nodes, "") is None and named(nodes, None) is None and named(nodes, "b") is None


def test_a_taint_without_optional_fields_writes_none() -> None:
    assert Taint.of({"key": "k"}).as_json() == {"key": "k"}
