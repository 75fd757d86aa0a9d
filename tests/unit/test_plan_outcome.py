"""A write whose answer was lost: did it take effect? Read from the object as it is now."""

from __future__ import annotations

from typing import Any

from kubectl_spark.core.plans import Operation
from kubectl_spark.core.plans.outcome import took_effect


def op(verb: str, body: dict[str, Any] | None = None, uid: str | None = None) -> Operation:
    return Operation(verb, "v1", "pods", "default", "p", "why", body, uid=uid)


def pod(uid: str = "u1", **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p", "uid": uid, **meta}, "spec": {"x": 1}}


def test_a_delete_took_effect_when_the_object_is_gone_replaced_or_terminating() -> None:
    delete = op("delete", uid="u1")
    assert took_effect(delete, None)
    assert took_effect(delete, pod("u2"))  # deleted, and another object took its name
    assert took_effect(delete, pod(deletionTimestamp="2026-12-02T00:00:00Z"))
    assert not took_effect(delete, pod())


def test_a_merge_patch_took_effect_when_every_field_it_sets_shows() -> None:
    patch = op("patch", {"metadata": {"labels": {"a": "1", "gone": None}}, "spec": {"x": 1}})
    assert took_effect(patch, pod(labels={"a": "1", "b": "2"}))
    assert not took_effect(patch, pod(labels={"a": "1", "gone": "still"}))
    assert not took_effect(patch, pod(labels={"a": "0"}))
    assert not took_effect(patch, None)


def test_a_create_took_effect_when_its_name_carries_the_labels_and_annotations_asked() -> None:
    create = op(
        "create",
        {"metadata": {"name": "p", "labels": {"a": "1"}, "annotations": {"n": "x"}}, "spec": {}},
    )
    defaulted = pod(labels={"a": "1", "extra": "y"}, annotations={"n": "x"})
    defaulted["spec"]["tolerations"] = [{"key": "added-by-the-server"}]
    assert took_effect(create, defaulted)
    assert not took_effect(create, pod(labels={"a": "2"}, annotations={"n": "x"}))
    assert not took_effect(create, None)


def test_an_update_took_effect_when_the_object_holds_what_was_sent() -> None:
    body = {"metadata": {"name": "p", "resourceVersion": "7"}, "spec": {"holder": "b", "n": 2}}
    update = op("update", body)
    assert took_effect(
        update, {"metadata": {"name": "p", "resourceVersion": "8"}, "spec": {"holder": "b", "n": 2}}
    )
    assert not took_effect(
        update, {"metadata": {"name": "p", "resourceVersion": "7"}, "spec": {"holder": "a", "n": 1}}
    )


def test_a_refused_step_whose_end_holds_is_already_done() -> None:
    """issue 46: a 404 or a UID precondition's 409 on a pod already gone, an object already
    made as asked (a half-done action run again): the plan goes on."""
    from kubectl_spark.core.plans.outcome import reached

    delete = op("delete", uid="u1")
    assert reached(delete, None) == "already gone"
    assert reached(delete, pod("u2")).startswith("already gone (a pod of that name now has")
    assert reached(delete, pod()) == ""  # still this pod: a real failure
    mark = op("patch", {"metadata": {"uid": "u1", "labels": {"f": "1"}}}, uid="u1")
    assert reached(mark, None).startswith("the pod is gone")
    assert reached(mark, pod("u2")).startswith("the pod is gone (one of that name")
    assert reached(op("patch", {"spec": {"x": 2}}), None) == ""  # not pinned: not ours to judge
    create = op(
        "create",
        {
            "metadata": {"name": "p", "labels": {"a": "1"}, "annotations": {"at": "t2"}},
            "spec": {"x": 1},
        },
    )
    # Made by an earlier run: its own stamp (who, when) differs, what it does is the same.
    assert reached(create, pod(labels={"a": "1"}, annotations={"at": "t1"})) == (
        "already exists as asked"
    )
    assert reached(create, {**pod(labels={"a": "1"}), "spec": {"x": 2}}) == ""
    assert reached(create, pod(labels={"a": "other"})) == ""
    assert reached(op("update", {"spec": {}}), pod()) == ""  # a compare-and-swap lost: a conflict
