"""The Apache Spark Kubernetes Operator's scenarios (S10, S11) on the emulator and a real control plane.

The simulator plays the operator (``sim.apache_operator``) against the CRDs both backends
serve; on the real control plane the real node lifecycle, taint eviction, scheduler and garbage
collector do the rest. Its timeouts are shortened there (real seconds), kept on the emulator.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubectl_spark.sim.client import pod
from tests.stages import Stage, alerts

pytestmark = pytest.mark.slow
APPS = "/apis/spark.apache.org/v1/namespaces/default/sparkapplications"


def _state(s: Stage, name: str) -> str:
    app = s.world.client.get(f"{APPS}/{name}") or {}
    return str(((app.get("status") or {}).get("currentState") or {}).get("currentStateSummary"))


def _timeouts(s: Stage, name: str, **millis: int) -> None:
    """Real seconds on the real control plane: the scenario's minutes would outlast a wait."""
    if s.kind != "real":
        return
    tolerations = s.scenario.apps[name].apache_tolerations
    tolerations["applicationTimeoutConfig"] = {
        **tolerations.get("applicationTimeoutConfig", {}),
        **millis,
    }
    tolerations["restartConfig"] = {**tolerations["restartConfig"], "restartBackoffMillis": 2000}


def _driver_waiting_on_its_image(s: Stage, name: str) -> dict[str, Any]:
    s.do("submit", name)
    s.until("attempt 0's driver pod", lambda: bool(s.pods(spark_role="driver")))
    s.do("fail_image_pull", name)
    (driver,) = s.pods(spark_role="driver")
    assert driver["metadata"]["name"] == f"{name}-0-driver"  # <appId>-driver, appId <name>-0
    return driver


def _running(s: Stage, driver: str) -> bool:
    return any(p["metadata"]["name"] == driver for p in s.running(spark_role="driver"))


def test_s10_an_infrastructure_failure_is_retried_an_app_failure_is_not(
    staged: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    s = staged("s10-apache-infra-retry")
    _timeouts(s, "etl", driverStartTimeoutMillis=8000)
    _driver_waiting_on_its_image(s, "etl")
    s.until("attempt 1's driver running", lambda: _running(s, "etl-1-driver"))
    s.until("the operator sees it healthy", lambda: _state(s, "etl") == "RunningHealthy")

    app = s.app(capsys, "etl")
    assert (app["source"], app["state"], app["appId"]) == ("apache-operator", "Running", "etl-0")
    first, second = app["attempts"]
    assert (first["driverPod"], first["state"]) == ("etl-0-driver", "Failed")
    assert (first["reason"]["code"], first["reason"]["category"]) == (
        "DriverStartTimedOut",
        "cluster",
    )
    assert any("stateTransitionHistory" in e for e in first["reason"]["evidence"])
    assert (second["driverPod"], second["state"]) == ("etl-1-driver", "Running")
    operator = app["operator"]
    assert (operator["attemptId"], operator["restartCounter"], operator["restartPolicy"]) == (
        1,
        1,
        "OnInfrastructureFailure",
    )
    code, out, err = s.cli(capsys, "describe", "etl")
    assert code == 0, err
    assert "Restart:      OnInfrastructureFailure (after SchedulingFailure" in out
    assert "1 of 3 restarts used" in out
    code, out, err = s.cli(capsys, "history", "etl", "-o", "json")
    told = [(h["attempt"], h["message"].split(" (")[0]) for h in json.loads(out)["items"]]
    assert (1, "SparkApplication DriverStartTimedOut") in told
    assert (2, "SparkApplication RunningHealthy") in told

    s.do("exit", "etl", code=1)  # the app's own failure: OnInfrastructureFailure stops here
    s.until("the operator releases it", lambda: _state(s, "etl") == "ResourceReleased")
    app = s.app(capsys, "etl")
    assert app["state"] == "Failed" and len(app["attempts"]) == 2
    last = app["attempts"][1]
    assert (last["state"], last["reason"]["code"], last["reason"]["category"]) == (
        "Failed",
        "ExitCode",
        "app",
    )
    assert last["reason"]["exitCode"] == 1


def test_s11_a_driver_on_a_lost_node_is_held_then_force_deleted(
    staged: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    s = staged("s11-apache-force-delete")
    _timeouts(s, "stream", driverStartTimeoutMillis=20000, forceTerminationGracePeriodMillis=15000)
    driver = _driver_waiting_on_its_image(s, "stream")
    s.until(
        "the driver is bound", lambda: bool(s.pods(spark_role="driver")[0]["spec"].get("nodeName"))
    )
    node = s.pods(spark_role="driver")[0]["spec"]["nodeName"]
    s.do("partition", node)

    def held() -> bool:
        found = s.world.client.get(pod("default", "stream-0-driver"))
        return (
            _state(s, "stream") == "DriverStartTimedOut"
            and found is not None
            and bool(found["metadata"].get("deletionTimestamp"))
        )

    s.until("the operator's delete stuck on the lost node", held)
    app = s.app(capsys, "stream")
    found = alerts(app)
    assert found.get("ReplacementBlocked") == [1], found
    blocked = next(a for a in app["alerts"] if a["type"] == "ReplacementBlocked")
    assert "forceTerminationGracePeriodMillis" in blocked["message"]
    assert "kubectl spark fence stream/1" in blocked["message"]

    s.until("attempt 1's driver running", lambda: _running(s, "stream-1-driver"))
    assert s.world.client.get(pod("default", driver["metadata"]["name"])) is None
    app = s.app(capsys, "stream")
    found = alerts(app)
    assert found.get("ForceDeletedOnLostNode") == [1], found
    first, second = app["attempts"]
    assert first["driverPod"] == "stream-0-driver" and first["state"] in ("Lost", "Failed")
    assert any("DriverStartTimedOut" in e for e in first["reason"]["evidence"])
    assert second["state"] == "Running" and second["node"] != node
    assert app["operator"]["attemptId"] == 1
