"""Reads under the emulator's fault layer: retried with backoff, Retry-After honoured, expired
continue tokens restart the list, watches resume and re-list — and a clear line when it is over."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from kubectl_spark.cli.main import main
from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer
from kubectl_spark.kube.client import Connection, connect
from kubectl_spark.kube.live import LiveCluster
from tests.waiting import wait_until


def spark_pod(name: str, role: str = "executor") -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "labels": {"spark-role": role, "spark-app-selector": "spark-a", "spark-app-name": "a"},
        },
        "spec": {"containers": [{"name": "c", "image": "spark"}]},
    }


def create(api: Any, *names: str) -> None:
    from kubernetes import client

    core = client.CoreV1Api(api)
    core.create_namespaced_pod("default", spark_pod("a-driver", "driver"))
    for name in names:
        core.create_namespaced_pod("default", spark_pod(name))


def ls(capsys: pytest.CaptureFixture[str], kubeconfig: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--kubeconfig", str(kubeconfig), "ls", "-o", "json", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_reads_are_retried_through_errors_drops_and_slow_answers(
    emulator: EmbeddedApiServer, kubeconfig: Path, api: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    create(api, "e1", "e2")
    emulator.set_faults(
        {"seed": 7, "error_rate": 0.3, "drop_rate": 0.1, "slow_rate": 0.05, "slow_seconds": 0.2}
    )
    for _ in range(5):
        code, out, err = ls(capsys, kubeconfig)
        assert code == 0, err
        assert len(json.loads(out)["items"][0]["attempts"][0]["executors"]) == 2
    counts = emulator.fault_counts()
    assert counts.get("error", 0) > 0 and counts.get("drop", 0) > 0, counts


def test_retry_after_is_honoured(
    emulator: EmbeddedApiServer, kubeconfig: Path, api: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    create(api, "e1")
    emulator.set_faults({"throttle_rate": 1.0, "retry_after": 1, "max_faults": 2})
    start = time.monotonic()
    code, _, err = ls(capsys, kubeconfig)
    assert code == 0, err
    assert time.monotonic() - start >= 2.0, "two 429s with Retry-After: 1 must wait 2 s"
    assert emulator.fault_counts() == {"throttle": 2}


def test_when_retries_run_out_one_line_says_so(
    emulator: EmbeddedApiServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    emulator.set_faults({"error_rate": 1.0})
    start = time.monotonic()
    code, out, err = ls(capsys, kubeconfig, "--request-timeout", "2s")
    assert code != 0 and out == ""
    assert time.monotonic() - start < 4, "--request-timeout bounds the retries"
    assert err.startswith("error: ") and "gave up after" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_an_expired_continue_token_restarts_the_list_never_mixing_snapshots(
    emulator: EmbeddedApiServer, kubeconfig: Path, api: Any
) -> None:
    names = [f"e{i}" for i in range(7)]
    create(api, *names)
    emulator.set_faults({"expire_continue_rate": 1.0, "max_faults": 2})
    with connect(Connection(kubeconfig=str(kubeconfig))) as client:
        items, _ = client.list("/api/v1/namespaces/default/pods", limit=2)
    got = [p["metadata"]["name"] for p in items]
    assert sorted(got) == sorted(["a-driver", *names]) and len(got) == len(set(got))
    assert emulator.fault_counts() == {"expired-continue": 2}


def test_watches_cut_and_answered_410_still_converge(
    emulator: EmbeddedApiServer, kubeconfig: Path, api: Any
) -> None:
    from kubernetes import client

    core = client.CoreV1Api(api)
    create(api, "e1")
    emulator.set_faults({"seed": 3, "watch_cut_seconds": 0.5, "watch_gone_rate": 0.5})
    conn = Connection(kubeconfig=str(kubeconfig))
    live = LiveCluster(lambda: connect(conn), "default", max_tombstones=0)
    live.start()
    try:
        assert live.ready.wait(20)
        for i in range(2, 12):
            core.create_namespaced_pod("default", spark_pod(f"e{i}"))
            if i % 3 == 0:
                core.delete_namespaced_pod(f"e{i - 1}", "default", grace_period_seconds=0)
            time.sleep(0.3)
        counts = emulator.fault_counts()
        emulator.set_faults("none")
        expected = sorted(p.metadata.name for p in core.list_namespaced_pod("default").items)
        deadline = time.monotonic() + 5
        while (seen := sorted(p.metadata.name for p in live.snapshot().pods)) != expected:
            # What differs, and what the view says of itself, so that a rare miss can be read.
            assert time.monotonic() < deadline, (
                f"the live view did not converge within 5 s: missing "
                f"{sorted(set(expected) - set(seen))}, extra {sorted(set(seen) - set(expected))}, "
                f"state {live.state!r} ({live.error!r}), faults {counts}"
            )
            time.sleep(0.05)
    finally:
        live.stop()
    assert counts.get("watch-cut", 0) > 0 and counts.get("watch-gone", 0) > 0, counts


def test_ls_watch_survives_cut_watches_and_410s(
    emulator: EmbeddedApiServer, kubeconfig: Path, api: Any
) -> None:
    import subprocess
    import sys
    import threading

    from kubernetes import client

    create(api, "e1")
    emulator.set_faults({"seed": 5, "watch_cut_seconds": 0.3, "watch_gone_rate": 0.5})
    binary = Path(sys.executable).parent / "kubectl-spark"
    proc = subprocess.Popen(
        [str(binary), "--kubeconfig", str(kubeconfig), "ls", "-w", "--no-headers"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout or []), daemon=True)
    reader.start()

    def faults_seen() -> int:
        counts = emulator.fault_counts()
        return counts.get("watch-cut", 0) + counts.get("watch-gone", 0)

    try:
        # Several cuts and 410s first: counted by the emulator, never assumed from a sleep (a
        # loaded machine starts the command late; only its watches are cut).
        wait_until(
            lambda: faults_seen() >= 2 or proc.poll() is not None,
            lambda: f"two cut watches or 410s (the emulator counted {emulator.fault_counts()})",
            seconds=60,
        )
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        core = client.CoreV1Api(api)
        core.create_namespaced_pod("default", spark_pod("e2"))
        deadline = time.monotonic() + 30
        # EXECUTORS (running/all) reaches /2: the new executor arrived through the watch.
        while not any(line.split()[4].endswith("/2") for line in lines if len(line.split()) > 4):
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, lines
            time.sleep(0.1)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert "Traceback" not in err


def _projection(doc: dict[str, Any]) -> list[Any]:
    """What the convergence test compares: applications, attempts, executors and reasons (not
    the texts that depend on the moment they were computed)."""
    return sorted(
        (
            app["namespace"],
            app["name"],
            app["state"],
            tuple(
                (
                    attempt["number"],
                    attempt["state"],
                    tuple(
                        (e["id"], e["state"], (e["reason"] or {}).get("code"))
                        for e in attempt["executors"]
                        if e["source"] == "cluster"
                    ),
                )
                for attempt in app["attempts"]
            ),
        )
        for app in doc["items"]
    )


def test_the_tuis_model_converges_after_a_simulated_hour_of_faults(
    cluster: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from kubectl_spark.core.incremental import LiveAnalysis

    c = cluster("mixed")
    c.server.set_faults(
        {"seed": 11, "error_rate": 0.05, "watch_cut_seconds": 2.0, "watch_gone_rate": 0.3}
    )
    conn = Connection(kubeconfig=str(c.kubeconfig))
    live = LiveCluster(lambda: connect(conn), None, max_tombstones=0)
    model = LiveAnalysis()
    live.start()
    try:
        assert live.ready.wait(30)
        duration = c.player.scenario.duration
        for t in range(60, int(duration) + 1, 60):  # the scenario, followed as the TUI does
            c.player.play_until(t)
            changes, snapshot = live.take_changes()
            model.update(snapshot, changes)
        while c.world.elapsed() < 3600:  # the rest of the hour, in coarser steps
            c.world.step(300, dt=60)
            changes, snapshot = live.take_changes()
            model.update(snapshot, changes)
        faults = c.server.fault_counts()
        c.server.set_faults("none")
        code = main(["--kubeconfig", str(c.kubeconfig), "ls", "-A", "-o", "json", "--no-history"])
        out, err = capsys.readouterr()
        assert code == 0, err
        fresh = _projection(json.loads(out))
        deadline = time.monotonic() + 5
        while True:
            changes, snapshot = live.take_changes()
            followed = _projection(model.update(snapshot, changes).to_json())
            if followed == fresh:
                break
            assert time.monotonic() < deadline, "the TUI's model did not converge within 5 s"
            time.sleep(0.1)
    finally:
        live.stop()
    assert sum(faults.values()) >= 20 and faults.get("error") and faults.get("watch-gone"), faults
    print(f"faults injected over the simulated hour: {faults}")
