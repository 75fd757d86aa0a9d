"""A long list's pods hold the texts they repeat once (``PodIndex.share_from``); a short one's
are left as decoded, and either way the pods and their facts read the same."""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson

from kubectl_spark.core import slim
from kubectl_spark.core.podfacts import PodFacts, facts
from kubectl_spark.kube.snapshot import PodIndex
from tests.core_pods import mk, ref

DRIVER = ref("Pod", "etl-nightly-driver", "driver-uid-0123456789")
LABELS = {"spark-app-selector": "spark-0123456789abcdef", "spark-app-name": "etl-nightly"}


def _executor(number: int) -> dict[str, Any]:
    pod = mk(
        f"etl-nightly-exec-{number}",
        "executor",
        "2026-03-01T00:00:00Z",
        labels={**LABELS, "spark-exec-id": str(number)},
        owner=DRIVER,
        node="worker-node-a.example",
    )
    pod["metadata"]["namespace"] = "spark-production"
    return pod


def _decoded(numbers: range) -> list[Any]:
    """A page of executors as ``ls`` decodes it: every text a new object."""
    page = orjson.dumps(
        {"kind": "PodList", "metadata": {}, "items": [_executor(n) for n in numbers]}
    )
    decoded: Any = slim.pod_page(page)
    return list(decoded["items"])


def _texts(pod: Any) -> list[str]:
    meta = pod["metadata"]
    return [
        meta["namespace"],
        meta["labels"]["spark-app-selector"],
        meta["ownerReferences"][0]["uid"],
        pod["spec"]["nodeName"],
        pod["status"]["phase"],
    ]


def _fact_texts(f: PodFacts) -> list[str | None]:
    return [f.namespace, f.app_id, f.app_name, f.owner_uid, f.owner_name, f.node, f.phase]


def _one_object_each(values: list[list[Any]]) -> bool:
    return all(all(v is first for v, first in zip(row, values[0], strict=True)) for row in values)


def test_a_list_that_gets_long_shares_the_texts_of_every_pod_and_of_their_facts() -> None:
    index = PodIndex(share_from=4)
    first, second = _decoded(range(1, 4)), _decoded(range(4, 7))
    index.add(first)
    assert not _one_object_each([_texts(p) for p in first])  # three pods: not yet
    index.add(second)  # six: the pods kept before are shared too
    pods = first + second
    assert _one_object_each([_texts(p) for p in pods])
    assert _one_object_each([_fact_texts(f) for f in index.facts])
    assert _texts(pods[0])[1] is index.facts[5].app_id
    # the same facts as read from pods never shared
    assert index.facts == [facts(p) for p in _decoded(range(1, 7))]
    assert [f.pod for f in index.facts] == pods and index.facts[0].pod is pods[0]


def test_a_short_list_and_whole_pods_are_held_as_decoded() -> None:
    for index in (PodIndex(share_from=100), PodIndex()):
        pods = _decoded(range(1, 4)) + _decoded(range(4, 7))
        index.add(pods[:3])
        index.add(pods[3:])
        assert index.texts is None
        assert pods[0]["metadata"]["namespace"] is not pods[3]["metadata"]["namespace"]


def test_a_list_started_again_shares_anew() -> None:
    index = PodIndex(share_from=2)
    index.add(_decoded(range(1, 3)))
    held: list[object] = [index.texts]
    index.clear()  # a 410: the list starts over
    held.append(index.texts)
    index.add(_decoded(range(1, 2)))
    held.append(index.texts)
    assert held[0] and held[1:] == [None, None]


def test_facts_share_every_text_pods_repeat() -> None:
    """Each text field of ``PodFacts`` but a pod's own (name, uid) and those already held once
    (``created``: ``canonical_time``'s; ``source``: a constant) is shared: a field added and
    left out would keep its copies alive."""
    own = {"name", "uid", "created", "source"}
    texts = [f.name for f in dataclasses.fields(PodFacts) if f.type in ("str", "str | None")]
    a, b = (facts(p) for p in (_decoded(range(1, 2))[0], _decoded(range(1, 2))[0]))
    for f in (a, b):
        for n in texts:  # equal texts, each an object of its own
            setattr(f, n, "".join(["text-", n]))
    assert all(getattr(a, n) is not getattr(b, n) for n in texts)
    shared: dict[str, str] = {}
    a.share(shared)
    b.share(shared)
    assert {n for n in texts if getattr(a, n) is not getattr(b, n)} == own
