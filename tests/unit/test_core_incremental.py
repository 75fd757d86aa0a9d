"""The incremental update gives the same answer as a full analysis."""

from __future__ import annotations

import copy

from kubectl_spark.core.analyze import Snapshot, analyze
from kubectl_spark.core.incremental import update
from tests.unit.test_core_grouping import NOW, mk, ref


def pods() -> list[dict]:
    out = []
    for app in ("a", "b", "c"):
        labels = {"spark-app-selector": f"spark-{app}", "spark-app-name": app}
        driver = mk(f"{app}-driver", "driver", "2026-03-01T00:00:00Z", labels=labels)
        out.append(driver)
        for i in (1, 2):
            out.append(
                mk(
                    f"{app}-exec-{i}",
                    "executor",
                    "2026-03-01T00:00:05Z",
                    labels={**labels, "spark-exec-id": str(i)},
                    owner=ref("Pod", f"{app}-driver", f"uid-{app}-driver"),
                )
            )
    return out


def test_incremental_equals_full() -> None:
    before = pods()
    previous = analyze(Snapshot(pods=before, now=NOW))
    after = copy.deepcopy(before)
    victim = next(p for p in after if p["metadata"]["name"] == "b-exec-2")
    victim["status"] = {
        "phase": "Failed",
        "containerStatuses": [
            {
                "name": "spark-kubernetes-executor",
                "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
            }
        ],
    }
    removed = next(p for p in after if p["metadata"]["name"] == "c-exec-1")
    after.remove(removed)
    snapshot = Snapshot(pods=after, now=NOW)
    fast = update(
        previous,
        snapshot,
        {victim["metadata"]["uid"], removed["metadata"]["uid"]},
        {removed["metadata"]["uid"]: removed},
    )
    assert fast.to_json() == analyze(snapshot).to_json()
    assert update(previous, Snapshot(pods=before, now=NOW), set(), {}) is previous
