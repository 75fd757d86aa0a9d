"""``ls -w`` seeds its watches with the snapshot it printed first: kept pods stay."""

from __future__ import annotations

from typing import Any

from kubectl_spark.kube.live import LiveCluster
from tests.core_pods import kept, typed_snapshot


def _pod(uid: str) -> dict[str, Any]:
    return {"metadata": {"name": uid, "namespace": "ns", "uid": uid,
                         "labels": {"spark-role": "executor"}}}  # fmt: skip


def test_kept_copies_in_the_printed_snapshot_become_tombstones() -> None:
    live = LiveCluster(lambda: None, "ns")  # type: ignore[arg-type,return-value]
    snapshot = typed_snapshot(
        pods=[
            _pod("live"),
            kept(_pod("from-store"), "history", "2026-01-01T00:00:00Z"),
            kept(_pod("from-watch"), "watch", "2026-01-01T00:00:00Z"),
            kept(_pod("from-recorder"), "recorder", "2026-01-01T00:00:00Z"),
        ]
    )
    live.seed_snapshot(snapshot)
    # Told by each kept copy's source (once read as a label: nothing stayed).
    assert set(live.tombstones) == {"from-store", "from-watch", "from-recorder"}
