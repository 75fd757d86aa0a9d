"""The smaller points of the adversarial run, each kept: invisible characters escaped, template
output written as the data is into a pipe, log flags kubectl refuses refused, names that are not
names refused, one exit code for bad input, a full disk said as such."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from kubectl_spark.app.text import escape
from kubectl_spark.cli import render
from kubectl_spark.errors import LocalStoreError
from kubectl_spark.localstore import LocalStore, Scope
from tests.command_line import run
from tests.conftest import ScenarioCluster

INVISIBLE = "zero\u200bwidth\u200djoin\u2060word\ufeffbom\u2028sep"


def test_invisible_characters_are_shown_as_escapes() -> None:
    shown = escape(INVISIBLE)
    assert shown == "zero\\u200bwidth\\u200djoin\\u2060word\\ufeffbom\\u2028sep"


def test_invisible_characters_never_reach_the_terminal_from_describe_events_and_logs(
    cluster: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    c: ScenarioCluster = cluster("s6-driver-restarts")
    c.player.play_until(20)
    driver = c.world.find_pods("default", spark_role="driver")[0]
    name = driver["metadata"]["name"]
    app = driver["metadata"]["labels"]["spark-app-name"]
    c.server.append_log("default", name, "spark-kubernetes-driver", INVISIBLE + "\n")
    c.world.client.create(
        "/api/v1/namespaces/default/events",
        {
            "metadata": {"name": "odd", "namespace": "default"},
            "involvedObject": {
                "kind": "Pod",
                "name": name,
                "namespace": "default",
                "uid": driver["metadata"]["uid"],
            },
            "reason": "Odd",
            "message": INVISIBLE,
            "type": "Warning",
            "count": 1,
        },
    )
    invisible = re.compile("[\u200b-\u200f\u2028\u2029\u2060-\u2064\ufeff]")
    for args in (["describe", app], ["events", app], ["logs", app], ["history", app]):
        code, out, err = run(capsys, c.kubeconfig, *args)
        assert code == 0, (args, err)
        assert invisible.search(out + err) is None, (args, out)
    assert "\\u200b" in run(capsys, c.kubeconfig, "logs", app)[1]


def test_template_output_is_the_data_in_a_pipe_and_escaped_on_a_terminal() -> None:
    doc = {"items": [{"name": "\x1b[31mred"}]}
    assert render.document(doc, "jsonpath={.items[0].name}", terminal=False) == "\x1b[31mred"
    assert render.document(doc, "jsonpath={.items[0].name}", terminal=True) == "\\x1b[31mred"
    piped = render.document(doc, "custom-columns=NAME:.name", terminal=False)
    assert piped.splitlines()[1] == "\x1b[31mred"
    shown = render.document(doc, "custom-columns=NAME:.name", terminal=True)
    assert shown.splitlines()[1] == "\\x1b[31mred"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["logs", "x", "--tail", "-5"], "--tail must be greater than or equal to -1"),
        (["logs", "x", "--tail", "1" * 23], 'for "--tail" flag: value out of range'),
        (["logs", "x", "--since", "99999999999h"], "longer than 2562047h"),
        (["logs", "x", "--tail", "many"], "Invalid value for '--tail'"),
        (["-n", "a" * 100_000, "ls"], "of at most 63 characters"),
        (["ls", "-o", "nonsense"], ""),
        (["ls", "--no-such-flag"], ""),
    ],
)
def test_bad_input_is_one_line_and_exit_code_1(
    kubeconfig: Path, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    start = time.monotonic()
    code, out, err = run(capsys, kubeconfig, *args)
    assert code == 1, (code, err)  # kubectl's code for every bad input; never click's 2
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    assert said in err and len(err) < 400, err
    assert out == "" and time.monotonic() - start < 5


def test_a_full_disk_is_said_as_such(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "history.db")
    assert store.db is not None
    pages = store.db.execute("PRAGMA page_count").fetchone()[0]
    store.db.execute(f"PRAGMA max_page_count = {pages + 2}")  # a disk with two pages left
    pods = [
        (
            {
                "metadata": {
                    "uid": f"u{i}",
                    "name": f"p{i}",
                    "namespace": "default",
                    "resourceVersion": "1",
                },
                "data": "x" * 4000,
            },
            False,
        )
        for i in range(50)
    ]
    with pytest.raises(LocalStoreError) as caught:
        store.record(Scope("https://c", "ctx"), "pods", pods)
    assert "the disk is full" in caught.value.message
    assert "cannot rollback" not in caught.value.message
    store.close()


def test_the_emulator_answers_an_enormous_since_with_the_whole_log_not_a_500() -> None:
    from datetime import UTC, datetime

    from kubectl_spark.knowledge.podlogs import LogQuery

    now = datetime(2026, 12, 2, tzinfo=UTC)
    wanted = LogQuery.parse({"sinceSeconds": str(99999999999 * 3600)}, now, bool)
    assert wanted.since is None
    with pytest.raises(ValueError, match="greater than 0"):
        LogQuery.parse({"sinceSeconds": "0"}, now, bool)
