"""Client-mode drivers through the real entry point: a notebook's driver in an unlabelled pod,
a driver outside the cluster (a laptop), asked at the UI it is pointed at, never resubmitted.
"""

from __future__ import annotations

import json

from tests.command_line import app_named, ls_json, run
from tests.conftest import ScenarioCluster as Cluster
from tests.helpers import notebook_with_executors


def test_a_client_mode_driver_in_an_unlabelled_pod_is_the_attempts_driver(cluster, capsys) -> None:
    """Its executors are not orphans, and it is not killed as one."""
    c = cluster("s6-driver-restarts")
    c.player.play_until(1)  # its nodes
    pods = "/api/v1/namespaces/default/pods"
    notebook = notebook_with_executors(c)
    c.world.step(3)
    app = app_named(ls_json(capsys, c), "notebook")
    (attempt,) = app["attempts"]
    assert (attempt["driverPod"], attempt["uid"]) == ("jupyter-alice", notebook["metadata"]["uid"])
    assert attempt["state"] == "Running"
    assert [e["reason"] for e in attempt["executors"]] == [None, None]
    assert app["alerts"] == []
    # The notebook's pod is more than the application: it is neither killed nor cut off, even
    # with --force (before, --force deleted it, or fenced it off the network).
    for action in ("force-kill", "fence"):
        for force in ((), ("--force",)):
            c.server.clear_audit()
            code, _, err = run(capsys, c, action, "notebook/1", *force, "--yes")
            assert code == 1 and "runs in pod jupyter-alice, which spark-submit did not make" in err
            assert len(err.strip().splitlines()) == 1, err
            assert [e for e in c.server.audit_entries() if e["verb"] not in ("get", "list")] == []
    assert c.world.client.get(f"{pods}/jupyter-alice") is not None


def laptop_executors(c: Cluster) -> None:
    """A laptop's notebook in client mode: executors that name no owner, and no driver pod."""
    for i in (1, 2):
        labels = {
            "spark-role": "executor",
            "spark-app-selector": "spark-lap",
            "spark-exec-id": str(i),
        }
        c.world.client.create(
            "/api/v1/namespaces/default/pods",
            {
                "metadata": {
                    "name": f"lap-exec-{i}",
                    "labels": {**labels, "spark-app-name": "laptop"},
                },
                "spec": {"containers": [{"name": "spark-kubernetes-executor", "image": "spark"}]},
            },
        )


def test_a_driver_outside_the_cluster_is_said_to_be_there_not_gone(cluster, capsys) -> None:
    """Its executors' logs are here; fencing or killing it is not kubectl spark's to do."""
    c = cluster("s6-driver-restarts")
    c.player.play_until(1)
    laptop_executors(c)
    c.world.step(3)
    code, out, _ = run(capsys, c, "logs", "laptop/1/exec-1")
    assert code == 0 and "Started executor 1" in out  # the driver pod being none does not matter
    code, _, err = run(capsys, c, "logs", "laptop")
    assert code == 1 and "runs outside the cluster (Spark's client mode): its log is where" in err
    for action in ("fence", "force-kill"):
        c.server.clear_audit()
        code, _, err = run(capsys, c, action, "laptop/1", "--yes")
        assert code == 1 and "driver runs outside the cluster" in err, err
        assert [e for e in c.server.audit_entries() if e["verb"] not in ("get", "list")] == []
    code, out, _ = run(capsys, c, "history", "laptop")
    assert "attempt 1 (driver <outside the cluster>)" in out


def test_a_client_mode_driver_is_asked_at_the_ui_it_is_pointed_at(cluster, capsys) -> None:
    """Issue 50, point 17: a notebook's driver on a laptop. Its executors name it
    (``SPARK_DRIVER_URL``, set by Spark's BasicExecutorFeatureStep); kubectl spark cannot reach
    it on its own, so it never says it "no longer runs": it says it was not asked, and how to
    point at it. ``--spark-ui URL`` asks it as a running driver (the same REST API,
    ``/api/v1/applications/<id>/allexecutors``)."""
    from kubectl_spark.sim.historyserver import HistoryServer
    from kubectl_spark.sim.sparkrest import SparkUI, exited_text

    c = cluster("s6-driver-restarts")
    c.player.play_until(1)
    driver_url = "spark://CoarseGrainedScheduler@10.1.2.3:40001"
    for i in (1, 3):  # executor 2 is gone: its pod was deleted after it failed
        c.world.client.create(
            "/api/v1/namespaces/default/pods",
            {
                "metadata": {
                    "name": f"lap-exec-{i}",
                    "labels": {
                        "spark-role": "executor",
                        "spark-app-selector": "spark-lap",
                        "spark-app-name": "laptop",
                        "spark-exec-id": str(i),
                    },
                },
                "spec": {
                    "containers": [
                        {
                            "name": "spark-kubernetes-executor",
                            "image": "spark",
                            "env": [{"name": "SPARK_DRIVER_URL", "value": driver_url}],
                        }
                    ]
                },
            },
        )
    c.world.step(3)
    code, out, _ = run(capsys, c, "describe", "laptop", "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["attempts"][0]["unknownLosses"] == 1
    (note,) = [n for n in doc["notes"] if "lost with unknown reasons" in n]
    assert "no longer runs" not in note and "--spark-ui" in note, note
    assert any(driver_url in n for n in doc["notes"]), doc["notes"]
    ui = SparkUI("spark-lap", "laptop", "2026-01-01T00:00:00Z")
    for exec_id in ("1", "2", "3"):
        ui.added(exec_id, "2026-01-01T00:00:01Z")
    failed = {"status": {"containerStatuses": [
        {"name": "spark-kubernetes-executor", "state": {"terminated": {"exitCode": 52}}}
    ]}}  # fmt: skip
    ui.removed("2", "2026-01-01T00:01:00Z", exited_text("2", failed))
    c.world.spark.uis["spark-lap"] = ui
    server = HistoryServer(c.world.spark).start()  # serves what a driver's UI serves
    try:
        code, out, err = run(
            capsys, c, "describe", "laptop", "-o", "json", "--spark-ui", server.url
        )
    finally:
        server.stop()
    assert code == 0, err
    doc = json.loads(out)
    attempt = doc["attempts"][0]
    gone = {e["id"]: e for e in attempt["executors"]}["2"]
    assert (gone["source"], gone["reason"]["code"]) == ("spark", "JvmOutOfMemory")
    assert attempt["unknownLosses"] == 0 and "spark-api" in doc["sources"]
    code, _, err = run(capsys, c, "describe", "laptop", "--spark-ui", "ftp://x")
    assert code == 1 and "--spark-ui" in err and len(err.strip().splitlines()) == 1, err


def test_a_client_mode_application_is_never_resubmitted_as_a_copy_of_its_driver(
    cluster, capsys
) -> None:
    """A copy of a notebook's pod starts another notebook, not the application: not even --force."""
    c = cluster("s6-driver-restarts")
    c.player.play_until(1)
    pods = "/api/v1/namespaces/default/pods"
    notebook_with_executors(c)
    laptop_executors(c)
    c.world.step(3)
    before = sorted(p["metadata"]["name"] for p in c.world.client.list(pods))
    code, _, err = run(capsys, c, "resubmit", "notebook", "--force", "--yes")
    assert code == 1 and "runs in pod jupyter-alice, which spark-submit did not make" in err
    code, _, err = run(capsys, c, "resubmit", "notebook", "--dry-run=client")
    assert code == 1 and "Spark's client mode" in err
    code, _, err = run(capsys, c, "resubmit", "laptop", "--force", "--yes")
    assert code == 1 and "runs outside the cluster (Spark's client mode)" in err
    assert sorted(p["metadata"]["name"] for p in c.world.client.list(pods)) == before


def test_an_owner_name_from_the_cluster_never_shapes_a_request(cluster, capsys) -> None:
    c = cluster("s6-driver-restarts")
    pods = "/api/v1/namespaces/default/pods"
    real = c.world.client.create(
        pods, {"metadata": {"name": "real"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
    )  # the garbage collector goes by uid: the executor stays
    name = "x/../../../nodes/node-a"
    owner = {"apiVersion": "v1", "kind": "Pod", "name": name, "uid": real["metadata"]["uid"]}
    c.world.client.create(
        "/api/v1/namespaces/default/pods",
        {
            "metadata": {
                "name": "odd-exec-1",
                "labels": {"spark-role": "executor", "spark-app-selector": "spark-odd"},
                "ownerReferences": [{**owner, "controller": True}],
            },
            "spec": {"containers": [{"name": "spark-kubernetes-executor", "image": "spark"}]},
        },
    )
    code, _, err = run(capsys, c, "ls", "-A", "-v=6")
    assert code == 0 and "GET" in err
    assert [line for line in err.splitlines() if "node-a" in line or "/x" in line] == []
