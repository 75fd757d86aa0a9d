"""Pure pieces of the emulator: selector grammar and the three patch formats."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubectl_spark.cluster.apiserver import patching
from kubectl_spark.cluster.apiserver.errors import ApiError
from kubectl_spark.cluster.apiserver.kinds import POD_FIELDS
from kubectl_spark.cluster.apiserver.selectors import parse_field_selector, parse_label_selector

LABELS = {"spark-role": "executor", "spark-exec-id": "7", "team": "data"}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("", True),
        ("spark-role=executor", True),
        ("spark-role==executor", True),
        ("spark-role!=executor", False),
        ("spark-role in (driver,executor)", True),
        ("spark-role notin (executor)", False),
        ("missing notin (x)", True),
        ("missing!=x", True),
        ("spark-role", True),
        ("!spark-role", False),
        ("!missing", True),
        ("spark-exec-id>5", True),
        ("spark-exec-id<5", False),
        ("spark-role=executor,team=ml", False),
        ("  spark-role = executor , team in ( data ) ", True),
        ("sparkoperator.k8s.io/app-name", False),
    ],
)
def test_label_selector_semantics(selector: str, expected: bool) -> None:
    assert parse_label_selector(selector).matches(LABELS) is expected


@pytest.mark.parametrize(
    "bad", ["a in (b", "a=b=c", "=x", "a in b", "a>b", "bad key!=x", ",", "a,,b"]
)
def test_malformed_label_selectors_are_400(bad: str) -> None:
    with pytest.raises(ApiError) as err:
        parse_label_selector(bad)
    assert err.value.code == 400


@given(st.text(max_size=60))
def test_label_selector_parser_never_fails_other_than_400(text: str) -> None:
    code = 400
    try:
        parse_label_selector(text)
    except ApiError as err:
        code = err.code
    assert code == 400


@given(st.text(max_size=60))
def test_field_selector_parser_never_fails_other_than_400(text: str) -> None:
    code = 400
    try:
        parse_field_selector(text, POD_FIELDS)
    except ApiError as err:
        code = err.code
    assert code == 400


def test_field_selector_escapes_and_defaults() -> None:
    sel = parse_field_selector(r"metadata.name=a\,b,spec.hostNetwork=false", POD_FIELDS)
    assert sel.matches({"metadata": {"name": "a,b"}, "spec": {}}, POD_FIELDS)


def test_merge_patch_rfc7386() -> None:
    target = {"a": {"b": 1, "c": 2}, "l": [1, 2], "k": "v"}
    assert patching.merge_patch(target, {"a": {"b": None, "d": 3}, "l": [3], "k": None}) == {
        "a": {"c": 2, "d": 3},
        "l": [3],
    }


def test_strategic_merge_directives() -> None:
    target = {
        "metadata": {"finalizers": ["a"], "ownerReferences": [{"uid": "1", "name": "x"}]},
        "spec": {
            "containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "1"}],
            "tolerations": [{"key": "t"}],
        },
        "status": {
            "conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "PodScheduled", "status": "True"},
            ]
        },
    }
    patch = {
        "$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
        "metadata": {"finalizers": ["b"], "ownerReferences": [{"uid": "1", "$patch": "delete"}]},
        "spec": {
            "containers": [{"name": "a", "$patch": "delete"}, {"name": "c", "image": "2"}],
            "tolerations": [{"key": "u"}],
        },
        "status": {"conditions": [{"type": "Ready", "status": "False"}]},
    }
    out = patching.strategic_merge_patch(target, patch)
    assert out["metadata"] == {"finalizers": ["a", "b"], "ownerReferences": []}
    assert [c["name"] for c in out["spec"]["containers"]] == ["b", "c"]
    assert out["spec"]["tolerations"] == [{"key": "u"}]  # no merge key: replaced
    assert out["status"]["conditions"] == [
        {"type": "Ready", "status": "False"},
        {"type": "PodScheduled", "status": "True"},
    ]
    assert patching.strategic_merge_patch(
        {"spec": {"a": 1, "b": 2}}, {"spec": {"$patch": "replace", "c": 3}}
    ) == {"spec": {"c": 3}}
    deleted = patching.strategic_merge_patch(
        {"metadata": {"finalizers": ["a", "b"]}},
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}},
    )
    assert deleted == {"metadata": {"finalizers": ["b"]}}


def test_json_patch_errors_are_422() -> None:
    assert patching.json_patch({"a": 1}, [{"op": "replace", "path": "/a", "value": 2}]) == {"a": 2}
    with pytest.raises(ApiError) as err:
        patching.json_patch({"a": 1}, [{"op": "test", "path": "/a", "value": 2}])
    assert err.value.code == 422
    with pytest.raises(ApiError):
        patching.json_patch({"a": 1}, {"op": "add"})
