"""Several clusters in the TUI (tui/many.py): each analyzed alone, the answers side by side."""

from __future__ import annotations

from dataclasses import fields
from datetime import UTC, datetime

from kubectl_spark.core.incremental import Change
from kubectl_spark.core.inputs import OBJECT_LISTS, Snapshot
from kubectl_spark.tui.many import ManyAnalysis, ManySnapshot
from tests.core_pods import mk, typed_snapshot

NOW = datetime(2026, 12, 5, tzinfo=UTC)
LABELS = {"spark-app-selector": "spark-1", "spark-app-name": "etl"}


def cluster(uid: str) -> Snapshot:
    return typed_snapshot(
        pods=[mk("etl-driver", "driver", "2026-12-04T00:00:00Z", uid=uid, labels=LABELS)], now=NOW
    )


def test_the_same_application_in_two_clusters_is_two_rows_each_marked() -> None:
    """Same namespace, name and pod name in both: analyzed together they would be one
    application with two attempts; each cluster is analyzed alone."""
    many = ManyAnalysis()
    snap = ManySnapshot.joined({"a": cluster("uid-a"), "b": cluster("uid-b")})
    answer = many.update(snap, None)
    assert [(app.context, app.name, len(app.attempts)) for app in answer.apps] == [
        ("a", "etl", 1),
        ("b", "etl", 1),
    ]
    assert [i["context"] for i in (a.to_json() for a in answer.apps)] == ["a", "b"]
    assert len(snap.pods) == 2  # lookups by uid see every cluster's pods


def test_every_list_of_objects_is_joined() -> None:
    """A list added to the snapshot and not to OBJECT_LISTS would be empty in the TUI's joined
    snapshot of several clusters."""
    sequences = {f.name for f in fields(Snapshot) if str(f.type).startswith("Sequence[")}
    # What a gateway read of its own pods, not an object list: read again where it is not
    # the very pod at its place (each cluster is analyzed alone, with its own).
    assert sequences - {"pod_facts"} == set(OBJECT_LISTS)


def test_a_quiet_cluster_keeps_its_rows_as_they_were() -> None:
    """A batch with no change for a cluster hands back its applications as the same objects,
    so the table does not make their rows again; nothing changed anywhere: the same answer."""
    many = ManyAnalysis()
    parts = {"a": cluster("uid-a"), "b": cluster("uid-b")}
    first = many.update(ManySnapshot.joined(parts), None)
    quiet: dict[str, dict[str, Change]] = {}
    again = many.update(ManySnapshot.joined(parts), {"a": quiet, "b": quiet})
    assert again is first
    changed = many.update(
        ManySnapshot.joined({**parts, "b": cluster("uid-b2")}), {"a": quiet, "b": None}
    )
    assert changed is not first
    assert changed.apps[0] is first.apps[0]  # cluster a's application, as it was
    assert changed.apps[1].attempts[0].uid == "uid-b2"
