"""fence / unfence / force-kill / resubmit through the real entry point, on played scenarios."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubectl_spark.cli.main import main
from kubectl_spark.kube.client import Connection, connect
from tests.command_line import ls_json, run
from tests.conftest import ScenarioCluster as Cluster


def app_of(
    capsys: pytest.CaptureFixture[str], c: Cluster, name: str = "networkwordcount"
) -> dict[str, Any]:
    apps = [a for a in ls_json(capsys, c)["items"] if a["name"] == name]
    return max(apps, key=lambda a: a["attempts"][0]["createdAt"] if a["attempts"] else "")


def test_s2_fence_then_force_kill_then_heal(cluster, capsys) -> None:
    c = cluster("s2-partition")
    c.player.play()
    first = app_of(capsys, c)["attempts"][0]
    # the healthy attempt is not the one to fence: refused, and the suspect is named
    code, out, err = run(capsys, c, "fence", "networkwordcount/2", "--yes")
    assert code == 1 and "did you mean networkwordcount/1 (Lost)?" in err
    code, out, err = run(capsys, c, "fence", "networkwordcount/1", "--yes")
    assert code == 0, err
    assert "fence networkwordcount/1: done" in out
    assert "NetworkPolicy: denies the fenced pods' traffic only where the CNI enforces" in out
    policy = c.world.client.get(
        f"/apis/networking.k8s.io/v1/namespaces/default/networkpolicies/kubectl-spark-fence-{first['uid']}"
    )
    assert policy is not None and policy["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert policy["spec"]["podSelector"] == {
        "matchLabels": {"kubectl-spark.io/fence-id": first["uid"]}
    }
    driver = c.world.client.get(f"/api/v1/namespaces/default/pods/{first['driverPod']}")
    assert driver is not None and driver["metadata"]["labels"]["kubectl-spark.io/fenced"] == "true"
    lease = c.world.client.get(
        "/apis/coordination.k8s.io/v1/namespaces/default/leases/kubectl-spark-networkwordcount"
    )
    assert (
        lease is not None
        and lease["spec"]["leaseTransitions"] == 1
        and lease["spec"]["holderIdentity"].startswith("networkwordcount/2/")
    )
    events = c.world.client.list("/api/v1/namespaces/default/events", fieldSelector="reason=Fenced")
    assert len(events) == 1 and events[0]["involvedObject"]["uid"] == first["uid"]
    app = app_of(capsys, c)
    assert app["attempts"][0]["state"] == "Fenced" and app["attempts"][0]["fenced"] is True
    assert not {a["type"] for a in app["alerts"]} & {"SplitBrain"}
    # Its executors were stopped; the fence's own Events still tell them (their pods are gone).
    stopped = app["attempts"][0]["executors"]
    assert stopped and {(e["state"], e["source"], e["reason"]["message"]) for e in stopped} == {
        ("Gone", "events", "deleted by kubectl spark fence")
    }
    assert any(h["kind"] == "Fenced" for h in app["history"])
    # again: a no-op that says so
    code, out, _ = run(capsys, c, "fence", "networkwordcount/1", "--yes")
    assert code == 0 and "nothing to do: attempt 1 is already fenced (epoch 1)" in out

    # Suspending the Job would delete attempt 2, its active pod: refused, nothing changed.
    code, out, err = run(capsys, c, "force-kill", "networkwordcount/1", "--no-replace", "--yes")
    assert code != 0 and "that is attempt 2 (Running)" in err and len(err.splitlines()) == 1
    (job,) = c.world.client.list("/apis/batch/v1/namespaces/default/jobs")
    assert not job["spec"].get("suspend")
    assert c.world.client.get(f"/api/v1/namespaces/default/pods/{first['driverPod']}") is not None
    code, out, err = run(capsys, c, "force-kill", "networkwordcount/1", "--yes")
    assert code == 0, err
    assert "Immediate deletion does not wait for confirmation" in err
    assert (
        "already runs attempt 2 in place of attempt 1: deleting these pods starts no other" in out
    )
    c.world.step(3)
    assert c.world.client.get(f"/api/v1/namespaces/default/pods/{first['driverPod']}") is None
    second = app_of(capsys, c)["attempts"][-1]
    assert second["state"] == "Running" and len(second["executors"]) == 2
    c.world.heal_node("node-a")
    c.world.step(30)
    pods = c.world.client.list("/api/v1/namespaces/default/pods")
    assert first["uid"] not in {p["metadata"]["uid"] for p in pods}
    assert not any(
        p["metadata"]["labels"].get("kubectl-spark.io/fence-id") for p in pods
    )  # nothing of attempt 1 came back
    assert app_of(capsys, c)["attempts"][-1]["state"] == "Running"
    code, out, _ = run(capsys, c, "force-kill", "networkwordcount/1", "--yes")
    assert code == 0 and "nothing to do" in out


def test_s3_force_kill_with_detach_volumes_unblocks_attempt_2(cluster, capsys) -> None:
    c = cluster("s3-rwo-volume")
    c.player.play()
    code, out, err = run(
        capsys,
        c,
        "force-kill",
        "streaming-checkpoint/1",
        "--detach-volumes",
        "--node-down",
        "--yes",
    )
    assert code == 0, err
    assert "delete volumeattachments.storage.k8s.io" in out and "can corrupt its data" in err
    c.world.step(5)
    app = app_of(capsys, c, "streaming-checkpoint")
    assert app["attempts"][-1]["state"] == "Running"
    (va,) = c.world.client.list("/apis/storage.k8s.io/v1/volumeattachments")
    assert va["spec"]["nodeName"] == app["attempts"][-1]["node"]


def test_s7_resubmit_gets_executors_without_collision(cluster, capsys) -> None:
    """The resubmitted Job's pods each take spark.app.id and the executor prefix from their own
    name ($(POD_NAME)): Spark does not count attempt 1's fenced executors as its own, and no
    later retry of the new Job reuses a fixed prefix."""
    c = cluster("s7-name-collision")
    c.player.play()
    # One app id and one fixed prefix across attempts: attempt 2 counts attempt 1's executors.
    assert "SharedAppId" in {a["type"] for a in app_of(capsys, c)["alerts"]}
    assert run(capsys, c, "fence", "networkwordcount/1", "--keep-executors", "--yes")[0] == 0
    assert (
        run(capsys, c, "force-kill", "networkwordcount/2", "--force", "--no-replace", "--yes")[0]
        == 0
    )
    c.world.step(2)  # the Job controller drops the job-tracking finalizer of the killed driver
    code, out, err = run(capsys, c, "resubmit", "networkwordcount", "--dry-run", "-o", "yaml")
    assert code == 0, err
    assert "kind: Job" in out and "spark.kubernetes.executor.podNamePrefix=$(POD_NAME)" in out
    assert "spark.app.id=$(POD_NAME)" in out and "fieldPath: metadata.name" in out
    assert "spark-app-selector" not in out  # a label cannot be per pod
    code, out, err = run(capsys, c, "resubmit", "networkwordcount", "--yes")
    assert code == 0, err
    c.world.step(8)
    fresh = app_of(capsys, c)
    last = fresh["attempts"][-1]
    assert last["state"] == "Running"
    running = [e for e in last["executors"] if e["state"] == "Running"]
    assert len(running) == 2  # asked for, and created without a collision
    # Named, and selected by Spark, after the new driver pod itself.
    assert all(e["pod"].startswith(last["driverPod"] + "-exec-") for e in running)
    pods = {p["metadata"]["name"]: p for p in c.world.find_pods("default", spark_role="executor")}
    assert {pods[e["pod"]]["metadata"]["labels"]["spark-app-selector"] for e in running} == {
        last["driverPod"]
    }
    assert not {"NameCollision", "SharedAppId"} & {a["type"] for a in fresh["alerts"]}


def test_resubmit_refuses_while_the_old_job_can_still_start_attempts(cluster, capsys) -> None:
    """Every attempt fenced, but their Job neither finished nor suspended: when a fenced driver
    ends, the Job starts another attempt beside the resubmitted one."""
    c = cluster("s2-partition")
    c.player.play()
    for n in (1, 2):
        code, _, err = run(capsys, c, "fence", f"networkwordcount/{n}", "--force", "--yes")
        assert code == 0, err
    c.server.clear_audit()
    code, _, err = run(capsys, c, "resubmit", "networkwordcount", "--yes")
    assert code == 1 and "is neither finished nor suspended" in err
    assert "force-kill networkwordcount/2 --no-replace" in err
    assert c.server.audit_writes() == []
    code, out, err = run(capsys, c, "resubmit", "networkwordcount", "--force", "--dry-run")
    assert code == 0 and "create jobs.batch" in out and "neither finished nor suspended" in err
    # the advice works: the Job suspended, resubmit goes ahead
    code, _, err = run(capsys, c, "force-kill", "networkwordcount/2", "--no-replace", "--yes")
    assert code == 0, err
    code, _, err = run(capsys, c, "resubmit", "networkwordcount", "--yes")
    assert code == 0, err


def test_safety_healthy_refused_and_server_dry_run_writes_nothing(cluster, capsys) -> None:
    c = cluster("s6-driver-restarts")
    c.player.play_until(30)
    c.server.clear_audit()
    code, _, err = run(capsys, c, "force-kill", "restarting-driver/1", "--yes")
    assert code == 1 and "looks healthy" in err and "--force" in err
    code, out, err = run(
        capsys, c, "force-kill", "restarting-driver/1", "--force", "--dry-run=server"
    )
    assert code == 0, err
    assert "(server dry run) accepted: delete pods" in out
    code, _, err = run(capsys, c, "fence", "restarting-driver/1", "--yes")
    assert code == 1 and "looks healthy" in err and "--force" in err
    code, _, err = run(capsys, c, "fence", "restarting-driver/1", "--force")
    assert code == 1 and "refusing to act without confirmation" in err
    assert c.server.audit_writes() == []
    assert app_of(capsys, c, "restarting-driver")["attempts"][0]["state"] == "Running"


def test_an_ended_attempt_is_neither_fenced_nor_killed(cluster, capsys) -> None:
    """S5's last attempt failed (exit 1) and has no executors left: its driver cannot act again,
    so there is nothing to fence or kill, and its pod (exit code, log) stays as evidence."""
    c = cluster("s5-operator-retries")
    c.player.play()
    c.server.clear_audit()
    for action in ("fence", "force-kill"):
        code, out, err = run(capsys, c, action, "pi/3", "--yes")
        assert code == 0, err
        assert out.startswith(f"{action}: nothing to do: attempt 3 has ended (Failed, ExitCode)")
        assert "its driver pod pi-driver is kept as evidence" in out
    assert c.server.audit_writes() == []
    assert app_of(capsys, c, "pi")["attempts"][-1]["driverPod"] == "pi-driver"


def test_safety_uid_race_touches_only_the_pods_the_plan_meant(cluster, capsys) -> None:
    from kubectl_spark.core.analyze import analyze
    from kubectl_spark.core.plans import KillContext, force_kill_plan
    from kubectl_spark.kube import actions, snapshot

    c = cluster("s2-partition")
    c.player.play()
    with connect(Connection(kubeconfig=str(c.kubeconfig))) as api:
        (app,) = analyze(snapshot.read(api, "default")).apps
        attempt = app.attempts[0]
        plan = force_kill_plan(
            app,
            attempt,
            KillContext(node_reachable=False),
            force=False,
            detach_volumes=False,
            out_of_service=False,
            no_replace=False,
            now="2026-01-01T00:00:00Z",
            actor="test",
            node_down=True,
        )
        # between plan and apply the driver (the plan's first pod: it goes before its
        # executors) is deleted and recreated under the same name
        victim = str(attempt.driver_pod)
        old = c.world.client.get(f"/api/v1/namespaces/default/pods/{victim}")
        assert old is not None
        c.world.client.delete(f"/api/v1/namespaces/default/pods/{victim}", grace=0)
        c.world.client.create(
            "/api/v1/namespaces/default/pods",
            {
                "metadata": {"name": victim, "labels": old["metadata"]["labels"]},
                "spec": {"containers": [{"name": "c", "image": "i:1"}]},
            },
        )
        c.server.clear_audit()
        report = actions.apply(api, plan)
    # The driver the plan meant is gone: each step about it is already done (issue 46: the
    # plan goes on), and the pod that took its name is never touched (the UID precondition).
    assert report.failed is None, report.failed
    about_victim = [(op.verb, why) for op, why in report.already if op.name == victim]
    assert about_victim and all("another uid: not touched" in why for _, why in about_victim)
    assert all(op.name != victim for op in report.applied)
    recreated = c.world.client.get(f"/api/v1/namespaces/default/pods/{victim}")
    assert recreated is not None and recreated["metadata"]["uid"] != old["metadata"]["uid"]
    assert "kubectl-spark.io/action" not in (recreated["metadata"].get("annotations") or {})
    for executor in attempt.executors:  # the attempt's own pods, by UID: deleted
        gone = c.world.client.get(f"/api/v1/namespaces/default/pods/{executor.pod}")
        assert gone is None or gone["metadata"].get("deletionTimestamp"), executor.pod


def test_safety_forbidden_writes_nothing(cluster, capsys, tmp_path: Path) -> None:
    c = cluster("s2-partition")
    c.player.play()
    limited = c.server.write_kubeconfig(
        tmp_path / "limited", user="oncall", token=c.server.add_user("oncall")
    )
    c.server.set_policy(
        {
            "rules": [
                {"effect": "deny", "users": ["oncall"], "verbs": ["delete"], "resources": ["pods"]}
            ]
        }
    )
    c.server.clear_audit()
    code = main(
        ["--kubeconfig", str(limited), "force-kill", "networkwordcount/1", "--node-down", "--yes"]
    )
    err = capsys.readouterr().err
    assert code == 1
    assert "missing delete pods in namespace default" in err and "nothing was changed" in err
    assert c.server.audit_writes() == []


def test_safety_two_concurrent_fences_one_epoch_wins(cluster, capsys) -> None:
    from kubectl_spark.core.analyze import analyze
    from kubectl_spark.core.plans import fence_plan
    from kubectl_spark.kube import actions, snapshot

    c = cluster("s2-partition")
    c.player.play()
    with connect(Connection(kubeconfig=str(c.kubeconfig))) as api:
        (app,) = analyze(snapshot.read(api, "default")).apps
        plans = [
            fence_plan(
                app,
                app.attempts[0],
                lease=None,
                allow=None,
                keep_executors=True,
                now="2026-01-01T00:00:00Z",
                actor=who,
            )
            for who in ("alice", "bob")
        ]
        first, second = (actions.apply(api, p) for p in plans)
    assert first.failed is None
    assert (
        second.failed is not None and getattr(second.failed[1], "status", None) == 409
    )  # AlreadyExists/Conflict
    lease = c.world.client.get(
        "/apis/coordination.k8s.io/v1/namespaces/default/leases/kubectl-spark-networkwordcount"
    )
    assert lease is not None and lease["spec"]["leaseTransitions"] == 1
    assert (
        len(c.world.client.list("/api/v1/namespaces/default/events", fieldSelector="reason=Fenced"))
        == 1
    )


def test_plan_as_json_and_unfence(cluster, capsys) -> None:
    c = cluster("s2-partition")
    c.player.play()
    code, out, _ = run(capsys, c, "fence", "networkwordcount/1", "--dry-run", "-o", "json")
    plan = json.loads(out)
    assert plan["kind"] == "ActionPlan" and [o["verb"] for o in plan["operations"]][:6] == [
        "create",  # the admission policy and its binding first: they stop API writes at once
        "create",
        "wait",  # until the server refuses a dry-run pod of the attempt: the policy is at work
        "patch",
        "patch",
        "patch",
    ]
    probe = plan["operations"][2]["body"]["refusedCreate"]
    assert (
        probe["metadata"]["ownerReferences"][0]["uid"]
        == plan["operations"][0]["body"]["metadata"]["labels"]["kubectl-spark.io/fence-id"]
    )
    writes = [o for o in plan["operations"] if o["verb"] != "wait"]
    assert all(o["preconditions"]["uid"] for o in writes if o["resource"] == "pods")
    assert run(capsys, c, "fence", "networkwordcount/1", "--keep-executors", "--yes")[0] == 0
    code, out, err = run(capsys, c, "unfence", "networkwordcount/1", "--yes")
    assert code == 0, err
    assert app_of(capsys, c)["attempts"][0]["fenced"] is False
    assert (
        c.world.client.list("/apis/networking.k8s.io/v1/namespaces/default/networkpolicies") == []
    )
    admission = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolic"
    assert c.world.client.list(admission + "ies") == []
    assert c.world.client.list(admission + "ybindings") == []


def test_s1_force_kill_out_of_service_lets_kubernetes_clean_up(cluster, capsys) -> None:
    c = cluster("s1-node-shutdown")
    c.player.play_until(450)
    code, _out, err = run(
        capsys, c, "force-kill", "networkwordcount/1", "--out-of-service", "--yes"
    )
    assert code == 0, err
    assert "only apply the out-of-service taint after confirming node node-a is powered off" in err
    node = c.world.client.get("/api/v1/nodes/node-a")
    assert node is not None and any(
        t["key"] == "node.kubernetes.io/out-of-service" for t in node["spec"]["taints"]
    )
    c.world.step(5)
    app = app_of(capsys, c)
    assert [a["state"] for a in app["attempts"]][-1] == "Running"
    assert not {"SplitBrain", "ZombieDriver"} & {a["type"] for a in app["alerts"]}
    assert any(h["kind"] == "ForceKilled" for h in app["history"])


def ls_rows(capsys, c) -> list[dict]:
    code, out, err = run(capsys, c, "ls", "-o", "json")
    assert code == 0, err
    return json.loads(out)["items"]


def test_resubmit_a_bare_driver_pod_with_copies_and_a_new_prefix(cluster, capsys) -> None:
    c = cluster("s6-driver-restarts")
    c.player.play_until(30)
    code, _, err = run(capsys, c, "resubmit", "restarting-driver", "--yes")
    assert code == 1 and "is Running and not fenced" in err
    (driver,) = c.world.find_pods("default", spark_role="driver")
    c.world.exit_container(
        "default", driver["metadata"]["name"], 0
    )  # the driver finishes; its pod stays, Succeeded
    c.world.step(2)
    code, out, err = run(capsys, c, "resubmit", "restarting-driver", "--dry-run", "-o", "json")
    assert code == 0, err
    planned = {  # what it would create, as kubectl's dry run prints it: a List
        (f"{i['kind'].lower()}s", i["metadata"]["name"]) for i in json.loads(out)["items"]
    }
    code, out, err = run(capsys, c, "resubmit", "restarting-driver", "--yes")
    assert code == 0, err
    assert "create configmaps" in out and "create services" in out
    c.world.step(8)
    app = app_of(capsys, c, "restarting-driver")
    new = app["attempts"][-1]
    # issue 48: what the dry run showed is what the run created
    assert ("pods", new["driverPod"]) in planned, (new["driverPod"], planned)
    for resource in ("configmaps", "services"):
        made = {
            o["metadata"]["name"]
            for o in c.world.client.list(f"/api/v1/namespaces/default/{resource}")
        }
        assert {n for r, n in planned if r == resource} <= made
    assert new["state"] == "Running" and new["driverPod"].rsplit("-r", 1)[0].endswith("-driver")
    prefixes = {e["pod"].rsplit("-exec-", 1)[0] for e in new["executors"]}
    assert (
        prefixes
        and all(p.startswith("restarting-driver-") for p in prefixes)
        and len(new["executors"]) == 2
    )
    services = c.world.client.list("/api/v1/namespaces/default/services")
    copy = next(
        s
        for s in services
        if "-r" in s["metadata"]["name"].rsplit("-driver-svc", 1)[-1]
        or s["spec"]["selector"].get("kubectl-spark.io/resubmission")
    )
    assert copy["spec"]["selector"]["kubectl-spark.io/resubmission"]
    assert c.world.client.list(
        "/api/v1/namespaces/default/events", fieldSelector="reason=Resubmitted"
    )
    # Issue 24: a working driver of its own: a new app id (Spark selects executors by it), the
    # ConfigMap copies mounted, and their properties naming the new pod, id and Service.
    pod = c.world.client.get(f"/api/v1/namespaces/default/pods/{new['driverPod']}")
    new_id = pod["metadata"]["labels"]["spark-app-selector"]
    assert new_id != driver["metadata"]["labels"]["spark-app-selector"]
    copies = [
        m
        for m in c.world.client.list("/api/v1/namespaces/default/configmaps")
        if m["metadata"].get("annotations", {}).get("kubectl-spark.io/action") == "resubmit"
    ]
    assert copies
    for copied in copies:
        text = "".join(copied["data"].values())
        assert f"spark.app.id={new_id}" in text
        assert f"spark.kubernetes.driver.pod.name={new['driverPod']}" in text
    rows = [a for a in ls_rows(capsys, c) if a["name"] == "restarting-driver"]
    assert len(rows) == 1 and len(rows[0]["attempts"]) == 2  # one application, two attempts


def test_s5_resubmit_reruns_the_spark_application(cluster, capsys) -> None:
    c = cluster("s5-operator-retries")
    c.player.play()
    assert app_of(capsys, c, "pi")["state"] == "Failed"
    code, out, err = run(capsys, c, "resubmit", "pi", "--yes")
    assert code == 0, err
    assert "patch sparkapplications.sparkoperator.k8s.io default/pi" in out
    c.world.step(10)
    app = app_of(capsys, c, "pi")
    assert app["state"] == "Running"
    # issue 48: the operator resets its status on the re-run; the timeline keeps the resubmit,
    # and its Event says what it replaced
    code, out, err = run(capsys, c, "history", "pi", "-o", "json")
    assert code == 0, err
    (resubmitted,) = [h for h in json.loads(out)["items"] if h["kind"] == "Resubmitted"]
    assert resubmitted["time"] and "after 3 attempts, the last Failed: " in resubmitted["message"]
    sparkapp = c.world.client.get(
        "/apis/sparkoperator.k8s.io/v1beta2/namespaces/default/sparkapplications/pi"
    )
    assert sparkapp is not None and sparkapp["status"]["executionAttempts"] == 1
    # issue 46: nothing fixed for the operator to re-run: each run draws its own names.
    assert "spark.kubernetes.executor.podNamePrefix" not in sparkapp["spec"]["sparkConf"]
    assert len(app["attempts"][-1]["executors"]) == 2
    # Two operator retries later (each run fails after a minute; onFailureRetries 2): every run
    # named its executors its own way, so none can collide with an earlier run's pods (which
    # outlive their driver, owned by the SparkApplication too: spark-operator#2961).
    prefixes: set[str] = set()
    for _ in range(300):
        c.world.step(1)
        pods = c.world.client.list(
            "/api/v1/namespaces/default/pods", labelSelector="spark-role=executor"
        )
        prefixes |= {p["metadata"]["name"].rsplit("-exec-", 1)[0] for p in pods}
        sparkapp = c.world.client.get(
            "/apis/sparkoperator.k8s.io/v1beta2/namespaces/default/sparkapplications/pi"
        )
        if sparkapp is not None and sparkapp["status"]["executionAttempts"] >= 3 and len(pods) == 2:
            break
    assert sparkapp is not None and sparkapp["status"]["executionAttempts"] == 3, sparkapp
    assert len(prefixes) == 3, prefixes
    assert "NameCollision" not in {a["type"] for a in app_of(capsys, c, "pi")["alerts"]}
