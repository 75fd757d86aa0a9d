"""Flags people bring from kubectl: ``events --types/--for`` and ``logs APP/exec-N`` (the
current attempt's executor)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.command_line import run
from tests.conftest import ScenarioCluster


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


def test_label_columns_and_show_labels_as_kubectl_get_prints_them(
    played: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each application's labels are its current driver pod's, in kubectl's words: a column per
    ``-L`` key headed by its last segment in capitals, blank when absent, then LABELS."""
    import subprocess

    c: ScenarioCluster = played("mixed")
    keys = "spark-version,app.kubernetes.io/name"
    code, out, err = run(capsys, c.kubeconfig, "ls", "-A", "-L", keys, "--show-labels")
    assert code == 0, err
    header, *lines = out.splitlines()
    assert header.split()[-3:] == ["SPARK-VERSION", "NAME", "LABELS"]
    code, doc, err = run(capsys, c.kubeconfig, "ls", "-A", "-o", "json")
    drivers = {
        (i["namespace"], i["name"]): i["attempts"][-1]["driverPod"]
        for i in json.loads(doc)["items"]
    }
    kubectl = subprocess.run(
        [
            "kubectl",
            "--kubeconfig",
            str(c.kubeconfig),
            "get",
            "pods",
            "-A",
            "-l",
            "spark-role=driver",
            "-L",
            keys,
            "--show-labels",
            "--no-headers",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    # kubectl's row: NAMESPACE NAME READY STATUS RESTARTS AGE SPARK-VERSION [NAME] LABELS
    theirs = {
        (r.split()[0], r.split()[1]): (r.split()[6], r.split()[-1]) for r in kubectl.splitlines()
    }
    assert lines
    for line in lines:
        cells = line.split()
        pod = drivers[(cells[0], cells[1])]
        version, labels = theirs[(cells[0], pod)]
        assert cells[-2:] == [version, labels], line  # NAME is blank in both
    code, _, err = run(capsys, c.kubeconfig, "ls", "-A", "-L", "a,,b")
    assert code == 1 and err.startswith("error: -L/--label-columns takes label keys"), err


def test_color_auto_always_never_and_no_color(
    played: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Colour changes no character of the table: stripped of its escapes, it is the plain one."""
    import re
    import sys

    c: ScenarioCluster = played("mixed")
    sgr = re.compile(r"\x1b\[[0-9;]*m")
    code, plain, err = run(capsys, c.kubeconfig, "ls", "-A", "--color", "never")
    assert code == 0 and not sgr.search(plain), err
    code, auto_piped, _ = run(capsys, c.kubeconfig, "ls", "-A")  # auto, into a pipe
    assert auto_piped == plain
    code, coloured, _ = run(capsys, c.kubeconfig, "--color=always", "ls", "-A")
    assert sgr.search(coloured) and sgr.sub("", coloured) == plain
    assert "\x1b[1;31mSplitBrain" in coloured  # the alerts a reader scans for
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)  # a terminal: auto colours it
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    code, on_terminal, _ = run(capsys, c.kubeconfig, "ls", "-A")
    assert sgr.search(on_terminal)
    monkeypatch.setenv("NO_COLOR", "1")
    code, no_color, _ = run(capsys, c.kubeconfig, "ls", "-A")
    assert not sgr.search(no_color)
    code, _, err = run(capsys, c.kubeconfig, "ls", "--color", "sometimes")
    assert code == 1 and "--color" in err and "use auto, always or never" in err


def test_the_demo_says_how_to_put_the_plugin_on_path_when_kubectl_would_not_find_it(
    tmp_path: Path,
) -> None:
    """``kubectl spark`` from another terminal failed after ``scripts/dev demo``: kubectl looks
    for ``kubectl-spark`` on PATH, and nothing said that .venv/bin must be on it."""
    import os
    import subprocess
    import sys

    bin_dir = Path(sys.executable).parent
    command = [
        str(bin_dir / "kubectl-spark"),
        "demo",
        "--no-tui",
        "--scenario",
        "s6-driver-restarts",
    ]
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path), "KUBECTL_SPARK_NO_HISTORY": "1"}
    off = subprocess.run(
        command,
        env={**env, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert off.returncode == 0, off.stderr
    assert f"export PATH={bin_dir}{os.pathsep}$PATH" in off.stdout
    on = subprocess.run(
        command,
        env={**env, "PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert on.returncode == 0 and "export PATH" not in on.stdout, on.stderr
