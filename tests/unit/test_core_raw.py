"""One label read on its own says what reading them all says, whatever the object holds."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from kubectl_spark.core import raw
from kubectl_spark.core.pod import Pod, pods_of
from tests.hostile import json_value

KEY = "spark-exec-inactive"
label_values = st.one_of(json_value, st.just("true"), st.just(True), st.just(1), st.just(None))
labels = st.one_of(
    st.dictionaries(st.sampled_from([KEY, "spark-role", "x"]), label_values, max_size=3),
    json_value,
)
objects = st.one_of(
    st.fixed_dictionaries({"metadata": st.fixed_dictionaries({"labels": labels})}),
    st.fixed_dictionaries({"metadata": json_value}),
    json_value,
)


@settings(max_examples=500, deadline=None)
@given(objects)
def test_one_label_reads_as_all_labels_do(obj: Any) -> None:
    assert raw.label(obj, KEY) == raw.labels(obj).get(KEY, "")


KEYS = st.sampled_from(["phase", "reason", "x", ""])


@settings(max_examples=500, deadline=None)
@given(st.one_of(json_value, st.dictionaries(KEYS, json_value, max_size=3)), KEYS)
def test_one_key_read_in_line_reads_as_the_general_path_does(obj: Any, key: str) -> None:
    """``text``, ``number`` and ``mapping`` read one key of a dict without ``get``'s loop."""
    wrapped = {"wrapper": obj}  # two keys: the general path
    assert raw.text(obj, key) == raw.text(wrapped, "wrapper", key)
    assert raw.number(obj, key) == raw.number(wrapped, "wrapper", key)
    assert raw.mapping(obj, key) == raw.mapping(wrapped, "wrapper", key)


META_KEYS = st.sampled_from(["uid", "name", "namespace", "ownerReferences", "x"])
refs = st.one_of(
    json_value,
    st.lists(
        st.one_of(
            json_value,
            st.dictionaries(
                st.sampled_from(["controller", "kind", "uid", "name"]),
                st.one_of(json_value, st.just(True), st.just("Pod")),
                max_size=4,
            ),
        ),
        max_size=3,
    ),
)
metadata_objects = st.one_of(
    json_value,
    st.fixed_dictionaries(
        {"metadata": st.one_of(json_value, st.dictionaries(META_KEYS, st.one_of(json_value, refs)))}
    ),
)


@settings(max_examples=500, deadline=None)
@given(metadata_objects)
def test_metadata_read_in_line_reads_as_the_general_path_does(obj: Any) -> None:
    """``uid``, ``name``, ``namespace`` and ``controller_ref`` read a dict's metadata in line."""
    assert raw.uid(obj) == raw.text(obj, "metadata", "uid")
    assert raw.name(obj) == raw.text(obj, "metadata", "name")
    assert raw.namespace(obj) == raw.text(obj, "metadata", "namespace")
    general = next(
        (r for r in raw.items(obj, "metadata", "ownerReferences") if r.get("controller") is True),
        {},
    )
    assert raw.controller_ref(obj) == general


SMALL = st.sampled_from(["", "a", "b"])
owned_pods = st.fixed_dictionaries(
    {
        "metadata": st.fixed_dictionaries(
            {
                "uid": SMALL,
                "namespace": SMALL,
                "ownerReferences": st.lists(
                    st.fixed_dictionaries(
                        {
                            "controller": st.sampled_from([True, False]),
                            "kind": st.sampled_from(["Pod", "Job"]),
                            "uid": SMALL,
                            "name": SMALL,
                        }
                    ),
                    max_size=2,
                ),
            }
        )
    }
)


def _owned(uid: str, owner_uid: str, owner: str = "d") -> dict[str, Any]:
    ref = {"controller": True, "kind": "Pod", "uid": owner_uid, "name": owner}
    return {"metadata": {"uid": uid, "namespace": "n", "ownerReferences": [ref]}}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(owned_pods, metadata_objects), max_size=6), st.sets(SMALL))
@example([_owned("e1", "a")], {"a"})  # an owner already known elsewhere
@example([_owned("e1", "e2"), _owned("e2", "a"), _owned("e3", "b")], set())  # one name, two uids
def test_missing_owners_as_read_pod_by_pod(pods: list[Any], skip: set[str]) -> None:
    """Each owner once (a hundred executors name one driver): the same answer as pod by pod."""
    from kubectl_spark.kube.snapshot import missing_owners

    listed = {raw.uid(p) for p in pods} | skip
    expected: dict[tuple[str, str], str] = {}
    for pod in pods:
        ref = raw.controller_ref(pod)
        if raw.text(ref, "kind") == "Pod" and raw.text(ref, "uid") not in listed:
            expected.setdefault((raw.namespace(pod), raw.text(ref, "name")), raw.text(ref, "uid"))
    assert missing_owners(pods_of(pods), skip) == expected


# One step of a watch's pods: ("put", uid, pod), ("delete", uid, None), ("list", "", pods),
# or ("look", "", None): the poll asks.
changes = st.lists(
    st.one_of(
        st.tuples(st.just("put"), SMALL, st.one_of(owned_pods, metadata_objects)),
        st.tuples(st.just("delete"), SMALL, st.none()),
        st.tuples(st.just("list"), st.just(""), st.lists(owned_pods, max_size=4)),
        st.tuples(st.just("look"), st.just(""), st.none()),
    ),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(changes, st.sets(SMALL))
# listed again: the same uid now names another owner, and a pod left out is gone
@example(
    [
        ("put", "e1", _owned("e1", "a")),
        ("put", "e2", _owned("e2", "b")),
        ("look", "", None),
        ("list", "", [_owned("e1", "b", "other")]),
    ],
    set(),
)
@example([("put", "e1", _owned("e1", "a")), ("look", "", None), ("delete", "e1", None)], set())
def test_owners_read_as_pods_change_answer_as_the_scan_of_every_pod(
    steps: list[tuple[str, str, Any]], skip: set[str]
) -> None:
    """``PodOwners`` (the TUI's owner poll) reads again only the pods changed since it last
    looked, yet answers as ``missing_owners`` over every pod, at every look."""
    from kubectl_spark.kube.snapshot import PodOwners, missing_owners

    pods: dict[str, Pod] = {}
    owners = PodOwners()

    def look() -> None:
        # The watch keys its pods by uid, so a pod's key is its uid as ``raw.uid`` reads it.
        taken = owners.take(pods)
        assert owners.missing(taken, skip) == missing_owners(list(pods.values()), skip)

    for step, uid, found in steps:
        if step == "put":
            meta = found.get("metadata") if isinstance(found, dict) else None
            pods[uid] = Pod.of(
                {**found, "metadata": {**meta, "uid": uid}}
                if isinstance(meta, dict)
                else {"metadata": {"uid": uid}}
            )
            owners.changed(uid)
        elif step == "delete":
            pods.pop(uid, None)
            owners.changed(uid)
        elif step == "list":
            pods = {raw.uid(p): Pod.of(p) for p in found}
            owners.listed()
        else:
            look()
    look()


role_pods = st.fixed_dictionaries(
    {
        "metadata": st.fixed_dictionaries(
            {
                "uid": SMALL,
                "labels": st.one_of(
                    st.dictionaries(
                        st.just("spark-role"),
                        st.sampled_from(["driver", "executor", 1, None, ["driver"]]),
                    ),
                    json_value,
                ),
            }
        )
    }
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(owned_pods, metadata_objects, role_pods), max_size=8),
    st.integers(min_value=1, max_value=4),
    st.sets(SMALL),
)
def test_the_index_gathered_page_by_page_answers_as_the_scans_of_the_whole_list(
    pods: list[Any], size: int, skip: set[str]
) -> None:
    """``PodIndex``: the owners to read and the driver pods, as the whole-list scans find them;
    a list started again (410) starts it again."""
    from kubectl_spark.kube.snapshot import PodIndex, missing_owners

    typed = pods_of(pods)  # as the gateway types each page
    index = PodIndex()
    index.add(pods_of([{"metadata": {"uid": "gone", "labels": {"spark-role": "driver"}}}]))
    index.clear()  # the first page again
    for start in range(0, len(typed), size):
        index.add(typed[start : start + size])
    assert index.missing_owners(skip) == missing_owners(typed, skip)
    assert index.drivers == [
        t for t, p in zip(typed, pods, strict=True) if raw.label(p, "spark-role") == "driver"
    ]
