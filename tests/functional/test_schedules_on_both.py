"""A Kubeflow ScheduledSparkApplication's runs, linked to their schedule, on both backends.

Each run is a SparkApplication named ``<schedule>-<time>`` and labelled
``sparkoperator.k8s.io/scheduled-app-name`` (the operator's createSparkApplication): ``ls -o
wide`` and ``describe`` name the schedule of a run; ``describe <schedule>`` lists its runs.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubectl_spark.sim import scenario as scenarios
from tests.stages import Stage

pytestmark = pytest.mark.slow
RUNS = ("nightly-1796200000", "nightly-1796286400")
SPARKAPPS = "/apis/sparkoperator.k8s.io/v1beta2/namespaces/default/sparkapplications"


@pytest.fixture
def stage(staged: Any) -> Stage:
    doc: dict[str, Any] = {
        "name": "schedule-runs",
        "title": "two runs of a schedule and an application of its own",
        "description": "driven by the test",
        "nodes": [{"name": "node-a"}, {"name": "node-b"}],
        "apps": [{"name": name, "launch": "operator", "executors": 1} for name in (*RUNS, "adhoc")],
        "steps": [],
    }
    return staged(scenarios.parse(doc, doc["name"]))


def test_runs_name_their_schedule_and_the_schedule_lists_its_runs(
    stage: Stage, capsys: pytest.CaptureFixture[str]
) -> None:
    s = stage
    for name in (*RUNS, "adhoc"):
        s.do("submit", name)
    for name in RUNS:  # as the operator labels a run it starts
        labels = {"sparkoperator.k8s.io/scheduled-app-name": "nightly"}
        s.world.client.patch(f"{SPARKAPPS}/{name}", {"metadata": {"labels": labels}})
    s.until("three drivers running", lambda: len(s.running(spark_role="driver")) == 3)

    code, out, err = s.cli(capsys, "ls", "-o", "wide")
    assert code == 0, err
    header, *rows = out.splitlines()
    assert header.split()[-1] == "SCHEDULE"
    schedule_of = {row.split()[0]: row.split()[-1] for row in rows}
    assert schedule_of == {RUNS[0]: "nightly", RUNS[1]: "nightly", "adhoc": "-"}

    code, out, err = s.cli(capsys, "ls", "-o", "json")
    assert {i["name"]: i["schedule"] for i in json.loads(out)["items"]} == {
        RUNS[0]: "nightly",
        RUNS[1]: "nightly",
        "adhoc": None,
    }

    code, out, err = s.cli(capsys, "describe", RUNS[1])
    assert code == 0, err
    assert "Schedule:     nightly (a run of this ScheduledSparkApplication)" in out

    code, out, err = s.cli(capsys, "describe", "nightly")
    assert code == 0, err
    assert out.startswith("Schedule:     nightly\n")
    table = out.split("\n\n", 1)[1].splitlines()
    assert table[0].split() == ["RUN", "STATE", "ATTEMPT", "LOST", "AGE"]
    assert [line.split()[0] for line in table[1:]] == list(RUNS)  # oldest first
    code, out, err = s.cli(capsys, "describe", "nightly", "-o", "json")
    doc = json.loads(out)
    assert doc["kind"] == "ScheduledSparkApplication" and doc["name"] == "nightly"
    assert [r["name"] for r in doc["runs"]] == list(RUNS)

    code, _, err = s.cli(capsys, "describe", "weekly")
    assert code == 1 and 'application "weekly" not found' in err
