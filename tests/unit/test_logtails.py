"""Which stopped containers' last lines ``record`` keeps, and which kept lines ``logs`` shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubectl_spark.core.pod import Pod, Terminated
from kubectl_spark.kube.logtails import KIND, _wanted, kept_tail
from kubectl_spark.localstore import LocalStore, Scope

SCOPE = Scope("https://127.0.0.1:6443", "ctx")


def executor(state: dict[str, Any], last: dict[str, Any] | None = None, restarts: int = 0) -> Pod:
    status = {"name": "spark-kubernetes-executor", "restartCount": restarts, "state": state}
    if last is not None:
        status["lastState"] = {"terminated": last}
    return Pod.of(
        {"metadata": {"name": "e", "uid": "u"}, "status": {"containerStatuses": [status]}}
    )


def test_only_a_spark_container_that_stopped_with_an_error_is_kept() -> None:
    died = Terminated(exit_code=52)
    assert _wanted(executor({"terminated": {"exitCode": 52}})) == (
        "spark-kubernetes-executor",
        0,
        False,
        died,
    )
    assert _wanted(executor({"terminated": {"exitCode": 0}})) is None  # it finished its work
    assert _wanted(executor({"running": {}})) is None
    # Restarted in place after an OOM kill: the previous run's log says why.
    oom = {"exitCode": 137, "reason": "OOMKilled"}
    assert _wanted(executor({"running": {}}, oom, 1)) == (
        "spark-kubernetes-executor",
        1,
        True,
        Terminated(exit_code=137, reason="OOMKilled"),
    )
    assert _wanted(Pod.of({"metadata": {"uid": "u"}, "status": {}})) is None  # never ran: no log


def doc(restarts: int, previous: bool, text: str, uid: str = "u") -> tuple[Any, bool]:
    """Kept lines as the keeper writes them: of the current run at ``restarts``, or the one before."""
    key = f"{uid}/spark-kubernetes-executor/{restarts}/{previous}"
    body = {
        "metadata": {"uid": key, "namespace": "ns", "resourceVersion": "1"},
        "pod": {"name": "e", "uid": uid},
        "restartCount": restarts,
        "previous": previous,
        "text": text,
    }
    return body, False


def test_the_latest_run_is_shown(tmp_path: Path) -> None:
    with LocalStore(tmp_path / "h.sqlite") as store:
        store.record(
            SCOPE,
            KIND,
            [doc(0, False, "first"), doc(1, True, "first, again"), doc(2, True, "second")],
        )
        store.record(SCOPE, KIND, [doc(5, False, "another pod", uid="u2")])
        found = kept_tail(store, SCOPE, "ns", "u")
        assert found is not None and found["text"] == "second"
        store.record(SCOPE, KIND, [doc(2, False, "third")])  # the run after: its current log
        found = kept_tail(store, SCOPE, "ns", "u")
        assert found is not None and found["text"] == "third"
        assert kept_tail(store, SCOPE, "other", "u") is None
        assert kept_tail(store, SCOPE, "ns", "u-") is None  # a uid is not a prefix of another's


def test_logs_p_of_a_gone_pod_shows_the_run_before_the_last(tmp_path: Path) -> None:
    """``logs -p`` asks for the run before the last, as kubectl's does of a live container; of a
    gone pod it showed the last kept run whichever was asked for."""
    with LocalStore(tmp_path / "h.sqlite") as store:
        store.record(SCOPE, KIND, [doc(0, False, "run 1")])
        assert kept_tail(store, SCOPE, "ns", "u", previous=True) is None  # one run: none before
        store.record(SCOPE, KIND, [doc(1, True, "run 1, again"), doc(2, True, "run 2")])
        store.record(SCOPE, KIND, [doc(2, False, "run 3")])
        last = kept_tail(store, SCOPE, "ns", "u")
        before = kept_tail(store, SCOPE, "ns", "u", previous=True)
        assert last is not None and last["text"] == "run 3"
        assert before is not None and before["text"] == "run 2"
