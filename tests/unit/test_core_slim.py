"""What ``ls`` and the TUI keep of a pod (``core.slim``) gives the answer the whole pod gives.

Every pod is typed (``core.pod``); ``ls`` and the TUI's watches also trim what no reader needs
and decode a page straight from its bytes. A field the core reads but they drop would make
them disagree with ``describe`` on the same pod: an init container that failed was once a
reason in ``describe`` and nothing in ``ls``.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import msgspec
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_spark.core import slim
from kubectl_spark.core.analyze import analyze
from kubectl_spark.core.pod import EnvVar, Pod, as_json
from tests.core_pods import typed_snapshot
from tests.hostile import RUNNING, set_at, varied_pods

NOW = datetime(2026, 3, 1, 4, tzinfo=UTC)


def _json(pod: Pod) -> Any:
    return as_json(pod)


def _answer(items: list[Any]) -> list[dict[str, Any]]:
    result = analyze(typed_snapshot(pods=items, now=NOW))
    return [app.to_json() for app in result.apps] + [u.to_json() for u in result.ungrouped]


def _variants(pod: dict[str, Any]) -> list[dict[str, Any]]:
    """The pod in each phase (most signals mean something only in some), and as a driver."""
    out = []
    for phase in ("Running", "Pending", "Failed", "Succeeded"):
        copied = copy.deepcopy(pod)
        if isinstance(copied.get("status"), dict):
            copied["status"]["phase"] = phase
        out += [copied, _driver_of(copied)]
    return out


def _driver_of(executor: dict[str, Any]) -> dict[str, Any]:
    """The executor's pod as its driver: the same signals, on the role that decides attempts."""
    driver = copy.deepcopy(executor)
    meta = driver.get("metadata")
    if isinstance(meta, dict):
        meta.pop("ownerReferences", None)
        if isinstance(meta.get("labels"), dict):
            meta["labels"]["spark-role"] = "driver"
    return driver


@settings(
    max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(varied_pods())
def test_slim_pods_are_analysed_as_whole_ones(pod: dict[str, Any]) -> None:
    pod.pop("source", None)  # a keeper's mark, never in the API's JSON the gateway slims
    for variant in _variants(pod):
        assert _answer([slim.pod(variant)]) == _answer([variant])


def test_a_failed_init_container_is_kept() -> None:
    """The case that was missed: Init:Error on a driver, read from initContainerStatuses."""
    driver = _driver_of(RUNNING)
    driver["status"]["phase"] = "Failed"
    driver["status"]["initContainerStatuses"] = [
        {"name": "fetch-jars", "restartCount": 0, "state": {"terminated": {"exitCode": 1}}}
    ]
    (app,) = _answer([slim.pod(driver)])
    assert "init container fetch-jars failed" in app["attempts"][0]["reason"]["message"]


# ---------------------------------------------------------------- a page decoded slim at once
def _page(items: list[Any]) -> bytes:
    return orjson.dumps(
        {
            "kind": "PodList",
            "apiVersion": "v1",
            "metadata": {"resourceVersion": "7"},
            "items": items,
        }
    )


def _bulky(pod: dict[str, Any]) -> dict[str, Any]:
    """What a real pod carries that ``slim`` drops: the decoder must skip it, not keep it."""
    bulky = copy.deepcopy(pod)
    if isinstance(bulky.get("spec"), dict):
        bulky["spec"]["tolerations"] = [{"key": "k", "operator": "Exists"}]
        bulky["spec"]["containers"] = [
            {"name": "spark-kubernetes-driver", "env": [{"name": "A", "value": "1" * 500}]},
            {"name": "side", "ports": [{"name": "spark-ui", "containerPort": 4041}]},
        ]
        bulky["spec"]["volumes"] = [
            {"name": "conf", "configMap": {"name": "c"}},
            {"name": "data", "persistentVolumeClaim": {"claimName": "d"}},
        ]
    if isinstance(bulky.get("metadata"), dict):
        bulky["metadata"]["managedFields"] = [{"manager": "m", "fieldsV1": {"f:a": {}}}]
        bulky["metadata"]["annotations"] = {
            "kubectl.kubernetes.io/last-applied-configuration": "{}",
            "kept": "yes",
        }
    return bulky


@settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.lists(varied_pods(), min_size=1, max_size=4), st.booleans())
def test_a_page_decoded_slim_holds_what_slimming_each_pod_holds(
    items: list[dict[str, Any]], bulky: bool
) -> None:
    """The fast path gives ``pod``'s items, or None (the caller then slims item by item)."""
    if bulky:
        items = [_bulky(p) for p in items]
    data = _page(items)
    decoded = slim.pod_page(data)
    expected = [slim.pod(p) for p in orjson.loads(data)["items"]]
    if decoded is not None:
        assert decoded["items"] == expected
        assert decoded["metadata"] == {"resourceVersion": "7"}
    # What pods repeat shared with the pages before (``_share``): the same values.
    shared: dict[object, object] = {}
    assert slim.pod_page(data, shared) == decoded
    assert slim.pod_page(data, shared) == decoded


def test_the_fast_path_takes_a_well_formed_page_and_keeps_what_slim_keeps() -> None:
    driver = _bulky(_driver_of(RUNNING))
    decoded = slim.pod_page(_page([driver, RUNNING]))
    assert decoded is not None  # well formed: decoded in one pass, not parsed whole
    items: Any = decoded["items"]
    first = items[0]
    assert first == slim.pod(driver)
    assert _json(first)["spec"]["containers"] == [
        {"name": "spark-kubernetes-driver"},
        {"name": "side", "ports": [{"name": "spark-ui", "containerPort": 4041}]},
    ]
    assert _json(first)["spec"]["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "d"}}
    ]
    assert first.metadata.annotations == {"kept": "yes"}
    assert "managedFields" not in _json(first)["metadata"]


@pytest.mark.parametrize(
    "answer",
    [
        b'{"kind":"Status","status":"Failure","message":"odd"}',
        b'{"items":{"not":"a list"}}',
        b'{"items":["a string"]}',
        b'{"items":[{"metadata":"not an object"}]}',
        b'{"items":[{"spec":null}]}',
        b'{"items":[{"spec":{"containers":[1]}}]}',
        b'{"items":[{"status":{"containerStatuses":null}}]}',
        b"not json",
        b"[]",
    ],
)
def test_what_the_fast_path_does_not_expect_is_left_to_the_whole_parse(answer: bytes) -> None:
    assert slim.pod_page(answer) is None


@pytest.mark.parametrize(
    ("odd", "expected"),
    [
        ({"metadata": "not an object"}, {"metadata": {}, "spec": {}, "status": {}}),
        ({"spec": None, "status": {"phase": "Running"}}, {"status": {"phase": "Running"}}),
        (
            {"spec": {"nodeName": "n", "containers": [1, {"name": "c", "env": [{"value": "s"}]}]}},
            {"spec": {"nodeName": "n", "containers": [{"name": "c"}]}},
        ),
        (
            {
                "status": {
                    "phase": "Failed",
                    "containerStatuses": ["x", {"name": "c", "image": "i"}],
                }
            },
            {"status": {"phase": "Failed", "containerStatuses": [{"name": "c"}]}},
        ),
        ({"status": {"containerStatuses": None}}, {"status": {}}),
        (
            {"metadata": {"name": "p", "managedFields": []}, 1: "a key not text"},
            {"metadata": {"name": "p"}},
        ),
    ],
)
def test_a_pod_not_shaped_as_the_schema_says_is_walked_by_it(
    odd: dict[Any, Any], expected: dict[str, Any]
) -> None:
    """``pod`` types a parsed object by the page decoder's structs: a part that should be an
    object and is not is kept empty, a list that is not one is empty, an item of a list that is
    not an object is left out, and nothing the structs do not name is kept (of a container's
    environment, only what the core reads), however odd the pod."""
    assert as_json(slim.pod(odd)) == {"metadata": {}, "spec": {}, "status": {}} | expected


def test_a_pod_slimmed_alone_keeps_what_its_page_keeps_and_drops_the_rest() -> None:
    driver = _bulky(_driver_of(RUNNING))
    driver["spec"]["containers"][0]["env"] = [{"name": "SPARK_CONF", "value": "x" * 1000}]
    driver["spec"]["containers"][1]["env"] = [{"name": "SPARK_DRIVER_URL", "value": "spark://d"}]
    kept = slim.pod(driver)
    assert kept == slim.pod_page(_page([driver]))["items"][0]  # type: ignore[index]
    assert [c.env for c in kept.spec.containers] == [[], [EnvVar("SPARK_DRIVER_URL", "spark://d")]]
    assert "managedFields" not in _json(kept)["metadata"]
    assert kept.metadata.annotations == {"kept": "yes"}


def test_what_pods_repeat_is_held_once_across_a_lists_pages() -> None:
    """One list's pages share what their pods repeat: the driver they name, their labels'
    values, a running container's status from the same second. What is a pod's own (its name,
    uid) is not looked up. The values are those of the pages decoded alone."""
    first, second = copy.deepcopy(RUNNING), copy.deepcopy(RUNNING)
    second["metadata"].update(name="app-exec-2", uid="u-2")
    second["metadata"]["labels"]["spark-exec-id"] = "2"
    for pod in (first, second):
        pod["status"]["containerStatuses"][0].update(
            ready=True, started=True, lastState={}, state={"running": {"startedAt": _STARTED}}
        )
    shared: dict[object, object] = {}
    one: Any = slim.pod_page(_page([first]), shared)
    two: Any = slim.pod_page(_page([second]), shared)
    assert one["items"] == [slim.pod(first)] and two["items"] == [slim.pod(second)]
    a, b = one["items"][0], two["items"][0]
    assert a.metadata.labels["spark-app-selector"] is b.metadata.labels["spark-app-selector"]
    assert a.metadata.owner_references is b.metadata.owner_references
    assert a.status.container_statuses is b.status.container_statuses
    assert a.metadata.uid not in shared and a.metadata.name not in shared
    alone: Any = slim.pod_page(_page([second]))
    assert alone["items"][0].metadata.owner_references is not a.metadata.owner_references


_STARTED = "2026-03-01T02:00:01Z"
# Where ``==`` and the reading part: ``1``, ``1.0`` and ``True`` are equal, and read apart.
_COMPARED = [
    *(("metadata", "ownerReferences", 0, key) for key in ("controller", "blockOwnerDeletion")),
    ("metadata", "ownerReferences", 0, "name"),
    *(
        ("status", "containerStatuses", 0, key)
        for key in ("restartCount", "ready", "started", "lastState", "name")
    ),
    ("status", "containerStatuses", 0, "state", "running", "startedAt"),
    ("status", "containerStatuses", 0, "state", "running", "exitCode"),
    ("status", "containerStatuses", 0, "state", "terminated"),
]
_EQUAL_APART: st.SearchStrategy[object] = st.sampled_from(
    [0, 1, 1.0, True, False, "1", None, {}, [], {"exitCode": 1}]
)


@st.composite
def _alike_pods(draw: Any) -> dict[str, Any]:
    """Executors of one driver, started in one second, a few values each made odd."""
    pod = copy.deepcopy(RUNNING)
    pod["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] = True
    pod["status"]["containerStatuses"][0].update(
        ready=True, started=True, lastState={}, state={"running": {"startedAt": _STARTED}}
    )
    for path in draw(st.lists(st.sampled_from(_COMPARED), max_size=2)):
        set_at(pod, path, copy.deepcopy(draw(_EQUAL_APART)), delete=False)
    return pod


@settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.lists(st.lists(_alike_pods(), min_size=1, max_size=3), min_size=2, max_size=3))
def test_a_pod_reads_as_it_would_alone_whatever_the_pods_before_it_hold(
    pages: list[list[dict[str, Any]]],
) -> None:
    """Byte for byte: JSON tells ``1``, ``1.0`` and ``True`` apart, as the readers do."""
    shared: dict[object, object] = {}
    for items in pages:
        alone = slim.pod_page(_page(items))
        assert msgspec.json.encode(slim.pod_page(_page(items), shared)) == msgspec.json.encode(
            alone
        )
