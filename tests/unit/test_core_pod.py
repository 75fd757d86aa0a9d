"""A pod typed once at the gateway (``core.pod``) reads as ``raw`` reads the API's JSON."""

from __future__ import annotations

import copy
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_spark.core import raw
from kubectl_spark.core.pod import Pod, as_json, kept_copy
from tests.hostile import RUNNING, json_value, varied_pods


def test_a_well_formed_pod_is_typed_whole_and_written_back_as_the_api_wrote_it() -> None:
    pod = Pod.of(RUNNING)
    assert pod.metadata.name == RUNNING["metadata"]["name"]
    assert pod.status.phase == "Running" and pod.source == "cluster" and not pod.kept
    assert Pod.of(pod) is pod  # typed once: reading it again changes nothing
    written = as_json(pod)
    assert written["metadata"] == {
        k: v for k, v in RUNNING["metadata"].items() if k != "managedFields"
    }
    assert Pod.of(written) == pod


def test_where_a_pod_was_read_is_a_field_never_written_as_the_apis() -> None:
    gone = kept_copy(Pod.of(RUNNING), "watch", "2026-03-01T03:00:00Z")
    assert (gone.source, gone.seen_at, gone.kept) == ("watch", "2026-03-01T03:00:00Z", True)
    assert "source" not in as_json(gone) and "seenAt" not in as_json(gone)
    assert Pod.of(RUNNING).source == "cluster"  # the original is not changed


def test_the_json_readers_refuse_a_typed_pod() -> None:
    """A reader not moved to the typed fields fails loudly instead of reading nothing."""
    with pytest.raises(TypeError, match="typed"):
        raw.text(Pod.of(RUNNING), "status", "phase")


_PATHS = [
    ("metadata", "name"),
    ("metadata", "uid"),
    ("metadata", "creationTimestamp"),
    ("metadata", "deletionTimestamp"),
    ("spec", "nodeName"),
    ("spec", "restartPolicy"),
    ("status", "phase"),
    ("status", "reason"),
    ("status", "podIP"),
]


def _typed_text(pod: Pod, path: tuple[str, str]) -> str:
    part = {"metadata": pod.metadata, "spec": pod.spec, "status": pod.status}[path[0]]
    field = next(
        f.name
        for f in msgspec.structs.fields(type(part))
        if f.encode_name == path[1]  # the API's name of the field
    )
    value = getattr(part, field)
    assert isinstance(value, str)
    return value


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.one_of(varied_pods(), json_value, st.dictionaries(st.text(max_size=8), json_value)))
def test_any_json_is_typed_as_raw_reads_it(pod: Any) -> None:
    """Never raises; each text is ``raw.text``'s reading, each label ``raw.labels``', each
    container status ``raw.items``' (its restart count ``raw.number``'s)."""
    typed = Pod.of(copy.deepcopy(pod))
    for path in _PATHS:
        assert _typed_text(typed, path) == raw.text(pod, *path)
    assert typed.metadata.labels == raw.labels(pod)
    statuses = raw.items(pod, "status", "containerStatuses")
    assert [s.name for s in typed.status.container_statuses] == [
        raw.text(s, "name") for s in statuses
    ]
    assert [s.restart_count for s in typed.status.container_statuses] == [
        raw.number(s, "restartCount") for s in statuses
    ]
    ref = raw.controller_ref(pod)
    found = typed.controller()
    assert (found.uid if found else "") == raw.text(ref, "uid")
