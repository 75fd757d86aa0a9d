"""A driver gone, its executors explained by the Spark History Server (S10 on both backends).

The Apache operator released SparkApplication "etl" after its second attempt failed: no pod is
left, and no history store recorded it. The simulator's History Server serves that attempt's
executor list (``/api/v1/applications/etl-1/allexecutors``), as a real one would from its event
log; ``describe --history-server URL`` reads it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubectl_spark.sim.historyserver import HistoryServer
from tests.functional.test_apache_on_both import (
    _driver_waiting_on_its_image,
    _running,
    _state,
    _timeouts,
)
from tests.stages import Stage

pytestmark = pytest.mark.slow


def test_a_gone_attempts_executors_come_from_the_history_server(
    staged: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    s: Stage = staged("s10-apache-infra-retry")
    _timeouts(s, "etl", driverStartTimeoutMillis=8000)
    _driver_waiting_on_its_image(s, "etl")
    s.until("attempt 1's driver running", lambda: _running(s, "etl-1-driver"))
    s.until("its two executors running", lambda: len(s.running(spark_role="executor")) == 2)
    victim = s.running(spark_role="executor")[0]["metadata"]["name"]
    s.do("oom_kill", {"app": "etl", "role": "executor"})
    s.until(
        "the OOM-killed executor's pod deleted by Spark",
        lambda: victim not in {p["metadata"]["name"] for p in s.pods(spark_role="executor")},
    )
    s.do("exit", "etl", code=1)
    s.until("the operator releases it", lambda: _state(s, "etl") == "ResourceReleased")
    s.until("no pod of it left", lambda: not s.pods(spark_app_name="etl"))

    code, out, err = s.cli(capsys, "describe", "etl", "-o", "json")
    assert code == 0, err
    assert json.loads(out)["attempts"][1]["executors"] == []  # nothing in the cluster or a store

    history = HistoryServer(s.world.spark).start()
    try:
        code, out, err = s.cli(
            capsys, "describe", "etl", "-o", "json", "--history-server", history.url
        )
    finally:
        history.stop()
    assert code == 0, err
    app = json.loads(out)
    assert "history-server" in app["sources"]
    second = app["attempts"][1]
    assert second["driverPod"] == "etl-1-driver"
    lost = [e for e in second["executors"] if e["reason"] is not None]
    assert [(e["source"], e["state"], e["reason"]["code"]) for e in lost] == [
        ("spark", "Gone", "OOMKilled")
    ], second["executors"]
    assert any("Spark History Server" in line for line in lost[0]["reason"]["evidence"])
