"""A SparkCluster of the Apache operator: its own application, on both backends.

Its master and workers are pods of two StatefulSets labelled spark-role master/worker and
spark.operator/spark-cluster-name (SparkClusterResourceSpec); here they are made as bare pods
with those labels, so that the same body runs where no StatefulSet controller does.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubectl_spark.sim import scenario as scenarios
from tests.stages import Stage

pytestmark = pytest.mark.slow
CLUSTERS = "/apis/spark.apache.org/v1/namespaces/default/sparkclusters"


def _pod(name: str, role: str) -> dict[str, Any]:
    labels = {
        "spark-role": role,
        "spark.operator/spark-cluster-name": "prod",
        "spark.operator/name": "spark-kubernetes-operator",
    }
    container = {"name": role, "image": "apache/spark:4.0.1", "args": [role]}
    return {"metadata": {"name": name, "labels": labels}, "spec": {"containers": [container]}}


@pytest.fixture
def stage(staged: Any) -> Stage:
    doc: dict[str, Any] = {
        "name": "spark-cluster",
        "title": "a SparkCluster beside an application",
        "description": "driven by the test",
        "nodes": [{"name": "node-a"}, {"name": "node-b"}],
        "apps": [{"name": "pi", "launch": "apache", "executors": 1}],
        "steps": [],
    }
    return staged(scenarios.parse(doc, doc["name"]))


def test_a_sparkcluster_is_its_own_application(
    stage: Stage, capsys: pytest.CaptureFixture[str]
) -> None:
    s = stage
    client = s.world.client
    cluster = client.create(
        CLUSTERS,
        {"apiVersion": "spark.apache.org/v1", "kind": "SparkCluster",
         "metadata": {"name": "prod"}, "spec": {"runtimeVersions": {"sparkVersion": "4.0.1"}}},
    )  # fmt: skip
    status = {"currentState": {"currentStateSummary": "RunningHealthy", "message": "ready"}}
    client.request("PUT", f"{CLUSTERS}/prod/status", {**cluster, "status": status})
    for name, role in (("prod-master-0", "master"), ("prod-worker-0", "worker"),
                       ("prod-worker-1", "worker")):  # fmt: skip
        client.create("/api/v1/namespaces/default/pods", _pod(name, role))
    s.do("submit", "pi")
    s.until(
        "the master, both workers and pi's driver running",
        lambda: (
            len(s.running(spark_role="master")) == 1
            and len(s.running(spark_role="worker")) == 2
            and len(s.running(spark_role="driver")) == 1
        ),
    )
    s.world.oom_kill("default", "prod-worker-1")  # restartPolicy Always: it restarts in place

    def restarted() -> bool:
        (worker,) = [p for p in s.pods(spark_role="worker") if p["metadata"]["name"].endswith("-1")]
        statuses = (worker.get("status") or {}).get("containerStatuses") or []
        return bool(statuses) and statuses[0].get("restartCount", 0) >= 1

    s.until("the worker OOM-killed and restarted", restarted)
    code, out, err = s.cli(capsys, "ls", "-o", "json")
    assert code == 0, err
    doc = json.loads(out)
    by_name = {a["name"]: a for a in doc["items"]}
    assert doc["ungrouped"] == []
    prod, pi = by_name["prod"], by_name["pi"]
    assert (prod["source"], prod["state"], pi["source"]) == (
        "spark-cluster",
        "Running",
        "apache-operator",
    )
    (master,) = prod["attempts"]
    assert master["driverPod"] == "prod-master-0"
    workers = {e["id"]: e for e in master["executors"]}
    assert sorted(workers) == ["0", "1"]
    assert workers["1"]["restarts"] == 1 and workers["0"]["restarts"] == 0
    assert all("prod-" not in e["pod"] for t in pi["attempts"] for e in t["executors"])
    assert prod["operator"]["kind"] == "SparkCluster"

    code, out, err = s.cli(capsys, "describe", "prod")
    assert code == 0, err
    assert "Source:       spark-cluster (prod)" in out
    assert "Operator:     RunningHealthy: ready" in out
    code, out, err = s.cli(capsys, "history", "prod", "-o", "json")
    restarts = [h for h in json.loads(out)["items"] if h["kind"] == "ContainerRestarted"]
    assert [(h["executor"], "OOMKilled" in h["message"]) for h in restarts] == [("1", True)]
