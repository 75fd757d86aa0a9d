"""The plugin reads an in-cluster recorder through the API server, on both backends.

As an aggregated API (its APIService registered as the manifests render it): the API server
passes the person on with its front-proxy certificate and the recorder asks it what they may
read (the refusals are tested in test_recorder_auth.py).

The recorder is a process (``record -A --port P``) standing for the rendered Deployment's pod:
a host network pod carrying the manifests' labels and port runs on a node whose InternalIP is
this machine's own address (not loopback: kube-apiserver refuses one in an Endpoints), so the Service's endpoint (written by kube-controller-manager's
endpoint controller on the real control plane, by the simulator's stand-in on the emulator) is
the process's address, and kube-apiserver's aggregation layer (or the emulator's) reaches it. S9's
losses leave no pod behind; the person's own store is empty: ``describe``, ``history``,
``logs`` and the TUI's source explain them from the recorder alone, and ``-v=6`` says so.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from kubectl_spark.core.recorder_manifests import (
    API_PATH,
    NAME,
    RecorderOptions,
    manifests,
)
from tests.helpers import sent
from tests.incluster import expose, free_port, register, start_recorder, token_of
from tests.recorder_access import read_recorder
from tests.stages import Stage

pytestmark = pytest.mark.slow
NS = "kubectl-spark"


def _kept_by_recorder(s: Stage, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code, out, err = s.cli(capsys, "describe", "vanishing", "-n", "default", "-o", "json")
    assert code == 0, err
    app: dict[str, Any] = json.loads(out)
    return app


def test_describe_history_logs_and_the_tui_read_the_recorder_through_the_service_proxy(
    staged: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s: Stage = staged("s9-deleted-executors")
    port = free_port()
    (service,) = [
        m for m in sent(manifests(RecorderOptions(NS, "unused"))) if m["kind"] == "Service"
    ]
    expose(s, service, port)
    recorder = start_recorder(s.kubeconfig, port, tmp_path / "recorder.db")
    try:
        register(s, NS, port)
        _play_and_read(s, capsys, port, token_of(s.kubeconfig))
    finally:
        recorder.terminate()
        recorder.wait(20)


def _kept_names(port: int, token: str) -> set[str]:
    """What the recorder kept, asked of its port directly (the test's view, not the plugin's)."""
    try:
        status, answer = read_recorder(port, f"{API_PATH}/keptpods", token)
    except OSError:
        return set()
    assert status == 200, answer
    return {i["object"]["metadata"]["name"] for i in answer["items"]}


def _kept_log(port: int, uid: str, token: str) -> bool:
    try:
        status, answer = read_recorder(port, f"{API_PATH}/namespaces/default/keptlogs/{uid}", token)
    except OSError:
        return False
    return status == 200 and bool(answer.get("text"))


def _play_and_read(s: Stage, capsys: pytest.CaptureFixture[str], port: int, token: str) -> None:
    s.do("submit", "vanishing")
    s.until(
        "four executors running",
        lambda: len(s.running(spark_role="executor", spark_app_name="vanishing")) == 4,
    )

    # The emulator's clock runs faster than a process starts: the losses wait for the recorder.
    running = {p["metadata"]["name"] for p in s.running(spark_app_name="vanishing")}
    deadline = time.monotonic() + 30
    while not running <= _kept_names(port, token):
        if time.monotonic() > deadline:
            pytest.fail(f"the recorder never kept the running pods: {_kept_names(port, token)}")
        time.sleep(0.3)
    (first,) = [
        p for p in s.pods(spark_app_name="vanishing") if p["metadata"]["name"].endswith("-exec-1")
    ]
    s.do("oom_kill", {"app": "vanishing", "exec": 1})
    # Spark deletes the pod a processing round (a second) after its end: the recorder reads
    # the container's last lines in between. The emulator's clock waits for it here.
    s.until(
        "executor 1's end", lambda: not s.running(spark_app_name="vanishing", spark_exec_id="1")
    )
    deadline = time.monotonic() + 30
    while not _kept_log(port, first["metadata"]["uid"], token):
        if time.monotonic() > deadline:
            pytest.fail("the recorder never kept executor 1's last lines")
        time.sleep(0.3)
    s.until("executor 1's pod deleted by Spark", lambda: s.executor_gone("vanishing", "1"))
    s.do("evict", {"app": "vanishing", "exec": 2})
    s.until("executor 2's pod deleted by Spark", lambda: s.executor_gone("vanishing", "2"))

    def reasons() -> dict[str, str]:
        app = _kept_by_recorder(s, capsys)
        return {
            e["id"]: (e.get("reason") or {}).get("code", "")
            for a in app["attempts"]
            for e in a["executors"]
            if e.get("source") == "recorder"
        }

    deadline = time.monotonic() + 30
    while reasons() != {"1": "OOMKilled", "2": "Evicted"}:
        if time.monotonic() > deadline:
            pytest.fail(f"the recorder's states never explained both losses: {reasons()}")
        s.settle(1)
        time.sleep(0.5)
    app = _kept_by_recorder(s, capsys)
    assert "recorder" in app["sources"] and "history" not in app["sources"], app["sources"]

    # history: the same losses, and -v=6 says where they came from
    code, out, err = s.cli(capsys, "-v=6", "history", "vanishing", "-n", "default", "-o", "json")
    assert code == 0, err
    lost = {h["executor"] for h in json.loads(out)["items"] if h["kind"] == "ExecutorLost"}
    assert {"1", "2"} <= lost
    assert f"{API_PATH}/namespaces/default/keptpods 200 OK" in err, err
    assert f"recorder {NS}/{NAME} (aggregated API): " in err, err

    # logs of a gone executor: the lines the recorder kept
    code, out, err = s.cli(capsys, "logs", "vanishing/exec-1", "-n", "default")
    assert code == 0, err
    assert f"kept by the recorder {NS}/{NAME}" in err, err
    assert out.strip(), "no kept lines printed"

    # --recorder none: nothing asked, the losses unexplained by any keeper
    code, out, err = s.cli(
        capsys, "--recorder", "none", "describe", "vanishing", "-n", "default", "-o", "json"
    )
    assert code == 0, err
    assert "recorder" not in json.loads(out)["sources"]

    # the TUI's source starts from the same
    from kubectl_spark.cli.common import connection
    from kubectl_spark.cli.globals import Globals, use
    from tui.sources import LiveSource

    use(Globals(kubeconfig=str(s.kubeconfig), namespace="default"))
    source = LiveSource(connection(), cluster_recorder="auto")
    source.start()
    try:
        assert str(source.recorder_ref) == f"{NS}/{NAME}"
        kept = source.kept_log("default", _uid_of(app, "1"))
        assert kept is not None and kept.text
        assert kept.keeper == f"the recorder {NS}/{NAME}"  # the log view's title says so
        changes, snapshot = source.take_changes()
        del changes
        sources = {
            p.metadata.labels.get("spark-exec-id"): p.source
            for p in snapshot.pods
            if p.metadata.labels.get("spark-app-name") == "vanishing"
        }
        assert sources.get("1") == sources.get("2") == "recorder", sources
    finally:
        source.stop()
        use(Globals())

    # the real kubectl reads the same API through the same API server
    from tests.conftest import kubectl_binary

    binary = kubectl_binary()
    if binary is not None:
        got = subprocess.run(
            [binary, "--kubeconfig", str(s.kubeconfig), "get", "--raw",
             f"{API_PATH}/namespaces/default/keptpods?limit=1"],
            capture_output=True, text=True, check=False, timeout=30,
        )  # fmt: skip
        assert got.returncode == 0, got.stderr
        assert json.loads(got.stdout)["kind"] == "KeptList"


def _uid_of(app: dict[str, Any], exec_id: str) -> str:
    return next(
        str(e["uid"]) for a in app["attempts"] for e in a["executors"] if e["id"] == exec_id
    )
