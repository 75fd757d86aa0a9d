"""Reading an in-cluster recorder: the flag and the merge of two keepers.

What it serves over HTTP: tests/functional/test_recorder_serving.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kubectl_spark.app.view import Kept, newest_kept
from kubectl_spark.cli.globals import check_history_server, check_recorder
from kubectl_spark.cli.main import main
from kubectl_spark.errors import UsageError
from tests.recorder_access import recorded_pod


@pytest.mark.parametrize("value", ["auto", "none", "kubectl-spark/kubectl-spark-recorder"])
def test_the_recorder_flag_takes_auto_none_or_a_service(value: str) -> None:
    check_recorder(value, "--recorder")


@pytest.mark.parametrize("value", ["", "x", "Bad/x", "a/b/c", "a/", "/b", "a/b_c"])
def test_anything_else_is_one_clear_error(value: str) -> None:
    with pytest.raises(UsageError, match="use auto, none, or NAMESPACE/NAME"):
        check_recorder(value, "--recorder")


@pytest.mark.parametrize(
    "value", ["auto", "none", "spark/spark-history-server", "http://shs:18080", "https://x"]
)
def test_the_history_server_is_a_url_auto_none_or_a_service(value: str) -> None:
    check_history_server(value, "--history-server")


@pytest.mark.parametrize("value", ["", "shs:18080", "ftp://x", "http://", "Bad/x", "a/b/c"])
def test_a_history_server_that_is_none_of_them_is_one_clear_error(value: str) -> None:
    with pytest.raises(UsageError, match="use an http"):
        check_history_server(value, "--history-server")


def test_a_bad_flag_or_variable_fails_before_any_request(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # No kubeconfig at all: nothing is read before the value is refused.
    monkeypatch.setenv("KUBECONFIG", "/nonexistent")
    assert main(["--recorder", "Bad/x", "ls"]) != 0
    err = capsys.readouterr().err
    assert err.startswith('error: invalid --recorder "Bad/x"') and err.count("\n") == 1, err
    monkeypatch.setenv("KUBECTL_SPARK_RECORDER", "nope")
    monkeypatch.setenv("KUBECONFIG", str(Path(__file__)))  # unreadable as YAML, never reached
    assert main(["ls", "--server", "https://127.0.0.1:1"]) != 0
    err = capsys.readouterr().err
    assert 'invalid $KUBECTL_SPARK_RECORDER "nope"' in err and err.count("\n") == 1, err


def test_the_same_pod_is_taken_from_whichever_keeper_saw_it_last() -> None:
    local: Kept = (
        [
            (recorded_pod("a", "10"), "t1"),
            (recorded_pod("b", "30"), "t2"),
            (recorded_pod("c", "5"), "t3"),
        ],
        [],
    )
    remote = ([(recorded_pod("a", "20", "Failed"), "t4"), (recorded_pod("b", "30"), "t5"), (recorded_pod("d", "1"), "t6")],
              [{"metadata": {"uid": "e1"}}])  # fmt: skip
    pods, events = newest_kept(local, remote)
    chosen = {p["metadata"]["uid"]: (p["metadata"]["resourceVersion"], seen, source)
              for p, seen, source in pods}  # fmt: skip
    assert chosen == {
        "a": ("20", "t4", "recorder"),  # newer there
        "b": ("30", "t2", "history"),  # a tie: the local store
        "c": ("5", "t3", "history"),
        "d": ("1", "t6", "recorder"),
    }
    assert [e["metadata"]["uid"] for e in events] == ["e1"]
