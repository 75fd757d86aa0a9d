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


def test_logs_finds_a_deployment_executor_by_sparks_own_id(
    cluster: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Spark's UI and the driver's log say "executor 3"; the pod's name says ``…-x7k2q``.

    The pod restarted in place ran two of Spark's executors one after the other (Spark's list
    names both by the pod's IP): each id finds that pod, as ``sparkIds`` in the JSON says.
    (On the emulator: the driver's REST API is read through the API server's pod proxy, which
    the real control plane would dial at a pod IP no simulated pod listens on.)
    """
    from kubectl_spark.cli.main import main

    c = cluster("s12-spark4-deployment-executors")
    c.player.play_until(100)  # after the OOM kill at 60 s: one pod, two JVMs

    def cli(*args: str) -> tuple[int, str, str]:
        code = main(["--kubeconfig", str(c.kubeconfig), *args])
        out, err = capsys.readouterr()
        return code, out, err

    code, out, err = cli("ls", "-o", "json")
    assert code == 0, err
    (attempt,) = json.loads(out)["items"][0]["attempts"]
    hosting = {tuple(e.get("sparkIds") or ()): e for e in attempt["executors"]}
    restarted = next(e for ids, e in hosting.items() if len(ids) == 2)
    first, second = restarted["sparkIds"]
    assert int(first) < int(second)
    assert restarted["id"] not in (first, second)  # the pod's suffix, not Spark's id

    code, by_pod, err = cli("logs", f"features/1/{restarted['pod']}")
    assert code == 0, err
    for spark_id in (first, second):
        code, out, err = cli("logs", f"features/1/exec-{spark_id}")
        assert code == 0, err
        assert out == by_pod
    code, out, err = cli("logs", "features/1/exec-99")
    assert code == 1 and f"(Spark's {first}, {second})" in err, err
