"""Helpers for tests of `kubectl spark record`: the real process, its store, a small app.

A plain module, imported when the test modules are collected: importing a test module from inside
a running test made pytest rewrite (compile) it mid-test, and CPython 3.11 can fail that compile
when the collector runs a finalizer during it ("AST constructor recursion depth mismatch").
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

BIN = Path(sys.executable).parent / "kubectl-spark"


def start_record(c: Any, db: Path) -> subprocess.Popen[bytes]:
    """``kubectl spark record -A`` as a process, on ``c.kubeconfig``, once it says it records."""
    proc = subprocess.Popen(
        [str(BIN), "record", "-A", "--kubeconfig", str(c.kubeconfig), "--history-db", str(db)],
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONFAULTHANDLER": "1"},  # SIGABRT prints every thread's stack
    )
    assert proc.stderr is not None
    line = proc.stderr.readline().decode()
    assert line.startswith("recording"), line
    return proc


def stop_record(proc: subprocess.Popen[bytes]) -> str:
    """SIGTERM, as systemd stops it; its stderr once it has ended cleanly."""
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        # Once seen under load, never reproduced: say where each thread was stuck.
        proc.send_signal(signal.SIGABRT)
        _, err = proc.communicate(timeout=10)
        pytest.fail(f"record did not stop within 20 s of SIGTERM:\n{err.decode(errors='replace')}")
    assert proc.returncode == 0, err
    return err.decode()


def record_while_playing(c: Any, db: Path, every: int, until: int | None = None) -> None:
    """``kubectl spark record`` runs (a real process) while the scenario plays (to ``until``)."""
    c.player.play_until(2)
    proc = start_record(c, db)
    try:
        for t in range(every, (until or int(c.player.scenario.duration)) + 1, every):
            c.player.play_until(t)
            time.sleep(0.05)
        time.sleep(1.0)
    finally:
        stop_record(proc)


def logs_kept(db: Path, of: str = "") -> int:
    """How many containers' last lines the store holds (of the pod ``of``'s uid, if given)."""
    if not db.exists():
        return 0
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return int(
            conn.execute(
                "SELECT COUNT(*) FROM objects WHERE kind='logs' AND uid LIKE ?", (f"{of}%",)
            ).fetchone()[0]
        )


def pod_deleted(db: Path, uid: str) -> bool:
    """Whether the store marks the object ``uid`` deleted."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        row = conn.execute("SELECT deleted_at FROM objects WHERE uid=?", (uid,)).fetchone()
    return row is not None and row[0] is not None


def driver_and_executor(core: Any) -> Any:
    """Application vm: a driver and its executor 1, as spark-submit labels them."""
    labels = {"spark-app-selector": "spark-vm", "spark-app-name": "vm"}
    driver = core.create_namespaced_pod(
        "default",
        {
            "metadata": {"name": "vm-driver", "labels": {**labels, "spark-role": "driver"}},
            # On a node: a pod no node took has no kubelet, and its log is empty (204).
            "spec": {
                "nodeName": "node-a",
                "containers": [{"name": "spark-kubernetes-driver", "image": "spark"}],
            },
        },
    )
    owner = {"apiVersion": "v1", "kind": "Pod", "name": "vm-driver", "uid": driver.metadata.uid}
    return core.create_namespaced_pod(
        "default",
        {
            "metadata": {
                "name": "vm-exec-1",
                "labels": {**labels, "spark-role": "executor", "spark-exec-id": "1"},
                "ownerReferences": [{**owner, "controller": True}],
            },
            "spec": {
                "nodeName": "node-a",
                "containers": [{"name": "spark-kubernetes-executor", "image": "spark"}],
            },
        },
    )


def exit_52(core: Any, name: str, container: str = "spark-kubernetes-executor") -> None:
    """The pod's JVM exits 52 (Spark's OutOfMemoryError exit), as the kubelet reports it."""
    ended = {"exitCode": 52, "reason": "Error", "finishedAt": "2026-03-01T02:00:00Z"}
    status = {
        "phase": "Failed",
        "containerStatuses": [
            {
                "name": container,
                "restartCount": 0,
                "state": {"terminated": ended},
            }
        ],
    }
    core.patch_namespaced_pod_status(name, "default", {"status": status}, _preload_content=False)


def pod_body(db: Path, uid: str) -> str:
    """The JSON the store keeps of the object ``uid`` ("" if none)."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        row = conn.execute("SELECT body FROM objects WHERE uid=?", (uid,)).fetchone()
    return bytes(row[0]).decode() if row else ""
