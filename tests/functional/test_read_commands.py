"""ls / describe / history / events / logs through the real entry point, on played scenarios."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubectl_spark.cli.main import main
from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer
from tests.command_line import app_named, ls_json, run


def alerts(app: dict[str, Any]) -> dict[str, list[int]]:
    return {a["type"]: a["attempts"] for a in app["alerts"]}


def test_s1_node_loss_replacement_and_history(cluster, capsys) -> None:
    c = cluster("s1-node-shutdown")
    c.player.play_until(450)
    app = app_named(ls_json(capsys, c), "networkwordcount")
    assert (app["source"], app["state"], len(app["attempts"])) == ("job", "Running", 2)
    first, second = app["attempts"]
    assert (
        first["state"],
        first["node"],
        first["reason"]["code"],
        first["reason"]["category"],
    ) == ("Lost", "node-a", "NodeLost", "cluster")
    assert "node node-a" in first["reason"]["message"]
    # Its executors run on reachable nodes: they still serve a driver that may run (issue 23).
    assert [(e["state"], e["reason"]) for e in first["executors"]] == [("Running", None)] * 2
    # Attempt 2 shares the app id: Spark counts attempt 1's executors as its own, asks for none.
    assert (second["state"], len(second["executors"])) == ("Running", 0)
    assert len(first["executors"]) == 2
    assert "ZombieDriver" in alerts(app)
    c.player.play_until(660)  # node-a is back: attempt 1's pod and executors are gone
    code, out, err = run(capsys, c, "history", "networkwordcount", "-o", "json")
    assert code == 0, err
    kinds = [(h["kind"], h["attempt"]) for h in json.loads(out)["items"]]
    assert (
        ("AttemptStarted", 1) in kinds
        and ("AttemptStarted", 2) in kinds
        and ("AttemptReplaced", 1) in kinds
    )
    messages = " ".join(h["message"] for h in json.loads(out)["items"])
    assert "NodeNotReady" in messages and "TaintManagerEviction" in messages
    app = app_named(ls_json(capsys, c), "networkwordcount")
    assert [a["state"] for a in app["attempts"]] == ["Lost", "Running"]
    assert app["attempts"][0]["reason"]["code"] == "NodeLost"  # from the Events that still name it
    assert not alerts(app)
    second = app["attempts"][1]  # attempt 1's executors gone, it asked for its own
    assert [e["state"] for e in second["executors"]] == ["Running", "Running"]
    assert all(e["reason"] is None for e in second["executors"])


def test_s2_split_brain(played, capsys) -> None:
    c = played("s2-partition")
    app = app_named(ls_json(capsys, c), "networkwordcount")
    assert alerts(app)["SplitBrain"] == [1, 2]
    code, out, _ = run(capsys, c, "ls")
    assert code == 0
    line = next(row for row in out.splitlines() if row.startswith("networkwordcount"))
    # Attempt 2 has none of its own: it counts attempt 1's two (one app id) as its own.
    assert line.split()[1:5] == ["Running", "2/2", "Running", "0/0"]
    code, out, _ = run(capsys, c, "describe", "networkwordcount")
    attempts = [row.split() for row in out.splitlines() if row.startswith("  #")]
    assert [(a[0], a[1], a[-2:]) for a in attempts] == [
        ("#1", "Lost", ["on", "node-a"]),
        ("#2", "Running", ["on", "node-b"]),
    ]
    assert "SplitBrain,ZombieDriver" in line


def test_s2b_replacement_blocked(played, capsys) -> None:
    c = played("s2b-partition-replacement-blocked")
    app = app_named(ls_json(capsys, c), "networkwordcount")
    assert app["state"] == "Unknown" and len(app["attempts"]) == 1
    blocked = next(a for a in app["alerts"] if a["type"] == "ReplacementBlocked")
    assert (
        "waiting" in blocked["message"]
        or "waits for attempt 1 to reach a terminal phase" in blocked["message"]
    )


def test_s3_volume_blocks_attempt_2(played, capsys) -> None:
    c = played("s3-rwo-volume")
    code, out, err = run(capsys, c, "describe", "streaming-checkpoint", "-o", "json")
    assert code == 0, err
    app = json.loads(out)
    assert [a["state"] for a in app["attempts"]] == ["Lost", "Pending"]
    blocked = next(a for a in app["alerts"] if a["type"] == "ReplacementBlocked")
    assert (
        "volume checkpoint is still attached to unreachable node node-a (held by attempt 1)"
        in blocked["message"]
    )
    assert blocked["attempts"] == [1, 2]
    # The attempt itself says what it waits on; "Pending" alone did not.
    waiting = app["attempts"][1]["waiting"]
    assert (waiting["code"], waiting["category"]) == ("VolumeAttachFailure", "cluster")
    assert "Multi-Attach error" in waiting["message"]
    code, out, err = run(capsys, c, "ls")
    assert code == 0 and "Pending:VolumeAttachFailure" in out.split(), out
    code, out, err = run(capsys, c, "history", "streaming-checkpoint", "-o", "json")
    assert code == 0, err
    assert any(
        h["kind"] == "Waiting" and h["attempt"] == 2 and "VolumeAttachFailure" in h["message"]
        for h in json.loads(out)["items"]
    )


def test_s4_every_loss_reason(played, capsys) -> None:
    c = played("s4-executor-losses")
    code, out, err = run(capsys, c, "describe", "losses", "-o", "json")
    assert code == 0, err
    (attempt,) = json.loads(out)["attempts"]
    by_id = {e["id"]: e["reason"] for e in attempt["executors"]}
    expected = {
        "1": ("OOMKilled", "app", True),
        "2": ("PossibleOOM", "app", True),
        "3": ("JvmOutOfMemory", "app", True),
        "4": ("UncaughtException", "app", True),
        "5": ("DriverUnreachable", "unknown", True),
        "6": ("Evicted", "app", True),  # the kubelet: it used more than its request
        "9": ("Completed", "app", False),  # exited 0, kept: not decommissioned
    }
    for exec_id, (code_, category, counts) in expected.items():
        assert (
            by_id[exec_id]["code"],
            by_id[exec_id]["category"],
            by_id[exec_id]["countsAsFailure"],
        ) == (code_, category, counts), exec_id
    assert by_id["2"]["exitCode"] == 137 and "possible container OOM" in by_id["2"]["message"]
    lost_node = [r for r in by_id.values() if r and r["code"] == "NodeLost"]
    assert lost_node and all(
        r["category"] == "cluster" and not r["countsAsFailure"] for r in lost_node
    )
    restarts = app_named(ls_json(capsys, c), "restarts")
    assert restarts["attempts"][0]["executors"][0]["restarts"] == 1


def test_s5_operator_attempts_reconstructed(played, capsys) -> None:
    c = played("s5-operator-retries")
    app = app_named(ls_json(capsys, c), "pi")
    assert (app["source"], app["state"], len(app["attempts"])) == ("sparkapplication", "Failed", 3)
    assert [a["driverPod"] for a in app["attempts"]] == ["pi-driver"] * 3
    last = app["attempts"][-1]
    assert (last["reason"]["code"], last["reason"]["exitCode"]) == ("ExitCode", 1)
    assert [a["uid"] is None for a in app["attempts"]] == [True, True, False]
    # the operator reruns an OnFailure application only after its driver failed
    for earlier in app["attempts"][:2]:
        assert (earlier["state"], earlier["reason"]["countsAsFailure"]) == ("Failed", True)
        assert any("SparkDriverFailed (x3)" in e for e in earlier["reason"]["evidence"])
    ended = [h["attempt"] for h in app["history"] if h["kind"] == "AttemptEnded"]
    assert ended == [1, 2, 3]
    # An aggregated Event sits at its first time, by what set it off, and says when it last
    # happened: the first failure before the reruns it led to, not after them.
    kinds = [(h["kind"], h["attempt"], h["message"].split(":")[0]) for h in app["history"]]
    failed = kinds.index(("Event", None, "SparkDriverFailed"))
    assert kinds.index(("AttemptEnded", 1, "attempt 1 ended")) < failed
    assert failed < kinds.index(("AttemptStarted", 2, "attempt 2 (driver pi-driver)"))
    failed_entry = app["history"][failed]
    assert "(x3, the last at " in failed_entry["message"]
    # the aggregated Events still hold the first run's start and end
    events = {
        e["reason"]: e
        for e in c.world.client.list(
            "/api/v1/namespaces/default/events",
            fieldSelector="involvedObject.kind=SparkApplication",
        )
    }
    first = app["attempts"][0]
    assert (first["createdAt"], first["endedAt"]) == (
        events["SparkApplicationSubmitted"]["firstTimestamp"],
        events["SparkDriverFailed"]["firstTimestamp"],
    )
    # The second run was decided at the first rerun, and the last run rebuilt ended at the
    # last one (issue 48: no <unknown> time where an Event gives one).
    rerun = events["SparkApplicationPendingRerun"]
    assert (app["attempts"][1]["createdAt"], app["attempts"][1]["endedAt"]) == (
        rerun["firstTimestamp"],
        rerun["lastTimestamp"],
    )
    assert all(h["time"] for h in app["history"]), app["history"]
    assert failed_entry["time"] == events["SparkDriverFailed"]["firstTimestamp"]
    assert failed_entry["message"].endswith(
        f"(x3, the last at {events['SparkDriverFailed']['lastTimestamp']})"
    )


def test_executors_lost_with_their_node_are_placed_in_the_timeline(cluster, capsys) -> None:
    """Pods on an unreachable node stay Running in the API: no container ended, so the moment
    they were lost is the moment their node stopped being Ready — not the taint manager's
    deletion minutes later."""
    c = cluster("mixed")
    c.player.play_until(450)  # node-a partitioned at 40, not ready about 40 s later, pods evicted
    node = c.world.client.get("/api/v1/nodes/node-a")
    ready = next(x for x in node["status"]["conditions"] if x["type"] == "Ready")
    assert ready["status"] == "Unknown"
    for app, kind in (("nightly-etl", "ExecutorLost"), ("streaming-ingest", "AttemptEnded")):
        code, out, err = run(capsys, c, "history", app, "-n", "spark-prod", "-o", "json")
        assert code == 0, err
        items = json.loads(out)["items"]
        lost = [h for h in items if h["kind"] == kind and "NodeLost" in h["message"]]
        assert lost and {h["time"] for h in lost} == {ready["lastTransitionTime"]}, app
        assert [h["time"] for h in items] == sorted(h["time"] for h in items)
    attempt = app_named(ls_json(capsys, c), "streaming-ingest")["attempts"][0]
    # Its driver is Lost (the node unreachable) and may still run: no end to tell (issue 23).
    assert attempt["state"] == "Lost" and attempt["endedAt"] is None


def test_the_log_of_a_driver_on_an_unreachable_node_is_asked_for_once(cluster, capsys) -> None:
    """Its kubelet cannot answer: retrying (as for a busy API server) only delays the error."""
    c = cluster("s2-partition")
    c.player.play()
    c.server.clear_audit()
    code, out, err = run(capsys, c, "logs", "networkwordcount/1")
    assert code == 1 and out == ""
    assert "(node node-a is unreachable)" in err and "dial tcp" in err
    assert len(err.strip().splitlines()) == 1
    asked = [e for e in c.server.audit_entries() if e.get("subresource") == "log"]
    assert len(asked) == 1, asked


def test_s6_restarts_in_history(played, capsys) -> None:
    c = played("s6-driver-restarts")
    app = app_named(ls_json(capsys, c), "restarting-driver")
    assert app["attempts"][0]["restarts"] == 2 and len(app["attempts"]) == 1
    restarts = [h for h in app["history"] if h["kind"] == "ContainerRestarted"]
    assert len(restarts) == 2
    assert "OOMKilled" in restarts[-1]["message"]
    assert "kept no reason" in restarts[0]["message"]


def test_s7_attempts_sharing_an_app_id(played, capsys) -> None:
    """S7's attempts share one app id: Spark's attempt 2 counts attempt 1's executors and never
    asks, so no name collides; the alert names the real cause (issue 23)."""
    c = played("s7-name-collision")
    app = app_named(ls_json(capsys, c), "networkwordcount")
    shared = next(a for a in app["alerts"] if a["type"] == "SharedAppId")
    assert shared["attempts"] == [1, 2]
    assert "spark.app.id" in shared["message"]
    assert "NameCollision" not in {a["type"] for a in app["alerts"]}


def test_s8_orphans_and_churn(played, capsys) -> None:
    c = played("s8-orphans-and-churn")
    etl = app_named(ls_json(capsys, c), "etl")
    orphans = next(a for a in etl["attempts"] if a["uid"] is None or a["driverPod"] is None)
    running = next(e for e in orphans["executors"] if e["source"] == "cluster")
    # the driver pod is gone, the executor's is not: its log is there to read
    code, _, err = run(capsys, c, "logs", f"etl/{orphans['number']}/exec-{running['id']}")
    assert code == 0, err
    doc = ls_json(capsys, c)
    assert "OrphanedExecutors" in alerts(app_named(doc, "etl"))
    churn = next(a for a in app_named(doc, "churn")["alerts"] if a["type"] == "ExecutorChurn")
    assert "mostly OOMKilled (6 of 6)" in churn["message"]


def test_events_logs_and_other_outputs(played, capsys) -> None:
    c = played("s6-driver-restarts")
    code, out, _ = run(capsys, c, "events", "restarting-driver")
    assert (
        code == 0
        and "BackOff" in out
        and out.splitlines()[0].split()[:3] == ["LAST", "SEEN", "TYPE"]
    )
    code, out, _ = run(capsys, c, "logs", "restarting-driver")
    assert code == 0 and "Running Spark version" in out
    code, out, _ = run(capsys, c, "logs", "restarting-driver/1", "--previous")
    assert code == 0
    code, out, _ = run(capsys, c, "logs", "restarting-driver/latest/exec-1")
    assert code == 0
    code, out, _ = run(capsys, c, "ls", "-o", "name")
    newest = app_named(ls_json(capsys, c), "restarting-driver")["attempts"][-1]
    assert out == f"pod/{newest['driverPod']}\n"  # spark-submit's: the driver, as kubectl reads it
    code, out, _ = run(capsys, c, "ls", "--no-headers")
    assert not out.startswith("APP")
    code, out, _ = run(capsys, c, "ls", "-o", "yaml")
    assert code == 0 and out.startswith("apiVersion: kubectl-spark/v1")
    code, out, _ = run(
        capsys, c, "--context", "kubectl-spark-emulator", "ls", "-n", "default", "-o", "wide"
    )
    assert code == 0 and "APP-ID" in out.splitlines()[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["describe", "nope"], 'application "nope" not found'),
        (
            ["logs", "restarting-driver/7"],
            'attempt "7" of restarting-driver not found: candidates are restarting-driver/1',
        ),
        (
            ["logs", "restarting-driver/1/exec-9"],
            'executor "exec-9" not found in restarting-driver/1: candidates are',
        ),
        (["-n", "nowhere", "ls"], 'namespace "nowhere" not found'),
        (["ls", "-l", "a in (b"], "unable to parse requirement"),
        (["ls", "-o", "xml"], 'unable to match a printer suitable for the output format "xml"'),
        (["--context", "nope", "ls"], 'context "nope" does not exist in the kubeconfig'),
        (["-n", "Bad_NS", "ls"], 'invalid namespace "Bad_NS"'),
        (["--request-timeout", "soon", "ls"], 'invalid --request-timeout "soon"'),
        (["logs", "a//b"], 'invalid reference "a//b"'),
    ],
)
def test_bad_input_is_one_line_and_non_zero(cluster, capsys, args: list[str], message: str) -> None:
    c = cluster("s6-driver-restarts")
    c.player.play_until(20)
    code, out, err = run(capsys, c, *args)
    assert code != 0
    assert out == ""
    assert err.startswith("error: ") and message in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if not line.startswith("hint:")]) == 1


def test_cluster_errors(tmp_path: Path, capsys) -> None:
    with EmbeddedApiServer() as server:
        good = server.write_kubeconfig(tmp_path / "good")
        bad = server.write_kubeconfig(tmp_path / "bad", token="wrong")
        limited = server.write_kubeconfig(
            tmp_path / "limited", user="viewer", token=server.add_user("viewer")
        )
        server.set_policy(
            {
                "rules": [
                    {
                        "effect": "deny",
                        "users": ["viewer"],
                        "verbs": ["list"],
                        "resources": ["pods"],
                    }
                ]
            }
        )
        assert main(["--kubeconfig", str(bad), "ls"]) == 1
        assert "401 Unauthorized" in capsys.readouterr().err
        assert main(["--kubeconfig", str(limited), "ls"]) == 1
        err = capsys.readouterr().err
        assert 'cannot list resource "pods" in API group "" in the namespace "default"' in err
        assert main(["--kubeconfig", str(good), "ls"]) == 0
        assert "No Spark applications found in default namespace." in capsys.readouterr().err
        port = server.port
    gone = tmp_path / "good"
    assert main(["--kubeconfig", str(gone), "--request-timeout", "2s", "ls"]) == 1
    err = capsys.readouterr().err
    assert (
        err.startswith("error: ")
        and "cannot reach the API server" in err
        and len(err.splitlines()) == 1
    )
    del port
    assert main(["--kubeconfig", str(tmp_path / "missing"), "ls"]) == 1
    assert "does not exist" in capsys.readouterr().err


def test_a_url_with_the_wrong_scheme_is_said_to_be_one(tmp_path: Path, capsys) -> None:
    """http:// to an HTTPS port, https:// to an HTTP one: one line that names the likely fix.

    Before, urllib3's retry dump, cut mid-word ("RemoteDisconnected('Remote end closed connec").
    """
    from kubectl_spark.cluster.apiserver.embedded import EmulatorOptions

    with (
        EmbeddedApiServer() as tls,
        EmbeddedApiServer(EmulatorOptions(tls=False)) as plain,
    ):
        config = str(tls.write_kubeconfig(tmp_path / "tls"))
        address = tls.url.removeprefix("https://")
        args = ["--kubeconfig", config, "--request-timeout", "5s", "--server"]
        assert main([*args, f"http://{address}", "ls"]) == 1
        err = capsys.readouterr().err
        assert err.startswith("error: ") and len(err.splitlines()) == 1, err
        # kube-apiserver (Go) answers 400 "Client sent an HTTP request to an HTTPS server.";
        # so does the emulator, and the real kubectl says BadRequest rather than EOF.
        assert "the server speaks HTTPS there (it answered 400 Bad Request: Client sent" in err
        assert err.rstrip().endswith("is its URL https://…?"), err
        config = str(plain.write_kubeconfig(tmp_path / "plain"))
        address = plain.url.removeprefix("http://")
        assert main(["--kubeconfig", config, "--server", f"https://{address}", "ls"]) == 1
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and "does not speak TLS (HTTPS) there" in err, err
        assert "attempts" not in err, "retrying a plain-text answer to TLS cannot help"


def test_a_pending_driver_says_why_it_waits(cluster, capsys) -> None:
    """Its image cannot be pulled: nothing is lost yet, and "Pending" alone says nothing to fix."""
    c = cluster("s6-driver-restarts")
    c.player.play_until(1)  # its nodes
    labels = {"spark-role": "driver", "spark-app-selector": "spark-pull", "spark-app-name": "pull"}
    c.world.client.create(
        "/api/v1/namespaces/default/pods",
        {
            "metadata": {"name": "pull-driver", "labels": labels},
            "spec": {
                "containers": [{"name": "spark-kubernetes-driver", "image": "apache/spark:missing"}]
            },
        },
    )
    c.world.step(3)
    (attempt,) = app_named(ls_json(capsys, c), "pull")["attempts"]
    assert (attempt["state"], attempt["reason"]) == ("Pending", None)  # not a loss
    waiting = attempt["waiting"]
    assert waiting["code"] == "ImagePullFailure" and "apache/spark:missing" in waiting["message"]
    field = "status.containerStatuses[spark-kubernetes-driver].state.waiting.reason="
    assert any(e.startswith(field) for e in waiting["evidence"])
    code, out, _ = run(capsys, c, "describe", "pull")
    assert code == 0 and "Waiting:   ImagePullFailure — image pull failed" in out
    code, out, _ = run(capsys, c, "ls")
    assert code == 0 and "Pending:ImagePullFailure" in out.split(), out  # one cell, no spaces
    # The timeline says so too, from the first failed pull on; it said only "attempt 1 started".
    code, out, err = run(capsys, c, "history", "pull", "-o", "json")
    assert code == 0, err
    items = json.loads(out)["items"]
    (entry,) = [h for h in items if h["kind"] == "Waiting"]
    assert entry["message"].startswith("attempt 1's driver waits: ImagePullFailure — ")
    started = next(h["time"] for h in items if h["kind"] == "AttemptStarted")
    assert entry["time"] >= started and entry["time"] == min(
        e["lastTimestamp"] if e.get("count", 1) == 1 else e["firstTimestamp"]
        for e in c.world.client.list("/api/v1/namespaces/default/events")
        if e["involvedObject"]["name"] == "pull-driver" and e["type"] == "Warning"
    )


def _ages(table: str) -> list[str]:
    lines = table.splitlines()
    return [line.split()[-1] for line in lines[1:] if line.strip()]


def test_ages_are_read_against_the_clusters_clock(cluster, capsys) -> None:
    """kube-apiserver prints AGE for kubectl by its own clock; `ls` and `describe` read the
    cluster's clock from its answers' Date header. Before, a laptop whose clock was off (or the
    demo's clock, still catching up) aged every application by the difference."""
    c = cluster("s6-driver-restarts")
    c.player.play()
    c.clock.advance(3 * 3600)  # the cluster's clock now runs 3 hours ahead of this machine's
    code, out, err = run(capsys, c, "ls", "-A")
    assert code == 0, err
    ages = _ages(out)
    assert ages and all(a.startswith("3h") for a in ages), out
    code, out, err = run(capsys, c, "describe", "restarting-driver")
    assert code == 0, err
    created = next(line for line in out.splitlines() if line.startswith("Created:"))
    assert created.endswith("ago)") and "(3h" in created, created


def test_a_clock_that_agrees_to_the_second_is_trusted_as_it_is() -> None:
    """A Date header is to the second: within 2 s, this machine's clock is the better one; an
    unreadable Date changes nothing."""
    from datetime import UTC, datetime, timedelta
    from email.utils import format_datetime

    from kubectl_spark.kube.client import Api

    api = Api(client=None, resolved=None, timeout=None)  # type: ignore[arg-type]
    api._learn_clock(format_datetime(datetime.now(UTC) + timedelta(seconds=1), usegmt=True))
    assert api.skew == timedelta(0)
    api._learn_clock(format_datetime(datetime.now(UTC) - timedelta(minutes=10), usegmt=True))
    assert timedelta(minutes=-10, seconds=-2) < api.skew < timedelta(minutes=-9, seconds=58)
    for unreadable in ("yesterday", "", None, "Mon, 30 Nov 2026 08:00:00"):
        api._learn_clock(unreadable)
        assert timedelta(minutes=-10, seconds=-2) < api.skew < timedelta(minutes=-9, seconds=58)


def test_an_unknown_network_error_is_said_by_its_innermost_cause() -> None:
    """urllib3 wraps the cause twice (MaxRetryError, ProtocolError); the user needs the cause,
    cut at a word, not the wrappers' text cut mid-word."""
    from urllib3.exceptions import MaxRetryError, ProtocolError

    from kubectl_spark.kube.apierrors import _short

    cause = OSError("the network stack said something long and odd " * 6)
    wrapped = MaxRetryError(None, "/api", ProtocolError("Connection aborted.", cause))  # type: ignore[arg-type]
    why, lasting = _short(wrapped)
    assert why.startswith("OSError: the network stack said something") and not lasting
    assert why.endswith(" …") and len(why) <= 170 and "Max retries" not in why
    said = why.removeprefix("OSError: ").removesuffix(" …")
    assert cause.args[0].startswith(said + " "), "cut between words, never inside one"


def test_a_driver_held_by_its_init_container_says_init(kubeconfig, api, capsys) -> None:
    """Init:CrashLoopBackOff in kubectl; ls said Pending:ExitCode, hiding that Spark never ran."""
    from kubernetes import client

    core = client.CoreV1Api(api)
    labels = {"spark-role": "driver", "spark-app-selector": "spark-init", "spark-app-name": "init"}
    core.create_namespaced_pod(
        "default",
        {
            "metadata": {"name": "init-driver", "labels": labels},
            "spec": {
                "initContainers": [{"name": "fetch-jars", "image": "busybox"}],
                "containers": [{"name": "spark-kubernetes-driver", "image": "apache/spark"}],
            },
        },
        _preload_content=False,
    )
    status = {
        "phase": "Pending",
        "initContainerStatuses": [
            {
                "name": "fetch-jars",
                "restartCount": 4,
                "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                "lastState": {"terminated": {"exitCode": 2, "reason": "Error"}},
            }
        ],
        "containerStatuses": [
            {
                "name": "spark-kubernetes-driver",
                "restartCount": 0,
                "state": {"waiting": {"reason": "PodInitializing"}},
            }
        ],
    }
    core.patch_namespaced_pod_status(
        "init-driver", "default", {"status": status}, _preload_content=False
    )
    code = main(["--kubeconfig", str(kubeconfig), "ls"])
    out = capsys.readouterr().out
    assert code == 0
    row = next(line.split() for line in out.splitlines() if line.startswith("init "))
    assert row[3:7] == ["Init:ExitCode", "0/0", "0", "4"], out  # DRIVER ... RESTARTS
