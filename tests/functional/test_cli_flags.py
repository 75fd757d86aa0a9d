"""Flags people bring from kubectl: ``events --types/--for`` and ``logs APP/exec-N`` (the
current attempt's executor)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubectl_spark.cli.main import main
from tests.conftest import ScenarioCluster


def run(capsys: pytest.CaptureFixture[str], kubeconfig: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--kubeconfig", str(kubeconfig), *args])
    out, err = capsys.readouterr()
    return code, out, err


def rows(out: str) -> list[tuple[str, str, str]]:
    return [(e["type"], e["object"], e["reason"]) for e in json.loads(out)["items"]]


def test_events_types_and_for_filter_as_kubectl_events(
    cluster: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    c: ScenarioCluster = cluster("s6-driver-restarts")
    c.player.play()
    driver = c.world.find_pods("default", spark_role="driver")[0]
    app = driver["metadata"]["labels"]["spark-app-name"]
    code, out, err = run(capsys, c.kubeconfig, "events", app, "-o", "json")
    assert code == 0, err
    every = rows(out)
    assert {r[0] for r in every} == {"Normal", "Warning"}, every  # the scenario has both
    code, out, err = run(capsys, c.kubeconfig, "events", app, "--types", "warning", "-o", "json")
    assert code == 0 and rows(out) == [r for r in every if r[0] == "Warning"], err
    target = every[0][1]  # an OBJECT, KIND/NAME
    code, out, err = run(capsys, c.kubeconfig, "events", app, "--for", target, "-o", "json")
    assert code == 0 and rows(out) == [r for r in every if r[1] == target], err
    kind, name = target.split("/")
    plural = run(capsys, c.kubeconfig, "events", app, "--for", f"{kind}s/{name}", "-o", "json")
    assert plural[1] == out
    code, _, err = run(capsys, c.kubeconfig, "events", app, "--types", "Fatal")
    assert code == 1 and "valid --types are Normal, Warning" in err


def test_logs_of_an_executor_of_the_current_attempt(
    cluster: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    c: ScenarioCluster = cluster("s6-driver-restarts")
    c.player.play_until(20)
    executors = c.world.find_pods("default", spark_role="executor")
    assert executors
    pod = executors[-1]
    app = pod["metadata"]["labels"]["spark-app-name"]
    number = pod["metadata"]["labels"]["spark-exec-id"]
    c.server.append_log("default", pod["metadata"]["name"], "spark-kubernetes-executor", "hello\n")
    code, out, err = run(capsys, c.kubeconfig, "logs", f"{app}/exec-{number}")
    assert code == 0, err
    assert out == run(capsys, c.kubeconfig, "logs", f"{app}/latest/exec-{number}")[1]
    assert "hello" in out
