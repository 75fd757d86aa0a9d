"""Two in-cluster recorders with the rendered RBAC: one leads, the other takes over and loses nothing.

Each recorder is a process with a pod's environment (KUBERNETES_SERVICE_HOST/PORT and a
service-account folder holding a bound token from the TokenRequest API, the CA and the
namespace), the ServiceAccount and RBAC of ``kubectl spark recorder``, and one store (the
claim both replicas mount). S9's losses leave no pod behind (Spark deletes each within
seconds): one happens before the leader is killed, one while no recorder leads, one after the
standby took over; ``history`` afterwards tells all three. Their ``-v=6`` requests show every
rendered rule used, and none refused.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kubectl_spark.core.recorder_manifests import DELEGATION_RULES, LEASE_RULES, NAME, RULES
from kubectl_spark.sim.client import Client
from tests.stages import Stage
from tests.waiting import wait_until

pytestmark = pytest.mark.slow
NS = "kubectl-spark"
LEASE = f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases/kubectl-spark-recorder"
REQUEST = re.compile(r"\] (GET|POST|PUT|PATCH|DELETE) https?://[^/]+(/\S*) (\d{3})")


# The test plane runs without kube-apiserver's endpoint reconciler (it listens on loopback):
# the NetworkPolicy's API server address is given, as on a managed control plane.
APISERVER = ("--apiserver-cidr", "192.0.2.10")


def _apply_rbac(here: Any, tmp_path: Path) -> list[str]:
    """`kubectl spark recorder` applies its manifests with a plan (the namespace first); the
    recorders here are processes, so its Deployment's pods only stand by. Returns the
    Deployment's command line."""
    from kubectl_spark.cli.main import main

    kubeconfig = str(here.write_kubeconfig(tmp_path / "admin-kubeconfig"))
    out = subprocess.run(
        [sys.executable, "-m", "kubectl_spark.cli.main", "--kubeconfig", kubeconfig, "recorder",
         "-n", NS, "--dry-run", *APISERVER],
        capture_output=True, text=True, check=True, env={**os.environ, "HOME": str(tmp_path)},
    ).stdout.splitlines()  # fmt: skip
    assert out[0] == f"Plan: recorder {NAME} in namespace {NS}"
    assert out[1].startswith(f"  1. create namespaces {NS}")
    # issue 46: a server dry run says what the server accepted, and that the steps inside the
    # namespace it would create could not be checked (a dry run stores no namespace).
    dry = subprocess.run(
        [sys.executable, "-m", "kubectl_spark.cli.main", "--kubeconfig", kubeconfig, "recorder",
         "-n", NS, "--dry-run=server", *APISERVER],
        capture_output=True, text=True, check=False, env={**os.environ, "HOME": str(tmp_path)},
    )  # fmt: skip
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert f"(server dry run) accepted: create namespaces {NS}" in dry.stdout, dry.stdout
    assert f"not checked: its namespace {NS} is made by an earlier step" in dry.stdout
    assert "nothing was changed" in dry.stdout.splitlines()[-1], dry.stdout
    probe = Client(here.url, here.token, here.ca_pem)
    try:
        assert probe.get(f"/api/v1/namespaces/{NS}") is None
    finally:
        probe.close()
    assert (
        main(
            [
                "--kubeconfig",
                kubeconfig,
                "recorder",
                "-n",
                NS,
                "--replicas",
                "1",
                "--yes",
                *APISERVER,
            ]
        )
        == 0
    )
    assert (
        main(["--kubeconfig", kubeconfig, "recorder", "-n", NS, "--yes", *APISERVER]) != 0
    )  # exists
    client = Client(here.url, here.token, here.ca_pem)
    made = client.get(f"/apis/apps/v1/namespaces/{NS}/deployments/{NAME}")
    client.close()
    assert made is not None
    return list(made["spec"]["template"]["spec"]["containers"][0]["args"])


def _service_account(admin: Client, bed: Any, folder: Path) -> dict[str, str]:
    """A pod's mounted service account: a bound token (TokenRequest), the CA, the namespace."""
    answer = admin.create(
        f"/api/v1/namespaces/{NS}/serviceaccounts/{NAME}/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
         "spec": {"expirationSeconds": 3600}},
    )  # fmt: skip
    folder.mkdir()
    (folder / "token").write_text(answer["status"]["token"])
    (folder / "ca.crt").write_bytes(bed.ca_pem)
    (folder / "namespace").write_text(NS)
    host, _, port = bed.url.removeprefix("https://").rpartition(":")
    return {
        "KUBERNETES_SERVICE_HOST": host,
        "KUBERNETES_SERVICE_PORT": port,
        "KUBECTL_SPARK_SERVICEACCOUNT_DIR": str(folder),
    }


def _recorder(
    name: str, deployed: list[str], env: dict[str, str], db: Path, log: Any
) -> subprocess.Popen[bytes]:
    """The Deployment's own command line, with this process's store, port and name."""
    args = list(deployed)
    args[args.index("--history-db") + 1] = str(db)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        args[args.index("--port") + 1] = str(sock.getsockname()[1])
    command = [sys.executable, "-m", "kubectl_spark.cli.main", *args, "--identity", name,
               "--lease-duration", "6", "-v=6"]  # fmt: skip
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=log)


def _notebook(admin: Client) -> None:
    """A client-mode driver in a pod of its own (no spark-role label) and its executor: the
    recorder reads such an owner by name (the rule's get on pods)."""
    pods = "/api/v1/namespaces/default/pods"
    container = [{"name": "c", "image": "apache/spark:3.5.1"}]
    owner = admin.create(
        pods, {"metadata": {"name": "notebook"}, "spec": {"containers": container}}
    )
    ref = {"apiVersion": "v1", "kind": "Pod", "name": "notebook",
           "uid": owner["metadata"]["uid"], "controller": True}  # fmt: skip
    labels = {
        "spark-role": "executor",
        "spark-app-selector": "spark-notebook",
        "spark-exec-id": "1",
    }
    admin.create(
        pods,
        {"metadata": {"name": "notebook-exec-1", "labels": labels, "ownerReferences": [ref]},
         "spec": {"containers": container}},
    )  # fmt: skip


def _holder(admin: Client) -> str | None:
    lease = admin.get(LEASE)
    return None if lease is None else (lease.get("spec") or {}).get("holderIdentity")


def _rules_used(log: str) -> tuple[set[tuple[str, str, str]], set[tuple[str, str, str]]]:
    """(apiGroup, resource, verb) of every request a recorder's -v=6 lines show, and of those
    answered 403."""
    used, refused = set(), set()
    for method, path, status in REQUEST.findall(log):
        url, _, query = path.partition("?")
        parts = [p for p in url.split("/") if p]
        group, rest = ("", parts[2:]) if parts[0] == "api" else (parts[1], parts[3:])
        if rest[:1] == ["namespaces"] and len(rest) > 2:
            rest = rest[2:]
        resource, name, sub = (
            rest[0],
            rest[1] if len(rest) > 1 else "",
            rest[2] if len(rest) > 2 else "",
        )
        verb = {"POST": "create", "PUT": "update"}.get(method) or (
            "get" if name else "watch" if "watch=" in query else "list"
        )
        rule = (group, f"{resource}/{sub}" if sub else resource, verb)
        used.add(rule)
        if status == "403":
            refused.add(rule)
    return used, refused


def test_the_standby_takes_over_and_no_loss_is_missed(control_plane: Any, tmp_path: Path) -> None:
    """On the real control plane: its RBAC is enforced there (the emulator serves no RBAC API)."""
    from tests.beds import RealBed, reset

    real = RealBed(control_plane)
    s = Stage(real, "s9-deleted-executors", tmp_path)
    admin = Client(real.url, real.token, real.ca_pem)
    try:
        _failover(s, real, admin, tmp_path)
    finally:
        # Its Deployment would make its pods again while the reset waits for them to go.
        admin.delete(f"/apis/apps/v1/namespaces/{NS}/deployments/{NAME}", propagation="Foreground")
        for kind in ("clusterrolebindings", "clusterroles"):
            admin.delete(f"/apis/rbac.authorization.k8s.io/v1/{kind}/{NAME}-{NS}")
            s.close()
        real.close()
        reset(control_plane)


def _failover(s: Stage, here: Any, admin: Client, tmp_path: Path) -> None:
    deployed = _apply_rbac(here, tmp_path)
    assert deployed[:3] == ["record", "--in-cluster", "--leader-elect"]
    env = {
        k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")
    }
    env.update(HOME=str(tmp_path), XDG_STATE_HOME=str(tmp_path / "state"))
    env.update(_service_account(admin, here, tmp_path / "sa"))
    db = tmp_path / "store" / "history.db"
    db.parent.mkdir()
    logs = {n: tmp_path / f"{n}.log" for n in ("recorder-a", "recorder-b")}
    handles = {n: logs[n].open("wb") for n in logs}
    procs = {n: _recorder(n, deployed, env, db, handles[n]) for n in logs}
    try:
        wait_until(lambda: _holder(admin) in procs, "a leader", seconds=60)
        leader = str(_holder(admin))
        standby = next(n for n in procs if n != leader)
        _notebook(admin)
        s.do("submit", "vanishing")
        s.until(
            "four executors running",
            lambda: len(s.running(spark_role="executor", spark_app_name="vanishing")) == 4,
        )

        s.do("oom_kill", {"app": "vanishing", "exec": 1})
        s.until("executor 1's pod deleted by Spark", lambda: s.executor_gone("vanishing", "1"))
        s.settle(3)
        procs[leader].send_signal(signal.SIGKILL)  # no release: the Lease runs out
        procs[leader].wait(10)
        s.do("evict", {"app": "vanishing", "exec": 2})  # while nobody leads
        s.until("executor 2's pod deleted by Spark", lambda: s.executor_gone("vanishing", "2"))
        wait_until(lambda: _holder(admin) == standby, "the standby's takeover", seconds=60)
        s.do("oom_kill", {"app": "vanishing", "exec": 3})
        s.until("executor 3's pod deleted by Spark", lambda: s.executor_gone("vanishing", "3"))
        s.settle(3)
        time.sleep(3)  # the recorder's next batch
        procs[standby].send_signal(signal.SIGTERM)
        assert procs[standby].wait(30) == 0
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        for handle in handles.values():
            handle.close()

    reader = {**env, "KUBECTL_SPARK_SERVICEACCOUNT_DIR": str(tmp_path / "sa")}
    out = subprocess.run(
        [sys.executable, "-m", "kubectl_spark.cli.main", "history", "vanishing", "-n", "default",
         "--history-db", str(db), "-o", "json"],
        capture_output=True, text=True, env=reader, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    lost = {
        h["executor"]: h["message"].split(":", 1)[1].split(" — ")[0].strip()
        for h in json.loads(out.stdout)["items"]
        if h["kind"] == "ExecutorLost"
    }
    assert {k: lost.get(k) for k in ("1", "2", "3")} == {
        "1": "OOMKilled",
        "2": "Evicted",
        "3": "OOMKilled",
    }, lost

    used, refused = set(), set()
    for log in logs.values():
        found = _rules_used(log.read_text(errors="replace"))
        used |= found[0]
        refused |= found[1]
    # The pod proxy to a simulated driver's IP is refused by this machine's network sandbox
    # ("resolve_deny: denied destination"), after the API server authorized it: RBAC's own
    # answer for it is asked directly.
    assert refused <= {("", "pods/proxy", "get")}, sorted(refused)
    sa = Client(here.url, (tmp_path / "sa" / "token").read_text(), here.ca_pem)
    review = sa.create(
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        {"spec": {"resourceAttributes": {"namespace": "default", "verb": "get",
                                         "resource": "pods", "subresource": "proxy"}}},
    )  # fmt: skip
    assert review["status"]["allowed"], review["status"]
    sa.close()
    rendered = {
        (group, resource, verb)
        for groups, resources, verbs in (*RULES, *LEASE_RULES)
        for group in groups
        for resource in resources
        for verb in verbs
    }
    assert rendered - used == set(), f"rendered but never used: {sorted(rendered - used)}"
    delegated = {
        (group, resource, verb)
        for groups, resources, verbs in DELEGATION_RULES
        for group in groups
        for resource in resources
        for verb in verbs
    }  # granted by the bindings to system:auth-delegator and the front-proxy trust's reader
    assert {u for u in used if u[:2] != ("", "namespaces")} <= rendered | delegated, sorted(
        used - rendered - delegated
    )
