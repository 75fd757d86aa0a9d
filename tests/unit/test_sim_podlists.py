"""The simulator's pod lists cut from one full list: the same items the server would send."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_spark.sim import podlists


def pod(ns: str, name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"namespace": ns, "name": name, "labels": labels}}


WHOLE = {
    "kind": "PodList",
    "apiVersion": "v1",
    "metadata": {"resourceVersion": "42"},
    "items": [
        pod("a", "d", **{"spark-role": "driver", "spark-app-selector": "x"}),
        pod("a", "e", **{"spark-role": "executor", "spark-app-selector": "x"}),
        pod("b", "j", **{"batch.kubernetes.io/controller-uid": "u"}),
    ],
}


@pytest.mark.parametrize(
    ("path", "selector", "names"),
    [
        ("/api/v1/pods", "spark-role=driver", ["d"]),
        ("/api/v1/pods", "batch.kubernetes.io/controller-uid", ["j"]),
        ("/api/v1/namespaces/a/pods", "spark-app-selector==x,spark-role=executor", ["e"]),
        ("/api/v1/namespaces/b/pods", "", ["j"]),
        ("/api/v1/namespaces/c/pods", "", []),
    ],
)
def test_a_narrower_list_is_cut_in_the_servers_order(path: str, selector: str, names: list[str]):
    narrow = podlists.narrowing(path, {"labelSelector": selector} if selector else None)
    assert narrow is not None
    cut = podlists.cut(WHOLE, *narrow)
    assert [p["metadata"]["name"] for p in cut["items"]] == names
    assert cut["metadata"] == WHOLE["metadata"] and cut["kind"] == "PodList"


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("/api/v1/pods", {"labelSelector": "spark-role!=driver"}),
        ("/api/v1/pods", {"labelSelector": "spark-role in (driver)"}),
        ("/api/v1/pods", {"labelSelector": "!spark-role"}),
        ("/api/v1/pods", {"fieldSelector": "spec.nodeName=n"}),
        ("/api/v1/pods", {"limit": 1}),
        ("/api/v1/nodes", None),
        ("/api/v1/namespaces/a/pods/d", None),
    ],
)
def test_anything_else_is_left_to_the_server(path: str, query: dict[str, Any] | None) -> None:
    assert podlists.narrowing(path, query) is None
