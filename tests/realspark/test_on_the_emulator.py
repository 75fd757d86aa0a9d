"""Real Spark's client against the project's emulator: a job runs to its end.

Spark's driver watches its executor pods through fabric8 7.x, over a WebSocket; the emulator
answered the upgrade with a chunked 200 and the driver waited for good at its first watch
(``ExecutorPodsWatchSnapshotSource.start``). Everything else Spark asks of the API on the way —
the driver pod, its headless Service and ConfigMap with ownerReferences, executor pods owned by
the driver, the polling LIST, deletes by label at the end — must be served as kube-apiserver
serves it, or the job does not finish.
"""

from __future__ import annotations

import pytest

from .bed import Cluster, until
from .launch import spark_submit

pytestmark = [pytest.mark.realspark, pytest.mark.timeout(300)]


def test_a_spark_job_runs_to_its_end_on_the_emulator(emulated: Cluster) -> None:
    c = emulated
    c.kubelet.add_node("node-a")
    spark_submit(c, "sum", "steady.py", "3")
    until(
        lambda: [p["status"].get("phase") for p in c.pods(spark_role="driver")] == ["Succeeded"],
        150,
        "the driver finished",
        lambda: "\n".join(
            line
            for d in c.pods(spark_role="driver")
            for line in c.log(d).splitlines()
            if "WARN" in line or "ERROR" in line or "Exception" in line
        )[-4000:],
    )
    (driver,) = c.pods(spark_role="driver")
    assert "steady: sum 4999950000" in c.log(driver)
    # Spark deleted its executors at its end (deleteOnTermination), by label.
    until(lambda: c.pods(spark_role="executor") == [], 30, "the executors deleted by Spark")
