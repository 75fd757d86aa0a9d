"""S12, Spark 4.2's Deployment allocator, on the emulator and a real control plane.

The driver makes one Deployment (spark-d-<appId>-0); the real Deployment and ReplicaSet
controllers (the simulator's stand-ins on the emulator) make the executor pods, labelled with
the app id and executor id EXECID. An OOM kill restarts an executor in place; an eviction fails
its pod and the ReplicaSet replaces it; force-kill must delete the Deployment first.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.stages import Stage

pytestmark = pytest.mark.slow


def _restarts(item: dict[str, Any]) -> int:
    statuses = (item.get("status") or {}).get("containerStatuses") or []
    return int(statuses[0].get("restartCount") or 0) if statuses else 0


def test_s12_deployment_executors_are_the_attempts_and_their_controller_goes_first(
    staged: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    s: Stage = staged("s12-spark4-deployment-executors")
    s.do("submit", "features")
    s.until(
        "the driver and two executors running",
        lambda: (
            len(s.running(spark_role="driver")) == 1 and len(s.running(spark_role="executor")) == 2
        ),
    )
    first = min(p["metadata"]["name"] for p in s.running(spark_role="executor"))
    assert first.startswith("spark-d-")
    owners = s.pods(spark_role="executor")[0]["metadata"]["ownerReferences"]
    assert [o["kind"] for o in owners] == ["ReplicaSet"]

    s.do("oom_kill", {"app": "features", "role": "executor"})
    s.until(
        "an executor restarted in place",
        lambda: any(_restarts(p) >= 1 for p in s.running(spark_role="executor")),
    )
    (restarted,) = [p for p in s.pods(spark_role="executor") if _restarts(p) >= 1]
    s.do("evict", {"app": "features", "role": "executor"})
    s.until(
        "the evicted pod replaced by its ReplicaSet",
        lambda: (
            len(s.running(spark_role="executor")) == 2 and len(s.pods(spark_role="executor")) == 3
        ),
    )

    app = s.app(capsys, "features")
    (attempt,) = app["attempts"]
    by_pod = {e["pod"]: e for e in attempt["executors"]}
    assert len(by_pod) == 3  # the pods, not Spark's ids a second time
    evicted = by_pod[restarted["metadata"]["name"]]
    assert (evicted["state"], evicted["reason"]["code"], evicted["restarts"]) == (
        "Failed",
        "Evicted",
        1,
    )
    assert evicted["id"] == restarted["metadata"]["name"].rpartition("-")[2]
    assert sum(1 for e in by_pod.values() if e["state"] == "Running") == 2
    assert app["summary"]["losses"] == {"app": 1}
    code, out, err = s.cli(capsys, "history", "features", "-o", "json")
    assert code == 0, err
    kinds = [(h["kind"], h["executor"]) for h in json.loads(out)["items"]]
    assert ("ContainerRestarted", evicted["id"]) in kinds

    code, out, err = s.cli(capsys, "force-kill", "features/1", "--force", "--dry-run", "-o", "json")
    assert code == 0, err
    deletes = [
        (o["resource"], o["name"]) for o in json.loads(out)["operations"] if o["verb"] == "delete"
    ]
    assert deletes[0] == ("pods", s.running(spark_role="driver")[0]["metadata"]["name"])
    assert deletes[1][0] == "deployments" and deletes[1][1].startswith("spark-d-")
    assert {r for r, _ in deletes[2:]} == {"pods"}
