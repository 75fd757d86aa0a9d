"""The Apache Spark Kubernetes Operator's scenarios (S10, S11) on the emulator and a real control plane.

S10 also shows a Spark History Server explaining an attempt whose pods are all gone.

The simulator plays the operator (``sim.apache_operator``) against the CRDs both backends
serve; on the real control plane the real node lifecycle, taint eviction, scheduler and garbage
collector do the rest. Its timeouts are shortened there (real seconds), kept on the emulator.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubectl_spark.knowledge.times import parse_time
from kubectl_spark.sim.client import pod
from kubectl_spark.sim.historyserver import HistoryServer
from tests.incluster import expose, free_port
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
    _timeouts(s, "etl", driverStartTimeoutMillis=5000)
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

    s.until("its two executors running", lambda: len(s.running(spark_role="executor")) == 2)
    victim = s.running(spark_role="executor")[0]["metadata"]["name"]
    s.do("oom_kill", {"app": "etl", "role": "executor"})
    s.until(
        "the OOM-killed executor's pod deleted by Spark",
        lambda: victim not in {p["metadata"]["name"] for p in s.pods(spark_role="executor")},
    )
    s.do("exit", "etl", code=1)  # the app's own failure: OnInfrastructureFailure stops here
    s.until("the operator releases it", lambda: _state(s, "etl") == "ResourceReleased")
    s.until("no pod of it left", lambda: not s.pods(spark_app_name="etl"))
    _the_history_server_explains_the_gone_attempt(s, capsys)
    app = s.app(capsys, "etl")
    assert app["state"] == "Failed" and len(app["attempts"]) == 2
    last = app["attempts"][1]
    assert (last["state"], last["reason"]["code"], last["reason"]["category"]) == (
        "Failed",
        "ExitCode",
        "app",
    )
    assert last["reason"]["exitCode"] == 1


def _the_history_server_explains_the_gone_attempt(
    s: Stage, capsys: pytest.CaptureFixture[str]
) -> None:
    """No pod is left and no store recorded it: attempt 2's executors only from a Spark History
    Server (the simulator's, serving the same REST shape from what the driver knew)."""
    code, out, err = s.cli(capsys, "describe", "etl", "-o", "json")
    assert code == 0, err
    assert json.loads(out)["attempts"][1]["executors"] == []
    history = HistoryServer(s.world.spark).start()
    try:
        code, out, err = s.cli(
            capsys, "describe", "etl", "-o", "json", "--history-server", history.url, "-v=6"
        )
    finally:
        history.stop()
    assert code == 0, err
    # -v=6 says where the answer came from (the driver's own entry, its executors, a replacement)
    assert f"Spark History Server {history.url}: etl-1: 4 executor(s)" in err
    app = json.loads(out)
    assert "history-server" in app["sources"]
    lost = [e for e in app["attempts"][1]["executors"] if e["reason"] is not None]
    assert [(e["source"], e["state"], e["reason"]["code"]) for e in lost] == [
        ("spark", "Gone", "OOMKilled")
    ], app["attempts"][1]["executors"]
    assert any("Spark History Server" in line for line in lost[0]["reason"]["evidence"])
    _found_by_its_service(s, capsys, app)


def _found_by_its_service(
    s: Stage, capsys: pytest.CaptureFixture[str], by_url: dict[str, Any]
) -> None:
    """The same answer with no flag: the History Server's Service found by its label and read
    through the API server's service proxy."""
    port = free_port()
    history = HistoryServer(s.world.spark).start("0.0.0.0", port)
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "spark-history-server", "namespace": "spark-history",
                     "labels": {"app.kubernetes.io/name": "spark-history-server"}},
        "spec": {"selector": {"app": "shs"},
                 "ports": [{"name": "http", "port": port, "targetPort": "http"}]},
    }  # fmt: skip
    try:
        expose(s, service, port)
        code, out, err = s.cli(capsys, "describe", "etl", "-o", "json", "-v=6")
        assert code == 0, err
        where = "spark-history/spark-history-server (service proxy)"
        assert f"Spark History Server {where}: etl-1: 4 executor(s)" in err, err
        assert json.loads(out)["attempts"] == by_url["attempts"]
        code, out, err = s.cli(capsys, "describe", "etl", "-o", "json", "--history-server", "none")
        assert code == 0, err
        assert "history-server" not in json.loads(out)["sources"]
    finally:
        history.stop()


def test_s11_a_driver_on_a_lost_node_is_held_then_force_deleted(
    staged: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    s = staged("s11-apache-force-delete")
    _timeouts(s, "stream", driverStartTimeoutMillis=11000, forceTerminationGracePeriodMillis=5000)
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


def test_s11_fence_and_force_kill_free_the_held_attempt_at_once(
    staged: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """The operator waits forceTerminationGracePeriodMillis for a driver on a lost node; a
    fence, then a force-kill (deleting exactly that pod, by UID), lets it restart now."""
    s = staged("s11-apache-force-delete")
    _timeouts(s, "stream", driverStartTimeoutMillis=11000, forceTerminationGracePeriodMillis=600000)
    _driver_waiting_on_its_image(s, "stream")
    s.until(
        "the driver is bound", lambda: bool(s.pods(spark_role="driver")[0]["spec"].get("nodeName"))
    )
    s.do("partition", s.pods(spark_role="driver")[0]["spec"]["nodeName"])
    s.until(
        "the operator's attempt timed out", lambda: _state(s, "stream") == "DriverStartTimedOut"
    )

    code, out, err = s.cli(capsys, "force-kill", "stream/1", "--dry-run")
    assert code == 1 and "fence it first (kubectl spark fence stream/1)" in err
    code, out, err = s.cli(capsys, "fence", "stream/1", "--yes")
    assert code == 0, err
    code, out, err = s.cli(capsys, "force-kill", "stream/1", "--dry-run")
    assert code == 0, err
    said = out + err
    assert "holds the attempt in DriverStartTimedOut until this pod is gone" in said
    assert "restarts it (a new attempt, app id stream-1)" in said
    code, out, err = s.cli(capsys, "force-kill", "stream/1", "--yes")
    assert code == 0, err
    s.until("attempt 1's driver running", lambda: _running(s, "stream-1-driver"))
    status = (s.world.client.get(f"{APPS}/stream") or {})["status"]
    history = status["stateTransitionHistory"]
    timed_out = next(
        v for v in history.values() if v["currentStateSummary"] == "DriverStartTimedOut"
    )
    restarted = next(
        v for v in history.values() if v["currentStateSummary"] == "ScheduledToRestart"
    )
    waited = parse_time(restarted["lastTransitionTime"]) - parse_time(
        timed_out["lastTransitionTime"]
    )
    assert waited.total_seconds() < 120  # not the 600 s the operator would have waited
    app = s.app(capsys, "stream")
    assert "ForceDeletedOnLostNode" not in alerts(app)  # a person force-killed it, fenced
    assert app["attempts"][0]["reason"]["code"] in ("NodeLost", "DeletedByUser")


def test_resubmit_is_a_new_sparkapplication_once_released(
    staged: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Apache operator has no re-run switch: while it runs the application, resubmit refuses
    and names its restart policy; once released, a copy under a new name (new app ids), shown
    as the same application."""
    s = staged("s10-apache-infra-retry")
    s.do("submit", "etl")
    s.until("attempt 0's driver running", lambda: _running(s, "etl-0-driver"))
    code, out, err = s.cli(capsys, "resubmit", "etl", "--force", "--dry-run")
    assert code == 1 and "restarts it itself by its restartConfig (OnInfrastructureFailure" in err
    code, out, err = s.cli(capsys, "force-kill", "etl/1", "--force", "--dry-run")
    assert code == 0, err
    said = out + err  # warnings go to stderr
    assert "records Failed (driver removed)" in said and "releases the application" in said
    code, out, err = s.cli(capsys, "force-kill", "etl/1", "--force", "--yes")
    assert code == 0, err
    s.until("the operator releases it", lambda: _state(s, "etl") == "ResourceReleased")

    code, out, err = s.cli(capsys, "resubmit", "etl", "--dry-run", "-o", "json")
    assert code == 0, err
    (made,) = json.loads(out)["items"]  # what it would create, as kubectl create prints it
    assert (made["apiVersion"], made["kind"]) == ("spark.apache.org/v1", "SparkApplication")
    assert made["metadata"]["name"].startswith("etl-r")
    assert made["metadata"]["labels"]["kubectl-spark.io/resubmitted-from"] == "etl"
    assert made["spec"]["applicationTolerations"]["restartConfig"]["restartPolicy"] == (
        "OnInfrastructureFailure"
    )
    code, out, err = s.cli(capsys, "resubmit", "etl", "--yes")
    assert code == 0, err
    made = [a["metadata"]["name"] for a in s.world.client.list(APPS)]
    (copy_name,) = [n for n in made if n != "etl"]
    s.until("the copy's driver running", lambda: _running(s, f"{copy_name}-0-driver"))
    app = s.app(capsys, "etl")
    assert [a["driverPod"] for a in app["attempts"]] == ["etl-0-driver", f"{copy_name}-0-driver"]
    assert app["state"] == "Running" and app["operator"]["attemptId"] == 0
    first = app["attempts"][0]
    assert first["reason"]["code"] == "DeletedByUser"
