"""The history store: two writers at once lose nothing; a file that is not ours is never touched."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from kubectl_spark.cli.main import main
from kubectl_spark.errors import LocalStoreError
from kubectl_spark.localstore import SCHEMA_VERSION, LocalStore, Scope

SCOPE = Scope("https://127.0.0.1:6443", "ctx")

WRITER = """
import sys
from kubectl_spark.localstore import LocalStore, Scope
path, who, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
with LocalStore(__import__("pathlib").Path(path)) as store:
    for i in range(count):
        pod = {"metadata": {"uid": f"{who}-{i}", "name": f"{who}-{i}", "namespace": "ns",
                            "resourceVersion": str(i + 1)}}
        store.record(Scope("https://127.0.0.1:6443", "ctx"), "pods", [(pod, False)])
"""


def test_two_writers_at_once_lose_nothing(tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite"
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(db), who, "300"]) for who in "ab"
    ]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    with LocalStore(db) as store:
        uids = {obj["metadata"]["uid"] for obj, _, _ in store.load(SCOPE, "pods", None)}
    assert uids == {f"{w}-{i}" for w in "ab" for i in range(300)}


def test_an_older_resource_version_never_replaces_a_newer_one(tmp_path: Path) -> None:
    with LocalStore(tmp_path / "h.sqlite") as store:
        new = {"metadata": {"uid": "u", "namespace": "ns", "resourceVersion": "9"}, "v": "new"}
        old = {"metadata": {"uid": "u", "namespace": "ns", "resourceVersion": "3"}, "v": "old"}
        store.record(SCOPE, "pods", [(new, True)])
        store.record(SCOPE, "pods", [(old, False)])
        [(obj, _, deleted)] = store.load(SCOPE, "pods", "ns")
        assert obj["v"] == "new" and deleted is not None
        assert store.load(Scope("https://other:6443", "ctx"), "pods", None) == []


def test_a_corrupt_file_is_reported_and_left_alone(tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite"
    db.write_bytes(b"this is not a database, it is somebody's notes" * 100)
    before = db.read_bytes()
    with pytest.raises(LocalStoreError, match="cannot be used"):
        LocalStore(db)
    assert db.read_bytes() == before


def test_a_newer_schema_is_reported_and_left_alone(tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite"
    LocalStore(db).close()
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 1),)
        )
    before = db.read_bytes()
    with pytest.raises(LocalStoreError, match="newer kubectl spark"):
        LocalStore(db)
    assert db.read_bytes() == before


def test_someone_elses_sqlite_file_is_not_ours(tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
    with pytest.raises(LocalStoreError, match="not a kubectl spark history database"):
        LocalStore(db)


def test_commands_say_it_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kubeconfig: Path
) -> None:
    db = tmp_path / "h.sqlite"
    db.write_bytes(b"garbage" * 1000)
    code = main(["--kubeconfig", str(kubeconfig), "ls", "--history-db", str(db)])
    _, err = capsys.readouterr()
    assert code != 0
    assert err.startswith("error: the history database") and "Traceback" not in err
    assert len(err.strip().splitlines()) <= 2
    code = main(["--kubeconfig", str(kubeconfig), "ls", "--history-db", str(db), "--no-history"])
    assert code == 0


def test_closing_while_another_thread_records_is_safe(tmp_path: Path) -> None:
    """The TUI records from worker threads and closes the store on exit (a crash, once)."""
    import threading
    import time

    for round_ in range(20):
        store = LocalStore(tmp_path / f"h{round_}.sqlite")

        def write(store: LocalStore = store) -> None:
            for i in range(200):
                pod = {"metadata": {"uid": f"u{i}", "namespace": "ns", "resourceVersion": str(i)}}
                store.record(SCOPE, "pods", [(pod, False)])

        writers = [threading.Thread(target=write) for _ in range(3)]
        for w in writers:
            w.start()
        time.sleep(0.002 * round_)
        store.close()
        for w in writers:
            w.join()
