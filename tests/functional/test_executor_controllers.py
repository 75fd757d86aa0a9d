"""Issue 24: executors owned by a StatefulSet (Spark 3.3+'s allocator) are not deleted one by
one while their StatefulSet makes them again: force-kill deletes the StatefulSet first.

On the real control plane its controller creates (and would recreate) the pods; the emulator
stores StatefulSets with no controller behind them, so the test makes the pods as it would.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from kubectl_spark.cli.main import main
from kubectl_spark.sim.client import Client
from tests.beds import Bed

NS = "/api/v1/namespaces/default/pods"
STS = "/apis/apps/v1/namespaces/default/statefulsets"
APP_ID = "spark-0123456789abcdef0123456789abcdef"
LABELS = {"spark-app-selector": APP_ID, "spark-app-name": "etl"}


def _container() -> dict[str, Any]:
    return {"name": "spark-kubernetes-executor", "image": "apache/spark:3.5.3"}


def _until(world: Any, what: str, predicate: Any) -> None:
    for _ in range(150):
        world.tick()
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"{what} did not happen")


def test_force_kill_deletes_the_statefulset_before_its_executors(
    bed: Bed, tmp_path: Path, capsys
) -> None:
    world = bed.world()
    world.add_node("node-a")
    client: Client = world.client
    driver = client.create(
        NS,
        {
            "metadata": {"name": "etl-driver", "labels": {**LABELS, "spark-role": "driver"}},
            "spec": {"containers": [{**_container(), "name": "spark-kubernetes-driver"}]},
        },
    )
    owner = {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": "etl-driver",
        "uid": driver["metadata"]["uid"],
        "controller": True,
    }
    template_labels = {**LABELS, "spark-role": "executor"}
    sts = client.create(
        STS,
        {
            "metadata": {"name": f"spark-s-{APP_ID}-0", "ownerReferences": [owner]},
            "spec": {
                "replicas": 2,
                "podManagementPolicy": "Parallel",
                "serviceName": "etl-executors",
                "selector": {"matchLabels": template_labels},
                "template": {
                    "metadata": {"labels": template_labels},
                    "spec": {"containers": [_container()]},
                },
            },
        },
    )
    if bed.kind == "emulator":  # the StatefulSet controller's part
        sts_ref = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": sts["metadata"]["name"],
                   "uid": sts["metadata"]["uid"], "controller": True}  # fmt: skip
        for i in range(2):
            client.create(
                NS,
                {
                    "metadata": {"name": f"{sts['metadata']['name']}-{i}", "labels": template_labels,
                                 "ownerReferences": [sts_ref]},
                    "spec": {"containers": [_container()]},
                },
            )  # fmt: skip

    def running(role: str) -> list[dict[str, Any]]:
        return [
            p
            for p in client.list(NS, labelSelector=f"spark-role={role}")
            if (p.get("status") or {}).get("phase") == "Running"
            and not p["metadata"].get("deletionTimestamp")
        ]

    _until(
        world,
        "the driver and two executors running",
        lambda: len(running("driver")) == 1 and len(running("executor")) == 2,
    )
    kubeconfig = bed.write_kubeconfig(tmp_path / "kubeconfig")
    code = main(
        [
            "--kubeconfig",
            str(kubeconfig),
            "force-kill",
            "etl/1",
            "--force",
            "--dry-run",
            "-o",
            "json",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    ops = [
        (o["verb"], o["resource"], o["name"])
        for o in json.loads(out)["operations"]
        if o["verb"] == "delete"
    ]
    assert ops[0] == ("delete", "pods", "etl-driver")
    assert ops[1] == ("delete", "statefulsets", sts["metadata"]["name"])
    assert [o[1] for o in ops[2:]] == ["pods", "pods"]
    code = main(["--kubeconfig", str(kubeconfig), "force-kill", "etl/1", "--force", "--yes"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert client.list(STS) == []
    # Nothing makes the executors again (on the real control plane, the StatefulSet controller
    # would have, had its StatefulSet stayed).
    for _ in range(4):
        world.tick()
        time.sleep(0.2)
    assert client.list(NS, labelSelector="spark-role=executor") == []
