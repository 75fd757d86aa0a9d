"""The simulator's Spark held to real Spark: one scenario played by both, the same answers.

The demo and most of the suite run simulated Spark (``sim/spark.py``). Here one scenario — an
application submitted in cluster mode with two executors, one of which is SIGKILLed from outside
while its driver runs on — is played by simulated Spark on the emulator and by Spark 4.1.1 on the
real control plane, and ``kubectl spark describe -o json`` must say the same of both: each
attempt's state and reason, each executor's state and reason (code, category, exit code and
both of Spark's counters), names, ids, nodes and times aside. A difference found here is fixed in
the simulator, or listed below with its reason:

- none.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kubectl_spark.cli.main import main
from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer, EmulatorOptions
from kubectl_spark.knowledge.clock import ManualClock
from kubectl_spark.sim.sparkapp import AppConfig
from kubectl_spark.sim.world import World

from .bed import Cluster, until
from .launch import spark_submit

pytestmark = [pytest.mark.realspark, pytest.mark.timeout(300)]

APP = "diff"


def answer(app: dict[str, Any]) -> dict[str, Any]:
    """What must agree: states and reasons, without names, ids, nodes or times."""

    def reason(found: dict[str, Any] | None) -> tuple[Any, ...] | None:
        if not found:
            return None
        return (
            found["code"],
            found["category"],
            found["exitCode"],
            found["countsAsFailure"],
            found.get("countsTowardMaxNumFailures"),
        )

    return {
        "attempts": [
            {
                "state": a["state"],
                "reason": reason(a["reason"]),
                "executors": sorted(
                    Counter((e["state"], reason(e["reason"])) for e in a["executors"]).items(),
                    key=repr,
                ),
            }
            for a in app["attempts"]
        ]
    }


def simulated(tmp: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    clock = ManualClock(datetime.now(UTC).replace(microsecond=0))
    server = EmbeddedApiServer(EmulatorOptions(clock=clock)).start()
    world = World.for_server(server, clock)
    try:
        for node in ("node-a", "node-b"):
            world.add_node(node)
        world.submit(AppConfig(APP))
        for _ in range(120):
            world.step(1)
            running = [
                p
                for p in world.find_pods("default", spark_app_name=APP, spark_role="executor")
                if (p.get("status") or {}).get("phase") == "Running"
            ]
            if len(running) == 2:
                break
        victim = next(p for p in running if p["metadata"]["labels"]["spark-exec-id"] == "1")
        world.exit_container("default", victim["metadata"]["name"], 137)
        world.step(30)
        kubeconfig = server.write_kubeconfig(tmp / "sim.kubeconfig")
        capsys.readouterr()
        code = main(["--kubeconfig", str(kubeconfig), "describe", APP, "-o", "json"])
        out, err = capsys.readouterr()
        assert code == 0, err
        found: dict[str, Any] = json.loads(out)
        return found
    finally:
        world.close()
        server.stop()


def real(c: Cluster) -> dict[str, Any]:
    c.kubelet.add_node("node-a")
    c.kubelet.add_node("node-b")
    spark_submit(c, APP, "steady.py")
    until(lambda: len(c.running(spark_role="driver")) == 1, 60, "the driver running")
    (driver,) = c.running(spark_role="driver")

    def active() -> list[str]:
        return [e["id"] for e in c.executors(driver) if e["isActive"] and e["id"] != "driver"]

    until(lambda: sorted(active()) == ["1", "2"], 90, "two executors registered with Spark")
    (victim,) = c.pods(spark_exec_id="1")
    c.kubelet.kill_container(c.namespace, victim["metadata"]["name"])
    until(lambda: "1" not in active() and len(active()) == 2, 90, "Spark replaced executor 1")
    found: dict[str, Any] = json.loads(c.kubectl_spark("describe", APP, "-o", "json").stdout)
    return found


def test_simulated_and_real_spark_give_the_same_answers(
    cluster: Cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    theirs = real(cluster)
    ours = simulated(tmp_path, capsys)
    assert answer(ours) == answer(theirs), json.dumps(
        {"simulated": answer(ours), "real": answer(theirs)}, indent=1, default=str
    )
