"""Both operators' shapes with Spark's own driver and executors.

The SparkApplication (kubeflow's v1beta2, Apache's v1) is made as each operator makes it, and
its driver by Spark's own submission code with the operator's confs (``launch.kubeflow_app``,
``launch.apache_app``). kubectl spark must group the real pods under the SparkApplication and
say of an executor killed from outside what Spark itself said.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from .agreement import assert_agrees_with_spark
from .bed import Cluster, until
from .launch import apache_app, kubeflow_app

pytestmark = [pytest.mark.realspark, pytest.mark.timeout(400)]


def active(c: Cluster, driver: dict[str, Any]) -> list[str]:
    return [e["id"] for e in c.executors(driver) if e["isActive"] and e["id"] != "driver"]


@pytest.mark.parametrize(
    ("launch", "source", "driver_pod"),
    [
        (kubeflow_app, "sparkapplication", "opwc-driver"),
        (apache_app, "apache-operator", "opwc-0-driver"),
    ],
    ids=["kubeflow", "apache"],
)
def test_an_operators_application_with_sparks_own_driver(
    cluster: Cluster, launch: Callable[..., dict[str, Any]], source: str, driver_pod: str
) -> None:
    c = cluster
    c.kubelet.add_node("node-a")
    launch(c, "opwc", "steady.py")
    until(lambda: len(c.running(spark_role="driver")) == 1, 60, "the driver running")
    (driver,) = c.running(spark_role="driver")
    assert driver["metadata"]["name"] == driver_pod
    assert [o["kind"] for o in driver["metadata"]["ownerReferences"]] == ["SparkApplication"]
    until(lambda: len(active(c, driver)) == 1, 90, "its executor registered with Spark")

    app = c.app_json("opwc")
    assert app["source"] == source, app
    (attempt,) = app["attempts"]
    assert (attempt["driverPod"], attempt["state"]) == (driver_pod, "Running"), attempt

    # An executor killed from outside: what kubectl spark says is what Spark said.
    (first,) = active(c, driver)
    (victim,) = c.pods(spark_exec_id=first)
    c.kubelet.kill_container(c.namespace, victim["metadata"]["name"])
    until(lambda: first not in active(c, driver), 60, "Spark removed the killed executor")
    removed = assert_agrees_with_spark(c, "opwc", driver)
    assert [e["id"] for e in removed] == [first]
