"""kubectl's -v=6: every request the plugin makes is printed on stderr as kubectl prints it (method,
URL, status, time), the output itself unchanged, no credential shown; failures are traced too."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.command_line import run

LINE = re.compile(
    r"I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ client\.py\] (?P<method>[A-Z]+) (?P<url>\S+) "
    r"(?P<status>\d{3} [A-Za-z ]+|) in \d+ milliseconds"
)


def test_v6_traces_each_request_and_changes_nothing_else(
    cluster: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    c = cluster("s1-node-shutdown")
    c.player.play()
    base = ["--kubeconfig", str(c.kubeconfig), "ls", "-A"]
    code, quiet_out, quiet_err = run(capsys, None, *base)
    assert code == 0 and quiet_err == ""
    code, out, err = run(capsys, None, *base, "-v=6")
    assert code == 0 and out == quiet_out
    lines = err.strip().splitlines()
    assert f"config.py] Config loaded from file:  {c.kubeconfig}" in lines[0]
    # Besides the requests, where the rest of the answer came from: the history store, and
    # no in-cluster recorder (none deployed).
    told = ("view.py] ", "incluster.py] ")
    sources = [line for line in lines[1:] if any(t in line for t in told)]
    assert [line.split("] ", 1)[1].split(":")[0] for line in sources] == [
        f"history store {Path(os.environ['XDG_STATE_HOME']) / 'kubectl-spark' / 'history.sqlite'}",
        (
            "no recorder Service found (labels app.kubernetes.io/name=kubectl-spark-recorder,"
            "app.kubernetes.io/component=recorder)"
        ),
    ], sources  # no History Server looked for: every driver of S1 runs
    traced = [LINE.fullmatch(line) for line in lines[1:] if not any(t in line for t in told)]
    assert all(traced), lines
    urls = {m["url"] for m in traced if m}
    assert f"{c.server.url}/api/v1/pods?limit=500&labelSelector=spark-role" in urls
    assert {m["status"] for m in traced if m} == {"200 OK"}
    assert c.server.token not in err
    _, _, below = run(capsys, None, *base, "-v", "5")
    assert below == ""
    # Writes show their own status: an Event created is 201 Created.
    kill = [
        "--kubeconfig",
        str(c.kubeconfig),
        "force-kill",
        "networkwordcount/2",
        "--yes",
        "--force",
    ]
    code, _, err = run(capsys, None, *kill, "-v6")
    assert code == 0, err
    written = [m for line in err.splitlines() if (m := LINE.fullmatch(line))]
    assert {(m["method"], m["status"]) for m in written} >= {
        ("POST", "201 Created"),
        ("DELETE", "200 OK"),
        ("PATCH", "200 OK"),
    }


def test_v6_traces_refusals_and_unanswered_requests(
    cluster: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    c = cluster("s1-node-shutdown")
    c.server.set_policy({"rules": [{"effect": "deny", "verbs": ["list"], "resources": ["pods"]}]})
    code, _, err = run(capsys, None, "--kubeconfig", str(c.kubeconfig), "ls", "-v6")
    assert code != 0
    assert any(
        (m := LINE.fullmatch(line)) and m["status"] == "403 Forbidden" for line in err.splitlines()
    ), err
    assert err.strip().splitlines()[-1].startswith("error: ")
    code, _, err = run(
        capsys, None, "-s", "https://127.0.0.1:1", "--insecure-skip-tls-verify", "ls", "--v=6"
    )
    assert code != 0
    unanswered = [m for line in err.splitlines() if (m := LINE.fullmatch(line))]
    assert unanswered and unanswered[0]["status"] == "", err
    assert unanswered[0]["url"].startswith("https://127.0.0.1:1/api/v1/namespaces/default")
