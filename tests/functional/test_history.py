"""Loss reasons that outlive the pods (scenario S9): the history store, Spark's own executor list
through the pod proxy, and plain "unknown" counts — through the real entry point."""

from __future__ import annotations

import contextlib
import json
import time
from typing import Any

import pytest

from kubectl_spark.cli.main import main
from tests.conftest import ScenarioCluster as Cluster
from tests.recording import (
    driver_and_executor,
    exit_52,
    logs_kept,
    pod_body,
    pod_deleted,
    record_while_playing,
    start_record,
    stop_record,
)
from tests.waiting import wait_until


def describe(capsys: pytest.CaptureFixture[str], c: Cluster, *args: str) -> dict[str, Any]:
    code = main(["--kubeconfig", str(c.kubeconfig), "describe", "vanishing", "-o", "json", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


def lost(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        e["id"]: e for a in doc["attempts"] for e in a["executors"] if e["id"] in ("1", "2", "3")
    }


def test_s9_reasons_from_the_store_when_record_ran(cluster, capsys, tmp_path) -> None:
    c = cluster("s9-deleted-executors")
    db = tmp_path / "history.sqlite"
    record_while_playing(c, db, every=10)
    # The driver's UI is gone from the picture: only the store can explain the losses now.
    c.world.register_proxy = None
    doc = describe(capsys, c, "--history-db", str(db), "--request-timeout", "5s")
    found = lost(doc)
    assert {i: e["reason"]["code"] for i, e in found.items()} == {
        "1": "OOMKilled",
        "2": "Evicted",
        "3": "Preempted",
    }
    for executor in found.values():
        assert executor["source"] == "history"
        assert any("local history store" in line for line in executor["reason"]["evidence"])
    assert "history" in doc["sources"]
    code = main(
        ["--kubeconfig", str(c.kubeconfig), "--history-db", str(db), "logs", "vanishing/1/exec-1"]
    )
    _, err = capsys.readouterr()
    # record asks for a stopped container's last lines at once; whether it was before the
    # simulated driver deleted the pod depends on the steps' timing. Either way it is said.
    if logs_kept(db, of=found["1"]["uid"]):
        assert code == 0 and err.startswith("pod ") and "is gone; these are the last" in err, err
    else:
        assert code == 1 and "executor 1 of vanishing/1 is gone" in err, err
        assert "its log went with it" in err
    # Nothing of it is in the cluster any more.
    code = main(
        ["--kubeconfig", str(c.kubeconfig), "describe", "vanishing", "-o", "json", "--no-history"]
    )
    out, _ = capsys.readouterr()
    assert code == 0
    assert all(
        e["source"] != "history" for a in json.loads(out)["attempts"] for e in a["executors"]
    )


def test_s4_a_pending_executor_spark_deleted_is_told_from_the_store(cluster, capsys, tmp_path):
    """Scenario S4's "pending executor killed": never scheduled, then deleted by its driver at
    40 s. kube-apiserver marks such a pod deleted (a graceful deletion of 0 s) before it goes,
    so the last sight the store kept says why it never ran, and that it was deleted."""
    c = cluster("s4-executor-losses")
    db = tmp_path / "history.sqlite"
    record_while_playing(c, db, every=10, until=50)
    flags = ["--kubeconfig", str(c.kubeconfig), "--history-db", str(db)]
    code = main([*flags, "describe", "losses", "-o", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    (attempt,) = json.loads(out)["attempts"]
    pending = next(e for e in attempt["executors"] if e["id"] == "10")
    assert (pending["source"], pending["state"]) == ("history", "Gone")
    reason = pending["reason"]
    # Nothing ran, so nothing was lost: the driver gave its request back (issue 50, point 5);
    # why it never ran is still said.
    assert (reason["code"], reason["category"], reason["countsAsFailure"]) == (
        "DeletedByDriver",
        "driver",
        False,
    )
    assert "deleted before it started" in reason["message"], reason["message"]
    assert "never scheduled" in reason["message"], reason["message"]
    assert "metadata.deletionTimestamp set" in reason["evidence"]


def test_s9_reasons_from_sparks_executor_list_without_record(cluster, capsys) -> None:
    c = cluster("s9-deleted-executors")
    c.player.play_until(180)
    doc = describe(capsys, c)
    found = lost(doc)
    assert set(found) == {"1", "2", "3"}
    assert found["1"]["reason"]["code"] == "OOMKilled"
    assert found["2"]["reason"]["code"] == "Evicted"
    # Spark saw only the deletion; the scheduler's Preempted Event on the gone pod says more.
    assert found["3"]["reason"]["code"] == "Preempted"
    for executor in found.values():
        assert executor["source"] == "spark"
        assert executor["reason"]["evidence"][0].startswith("from Spark's driver (allexecutors)")
    assert "spark-api" in doc["sources"]
    assert doc["attempts"][-1]["unknownLosses"] == 0
    # ls asks the driver too (issue 22: one answer): the same losses, none unexplained.
    assert main(["--kubeconfig", str(c.kubeconfig), "ls", "-o", "json"]) == 0
    (app,) = json.loads(capsys.readouterr().out)["items"]
    assert app["attempts"][-1]["unknownLosses"] == 0
    assert {i: e["reason"]["code"] for i, e in lost(app).items()} == {
        i: e["reason"]["code"] for i, e in found.items()
    }
    assert not [n for n in app["notes"] if "lost with unknown reasons" in n]


def test_s9_with_neither_says_how_many_were_lost_unexplained(cluster, capsys) -> None:
    c = cluster("s9-deleted-executors")
    c.player.scenario.apps["vanishing"].ui = False  # spark.ui.enabled=false: no REST API
    c.player.play_until(180)
    doc = describe(capsys, c)
    attempt = doc["attempts"][-1]
    assert attempt["unknownLosses"] == 3
    assert not lost(doc)
    assert any("3 executor(s) lost with unknown reasons" in n for n in doc["notes"])
    assert any("Spark's executor list was not read" in n for n in doc["notes"])
    code = main(["--kubeconfig", str(c.kubeconfig), "describe", "vanishing"])
    out, _ = capsys.readouterr()
    assert code == 0 and "3 executor(s) lost with unknown reasons" in out
    # Their logs: gone with their pods, and said so, unlike an id Spark never gave.
    code = main(["--kubeconfig", str(c.kubeconfig), "logs", "vanishing/1/exec-2"])
    _, err = capsys.readouterr()
    assert code == 1 and "executor 2 of vanishing/1 is gone (Spark numbered it before" in err
    code = main(["--kubeconfig", str(c.kubeconfig), "logs", "vanishing/1/exec-99"])
    _, err = capsys.readouterr()
    assert code == 1 and 'executor "exec-99" not found in vanishing/1: candidates are' in err


def test_s9_sparks_word_read_while_the_driver_ran_is_kept(cluster, capsys) -> None:
    """Issue 50, point 16: nothing records, Spark's driver told each loss, then stops
    answering. What it said when kubectl spark asked is kept in the local history store, and
    the losses stay explained; without the store they are unexplained, and the note names the
    command that would have kept them."""
    c = cluster("s9-deleted-executors")
    c.player.play_until(180)
    first = lost(describe(capsys, c))  # asks the running driver (Spark's executor list)
    assert {i: e["source"] for i, e in first.items()} == dict.fromkeys(("1", "2", "3"), "spark")
    # The driver can no longer be asked (here: its pod proxy refused, as for a driver whose
    # pod ended; the simulated drivers of s9 run to the end).
    c.server.set_policy(
        {"rules": [{"effect": "deny", "verbs": ["get"], "resources": ["pods/proxy"]}]}
    )
    doc = describe(capsys, c)
    kept = lost(doc)
    assert {i: e["reason"]["code"] for i, e in kept.items()} == {
        i: e["reason"]["code"] for i, e in first.items()
    }
    assert all(
        "as kubectl spark read it at" in e["reason"]["evidence"][0] for e in kept.values()
    ), (
        [e["reason"]["evidence"] for e in kept.values()],
        doc["notes"],
    )
    assert "history" in doc["sources"] and doc["attempts"][-1]["unknownLosses"] == 0
    bare = describe(capsys, c, "--no-history")
    assert bare["attempts"][-1]["unknownLosses"] == 3
    assert any(
        "nothing was recording: `kubectl spark record -n default`" in n for n in bare["notes"]
    )


def test_pod_proxy_forbidden_is_a_note_not_an_error(cluster, capsys) -> None:
    c = cluster("s9-deleted-executors")
    c.player.play_until(180)
    c.server.set_policy(
        {"rules": [{"effect": "deny", "verbs": ["get"], "resources": ["pods/proxy"]}]}
    )
    doc = describe(capsys, c)
    assert any("forbidden by the API server (needs get on pods/proxy)" in n for n in doc["notes"])
    assert doc["attempts"][-1]["unknownLosses"] == 3


def test_a_403_from_the_drivers_own_ui_is_named_as_its(cluster, capsys) -> None:
    """Issue 50, point 14: the pod proxy passes the target's answer on. A 403 Spark's UI gave
    (its view ACLs) is not RBAC: the note says which refused, so the fix is the right one."""
    c = cluster("s9-deleted-executors")
    c.player.play_until(180)
    for ui in c.world.spark.uis.values():
        ui.view_acls = True
    doc = describe(capsys, c, "--no-history")
    (note,) = [n for n in doc["notes"] if "executor list was not read" in n]
    assert "the driver's UI refused it" in note and "spark.ui.view.acls" in note, note
    assert "pods/proxy" not in note


def history_json(capsys: pytest.CaptureFixture[str], c: Cluster, *args: str) -> list[Any]:
    code = main(
        ["--kubeconfig", str(c.kubeconfig), "history", "networkwordcount", "-o", "json", *args]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    items: list[Any] = json.loads(out)["items"]
    return items


def test_s1_history_is_complete_an_hour_later_from_the_store(cluster, capsys, tmp_path) -> None:
    c = cluster("s1-node-shutdown")
    db = tmp_path / "history.sqlite"
    record_while_playing(c, db, every=30)
    then = history_json(capsys, c, "--no-history")
    # An hour later: the Events have expired (the emulator's --event-ttl is 1 h).
    c.clock.advance(3601)
    forgotten = history_json(capsys, c, "--no-history")
    later = history_json(capsys, c, "--history-db", str(db))

    def key(entry: dict[str, Any]) -> tuple[Any, ...]:
        # The store may tell an entry better than the end of the scenario could (attempt 1's
        # pod itself rather than a reconstruction): the same entries, not the same words.
        return (entry["kind"], entry["attempt"], entry["executor"])

    assert len(forgotten) < len(then), "the cluster should have forgotten part of the story"
    missing = {key(e) for e in then} - {key(e) for e in later}
    assert not missing, f"the store lost {sorted(map(str, missing))}"
    assert any(e["kind"] == "Event" and "TaintManagerEviction" in e["message"] for e in later)
    assert not any(e["kind"] == "Event" for e in forgotten), "the Events have expired"
    assert {(e["attempt"], e["executor"]) for e in later if e["kind"] == "ExecutorLost"} == {
        (1, "1"),
        (1, "2"),
    }


def test_two_record_processes_at_once_lose_nothing(cluster, tmp_path) -> None:
    from kubectl_spark.kube.client import Connection, connect, history_scope
    from kubectl_spark.localstore import LocalStore

    c = cluster("s9-deleted-executors")
    db = tmp_path / "history.sqlite"
    c.player.play_until(2)
    procs = [start_record(c, db), start_record(c, db)]
    try:
        for t in range(10, 181, 10):
            c.player.play_until(t)
            time.sleep(0.05)
        time.sleep(1.0)
    finally:
        errors = [stop_record(p) for p in procs]
    assert all("recorded" in e and "Traceback" not in e for e in errors)
    seen = {p["metadata"]["name"] for p in c.world.client.list("/api/v1/namespaces/default/pods")}
    with connect(Connection(kubeconfig=str(c.kubeconfig))) as api:
        scope = history_scope(api)
    with LocalStore(db) as store:
        kept = {
            obj["metadata"]["name"]: deleted for obj, _, deleted in store.load(scope, "pods", None)
        }
    assert seen <= set(kept)
    gone = {n for n, deleted in kept.items() if deleted}
    assert {n.rsplit("-", 1)[-1] for n in gone} == {"1", "2", "3"}  # exec-1, exec-2, exec-3


def test_record_keeps_the_last_lines_of_an_executor_spark_deleted(
    emulator, kubeconfig, api, capsys, tmp_path
) -> None:
    """The JVM's last words (its OutOfMemoryError) outlive the pod Spark deleted a second later."""
    from types import SimpleNamespace

    from kubernetes import client

    core = client.CoreV1Api(api)
    executor = driver_and_executor(core)
    uid = executor.metadata.uid
    said = "INFO Executor: task 7 started\njava.lang.OutOfMemoryError: Java heap space\n"
    emulator.append_log("default", "vm-exec-1", "spark-kubernetes-executor", said)
    driver_uid = json.loads(
        core.read_namespaced_pod("vm-driver", "default", _preload_content=False).data
    )["metadata"]["uid"]
    driver_said = "Exception in thread main: java.lang.IllegalStateException: no input\n"
    emulator.append_log("default", "vm-driver", "spark-kubernetes-driver", driver_said)
    db = tmp_path / "history.sqlite"
    proc = start_record(SimpleNamespace(kubeconfig=kubeconfig), db)
    try:
        for name, container, kept in (
            ("vm-exec-1", "spark-kubernetes-executor", 1),
            ("vm-driver", "spark-kubernetes-driver", 2),
        ):
            exit_52(core, name, container)
            wait_until(lambda: logs_kept(db) == kept)  # noqa: B023 - waited for at once
            core.delete_namespaced_pod(
                name, "default", grace_period_seconds=0, _preload_content=False
            )
        wait_until(lambda: pod_deleted(db, uid) and pod_deleted(db, driver_uid))
    finally:
        err = stop_record(proc)
    assert "and the last lines of 2 stopped container(s)" in err
    args = ["--kubeconfig", str(kubeconfig), "--history-db", str(db)]
    assert main([*args, "logs", "vm/1/exec-1"]) == 0
    out, err = capsys.readouterr()
    assert out == said
    assert err.startswith(
        "pod vm-exec-1 is gone; these are the last 100 lines of its spark-kubernetes-executor "
        "container (last run, exit code 52, ended 2026-03-01T02:00:00Z), kept by kubectl spark record"
    ), err
    assert main([*args, "logs", "vm"]) == 0  # the driver's, gone as well
    out, err = capsys.readouterr()
    assert out == driver_said and err.startswith("pod vm-driver is gone; these are the last"), err
    # -p asks for the run before the last: it ran once, so there is none (it printed the last).
    for ref in ("vm/1/exec-1", "vm"):
        assert main([*args, "logs", ref, "-p"]) == 1
        out, err = capsys.readouterr()
        assert out == "" and "no run before its last was kept" in err, err
        assert len(err.strip().splitlines()) == 1
    # Without the lines (an older record kept only the pod), the error says how to keep them.
    import sqlite3

    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("DELETE FROM objects WHERE kind='logs'")
    assert main([*args, "logs", "vm/1/exec-1"]) == 1
    _, err = capsys.readouterr()
    assert "its log went with it (`kubectl spark record` keeps the last lines" in err, err
    assert len(err.strip().splitlines()) == 1


def test_record_without_pods_log_says_so_once_and_keeps_recording(
    emulator, api, capsys, tmp_path
) -> None:
    """RBAC without get on pods/log: one line on stderr; the pods' states are still kept."""
    from types import SimpleNamespace

    from kubernetes import client

    core = client.CoreV1Api(api)
    executor = driver_and_executor(core)
    emulator.set_policy(
        {"rules": [{"effect": "deny", "users": ["oncall"], "resources": ["pods/log"]}]}
    )
    limited = emulator.write_kubeconfig(
        tmp_path / "limited", user="oncall", token=emulator.add_user("oncall")
    )
    db = tmp_path / "history.sqlite"
    proc = start_record(SimpleNamespace(kubeconfig=limited), db)
    try:
        exit_52(core, "vm-exec-1")
        wait_until(lambda: '"Failed"' in pod_body(db, executor.metadata.uid))
        time.sleep(0.5)
    finally:
        err = stop_record(proc)
    assert err.count("cannot read pods' logs (forbidden: needs get on pods/log)") == 1, err
    assert "and the last lines of 0 stopped container(s)" in err
    assert logs_kept(db) == 0


def test_lines_kept_once_are_not_asked_for_again(emulator, kubeconfig, api, tmp_path) -> None:
    """A second record (or a TUI) finds them in the store: no log read per start per failed pod."""
    from types import SimpleNamespace

    from kubernetes import client

    core = client.CoreV1Api(api)
    driver_and_executor(core)
    emulator.append_log("default", "vm-exec-1", "spark-kubernetes-executor", "OOM\n")
    exit_52(core, "vm-exec-1")  # and kept: deleteOnTermination=false
    db = tmp_path / "history.sqlite"
    for _ in range(2):
        proc = start_record(SimpleNamespace(kubeconfig=kubeconfig), db)
        try:
            wait_until(lambda: logs_kept(db) == 1)
            time.sleep(1.0)  # a second run would have asked by now
        finally:
            stop_record(proc)
    asked = [e for e in emulator.audit_entries() if e.get("subresource") == "log"]
    assert len(asked) == 1, asked


def test_a_driver_force_deleted_on_an_unreachable_node_keeps_a_tombstone(cluster, capsys, tmp_path):
    """Issue 23: s2's zombie driver force-deleted (grace 0) while its node is unreachable
    vanishes from the API, not from the node. The store kept its last state: the alert stays
    until the node is tainted out-of-service (or Ready again, or deleted)."""
    c = cluster("s2-partition")
    db = tmp_path / "history.sqlite"
    c.player.play()
    drivers = c.world.find_pods("default", spark_role="driver")
    zombie = next(d for d in drivers if d["spec"]["nodeName"] == "node-a")
    proc = start_record(c, db)
    try:
        time.sleep(1.0)
        c.world.client.delete(
            f"/api/v1/namespaces/default/pods/{zombie['metadata']['name']}", grace=0
        )
        wait_until(lambda: pod_deleted(db, zombie["metadata"]["uid"]))
    finally:
        stop_record(proc)
    args = ["--kubeconfig", str(c.kubeconfig), "--history-db", str(db)]
    assert main([*args, "ls", "-o", "json"]) == 0
    (app,) = json.loads(capsys.readouterr()[0])["items"]
    tomb = next(a for a in app["alerts"] if a["type"] == "ForceDeletedOnLostNode")
    assert tomb["attempts"] == [1] and "node-a" in tomb["message"]
    c.world.client.patch(
        "/api/v1/nodes/node-a",
        {
            "spec": {
                "taints": [
                    {
                        "key": "node.kubernetes.io/out-of-service",
                        "value": "nodeshutdown",
                        "effect": "NoExecute",
                    }
                ]
            }
        },
    )
    assert main([*args, "ls", "-o", "json"]) == 0
    (app,) = json.loads(capsys.readouterr()[0])["items"]
    assert "ForceDeletedOnLostNode" not in {a["type"] for a in app["alerts"]}


def test_a_heartbeat_expiry_is_told_from_the_drivers_log(cluster, capsys) -> None:
    """Issue 50, point 6: on Kubernetes Spark's list says only "Executor killed by driver." for
    an executor whose heartbeats expired (KubernetesClusterSchedulerBackend.doKillExecutors
    removes it with ExecutorKilled first); the driver logged the expiry just before
    (HeartbeatReceiver.expireDeadHosts). A scale-down's kill stays the driver's decision."""
    c = cluster("s4-executor-losses")
    c.player.play_until(170)
    running = [
        p
        for p in c.world.find_pods("default", spark_app_name="losses", spark_role="executor")
        if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")
    ]
    silent = max(
        (p for p in running if p["metadata"]["labels"]["spark-exec-id"] != "9"),  # 9 exits at 195
        key=lambda p: int(p["metadata"]["labels"]["spark-exec-id"]),
    )
    silent_id = silent["metadata"]["labels"]["spark-exec-id"]
    c.world.spark.kill_executor(silent, silent_ms=131_500)
    c.world.step(3)
    code = main(["--kubeconfig", str(c.kubeconfig), "describe", "losses", "-o", "json",
                 "--no-history"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    by_id = {e["id"]: e for e in json.loads(out)["attempts"][0]["executors"]}
    reason = by_id[silent_id]["reason"]
    assert (reason["code"], reason["category"], reason["countsAsFailure"]) == (
        "HeartbeatTimeout",
        "unknown",
        False,
    ), reason
    line = f"Removing executor {silent_id} with no recent heartbeats"
    assert any(line in e for e in reason["evidence"]), reason["evidence"]
    assert by_id["8"]["reason"]["code"] == "DeletedByDriver"  # the driver's own kill at 165 s
    assert by_id["10"]["reason"]["code"] == "DeletedByDriver"  # the scale-down at 40 s
