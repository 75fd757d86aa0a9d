"""When the nodes cannot be read, a lost node is told by its pods: a NodeNotReady Event on the pod
and a Ready condition False since about then. Anything else leaves the node's health unknown."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_spark.core.analyze import analyze
from kubectl_spark.core.node import nodes_of
from tests.core_pods import NOW, mk, typed_snapshot

LABELS = {"spark-app-selector": "spark-1", "spark-app-name": "wc"}


def driver(ready: str, since: str) -> dict[str, Any]:
    pod = mk("wc-driver", "driver", "2026-03-01T00:00:00Z", labels=LABELS, node="n1")
    pod["status"]["conditions"] = [{"type": "Ready", "status": ready, "lastTransitionTime": since}]
    return pod


def not_ready_event(at: str) -> dict[str, Any]:
    return {
        "metadata": {"name": "wc-driver.1", "namespace": "ns", "uid": "ev-1"},
        "involvedObject": {
            "kind": "Pod",
            "name": "wc-driver",
            "namespace": "ns",
            "uid": "uid-wc-driver",
        },
        "reason": "NodeNotReady",
        "message": "Node is not ready",
        "lastTimestamp": at,
    }


def state(pod: dict[str, Any], *, nodes: list[Any] | None = None, unreadable: bool = True) -> str:
    snapshot = typed_snapshot(
        pods=[pod],
        events=[not_ready_event("2026-03-01T00:10:00Z")],
        nodes=nodes_of(nodes or []),
        unreadable=("nodes",) if unreadable else (),
        now=NOW,
    )
    (app,) = analyze(snapshot).apps
    return app.attempts[0].state


def test_a_pod_not_ready_since_its_nodes_not_ready_event_tells_the_node_is_lost() -> None:
    (app,) = analyze(
        typed_snapshot(
            pods=[driver("False", "2026-03-01T00:10:00Z")],
            events=[not_ready_event("2026-03-01T00:10:00Z")],
            unreadable=("nodes",),
            now=NOW,
        )
    ).apps
    attempt = app.attempts[0]
    assert attempt.reason is not None
    assert (attempt.state, attempt.reason.code) == ("Lost", "NodeLost")
    assert "told by pod wc-driver" in attempt.reason.evidence[0]
    assert any(n.startswith("nodes could not be read") for n in app.notes)
    # the timeline places the loss when the pod stopped being Ready
    (ended,) = [h.time for h in app.history if h.kind == "AttemptEnded"]
    assert ended == "2026-03-01T00:10:00Z"


@pytest.mark.parametrize(
    ("ready", "since"),
    [
        ("True", "2026-03-01T00:10:00Z"),  # the node came back
        ("False", "2026-03-01T00:30:00Z"),  # not ready again later, for another reason
        ("False", ""),  # no time to compare
    ],
)
def test_anything_else_leaves_the_node_unknown(ready: str, since: str) -> None:
    assert state(driver(ready, since)) == "Running"


def test_readable_nodes_are_believed_over_pods() -> None:
    node = {
        "metadata": {"name": "n1"},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }
    assert (
        state(driver("False", "2026-03-01T00:10:00Z"), nodes=[node], unreadable=False) == "Running"
    )
