"""The real kubectl, unchanged, against the emulator: the proof that it speaks kube-apiserver."""

from __future__ import annotations

import json
import ssl
import subprocess
import time
from typing import Any

import pytest
from kubernetes import client

from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer
from tests.beds import Bed

pytestmark = pytest.mark.kubectl

DRIVER = """
apiVersion: v1
kind: Pod
metadata:
  name: pi-driver
  labels: {spark-role: driver, spark-app-selector: spark-0001, spark-app-name: pi}
spec:
  containers: [{name: spark-kubernetes-driver, image: "apache/spark:3.5.1"}]
"""


def executor(name: str, exec_id: int) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {
                "spark-role": "executor",
                "spark-app-selector": "spark-0001",
                "spark-exec-id": str(exec_id),
            },
        },
        "spec": {
            "containers": [{"name": "spark-kubernetes-executor", "image": "apache/spark:3.5.1"}]
        },
    }


def bind(api, name: str, node: str, namespace: str = "default") -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name},
        "target": {"kind": "Node", "name": node},
    }
    client.CoreV1Api(api).create_namespaced_pod_binding(
        name, namespace, body, _preload_content=False
    )


def _lines_until(watch: subprocess.Popen[str], word: str, seconds: float = 10) -> list[str]:
    """A watching kubectl's lines, up to the first that holds ``word`` (or the deadline)."""
    lines: list[str] = []
    deadline = time.monotonic() + seconds
    assert watch.stdout is not None
    while time.monotonic() < deadline and not any(word in line for line in lines):
        lines.append(watch.stdout.readline())
    return lines


def test_create_and_get_executors_as_json(kubectl, api) -> None:
    kubectl("create", "--validate=false", "-f", "-", input=DRIVER)
    for i in (1, 2):
        kubectl(
            "create", "--validate=false", "-f", "-", input=json.dumps(executor(f"pi-exec-{i}", i))
        )
    out = kubectl("get", "pods", "-A", "-l", "spark-role=executor", "-o", "json").stdout
    doc = json.loads(out)
    assert doc["kind"] == "List"
    assert sorted(p["metadata"]["name"] for p in doc["items"]) == ["pi-exec-1", "pi-exec-2"]
    assert all(p["status"]["phase"] == "Pending" for p in doc["items"])
    # set-based selectors go through unchanged
    out = kubectl(
        "get", "pods", "-l", "spark-role in (driver),spark-app-selector", "-o", "name"
    ).stdout
    assert out.split() == ["pod/pi-driver"]


def test_create_and_apply_validate_through_the_servers_openapi(kubectl) -> None:
    """kubectl's default --validate=strict finds fieldValidation in /openapi/v3 and uses it."""
    proc = kubectl("create", "-f", "-", "-v=6", input=DRIVER)
    assert "pod/pi-driver created" in proc.stdout
    assert "/openapi/v3/api/v1?hash=" in proc.stderr
    assert "fieldValidation=Strict" in proc.stderr
    changed = DRIVER.replace("spark-app-name: pi}", "spark-app-name: pi, color: blue}")
    assert kubectl("apply", "-f", "-", input=changed).stdout.strip() == "pod/pi-driver configured"
    assert kubectl("apply", "-f", "-", input=changed).stdout.strip() == "pod/pi-driver unchanged"
    labels = json.loads(kubectl("get", "pod", "pi-driver", "-o", "json").stdout)["metadata"][
        "labels"
    ]
    assert labels["color"] == "blue"
    app = "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: pi}\nspec: {mode: cluster}\n"
    assert "created" in kubectl("apply", "-f", "-", input=app).stdout
    assert (
        "configured" in kubectl("apply", "-f", "-", input=app.replace("cluster", "client")).stdout
    )


def test_watch_receives_a_change_made_by_another_client(kubectl, api) -> None:
    kubectl("create", "--validate=false", "-f", "-", input=DRIVER)
    watch = kubectl.popen(
        "get",
        "pods",
        "-w",
        "--output-watch-events",
        "-o",
        "custom-columns=EVENT:.type,NAME:.object.metadata.name,COLOR:.object.metadata.labels.color",
    )
    try:
        time.sleep(1.5)  # let kubectl list and start watching
        client.CoreV1Api(api).patch_namespaced_pod(
            "pi-driver", "default", {"metadata": {"labels": {"color": "blue"}}}
        )
        client.CoreV1Api(api).delete_namespaced_pod("pi-driver", "default")
        lines = _lines_until(watch, "DELETED")
    finally:
        watch.kill()
        watch.communicate()
    text = "".join(lines)
    assert "ADDED" in text and "pi-driver" in text
    assert any("MODIFIED" in line and "blue" in line for line in lines), text
    assert "DELETED" in text


def test_label_annotate_and_patches(kubectl) -> None:
    kubectl("create", "--validate=false", "-f", "-", input=DRIVER)
    kubectl("label", "pod", "pi-driver", "kubectl-spark.io/fenced=true")
    kubectl("annotate", "pod", "pi-driver", "kubectl-spark.io/epoch=2")
    kubectl(
        "patch", "pod", "pi-driver", "--type=merge", "-p", '{"metadata":{"labels":{"team":"data"}}}'
    )
    kubectl(
        "patch", "pod", "pi-driver", "--subresource=status", "-p", '{"status":{"phase":"Running"}}'
    )
    kubectl(
        "patch",
        "pod",
        "pi-driver",
        "--type=json",
        "-p",
        '[{"op":"remove","path":"/metadata/labels/team"}]',
    )
    pod = json.loads(kubectl("get", "pod", "pi-driver", "-o", "json").stdout)
    assert pod["metadata"]["labels"]["kubectl-spark.io/fenced"] == "true"
    assert "team" not in pod["metadata"]["labels"]
    assert pod["metadata"]["annotations"]["kubectl-spark.io/epoch"] == "2"
    assert pod["status"]["phase"] == "Running"
    # a spec patch through the main resource may not touch status, and vice versa
    kubectl("patch", "pod", "pi-driver", "--type=merge", "-p", '{"status":{"phase":"Failed"}}')
    assert (
        json.loads(kubectl("get", "pod", "pi-driver", "-o", "json").stdout)["status"]["phase"]
        == "Running"
    )
    proc = kubectl("label", "pod", "pi-driver", "bad label=x", check=False)
    assert proc.returncode != 0


def test_force_delete_removes_a_running_pod_at_once(kubectl, api) -> None:
    kubectl("create", "--validate=false", "-f", "-", input=DRIVER)
    bind(api, "pi-driver", "node-a")
    proc = kubectl("delete", "pod", "pi-driver", "--grace-period=0", "--force")
    assert 'pod "pi-driver" force deleted' in proc.stdout
    assert "may continue to run on the cluster indefinitely" in proc.stderr
    assert kubectl("get", "pods", "-o", "name").stdout.strip() == ""


def test_graceful_delete_leaves_a_terminating_pod(kubectl, api) -> None:
    kubectl("create", "--validate=false", "-f", "-", input=DRIVER)
    bind(api, "pi-driver", "node-a")
    kubectl("delete", "pod", "pi-driver", "--wait=false")
    pod = json.loads(kubectl("get", "pod", "pi-driver", "-o", "json").stdout)
    assert pod["metadata"]["deletionTimestamp"]
    assert pod["metadata"]["deletionGracePeriodSeconds"] == 30


def test_delete_job_cascades_to_owned_pods(kubectl, api, bed) -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "pi-driver-job"},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "d", "image": "apache/spark:3.5.1"}],
                }
            }
        },
    }
    kubectl("create", "--validate=false", "-f", "-", input=json.dumps(job))
    uid = kubectl("get", "job", "pi-driver-job", "-o", "jsonpath={.metadata.uid}").stdout
    for name, node in (("pi-driver-job-aaaaa", None), ("pi-driver-job-bbbbb", "node-a")):
        pod = executor(name, 0)
        if not node:
            # No scheduler answers to this name: on the real control plane kube-scheduler would
            # otherwise bind the pod to node-a before the delete, and it would be Terminating.
            pod["spec"]["schedulerName"] = "never-scheduled"
        # Owned, not controlled: the real Job controller releases a pod whose controller
        # reference names its Job but whose labels miss the Job's selector (it removes the
        # reference when it syncs, about a second later: a race with the delete below), and
        # the garbage collector then leaves the pod alone.
        pod["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "name": "pi-driver-job",
                "uid": uid,
                "blockOwnerDeletion": True,
            }
        ]
        kubectl("create", "--validate=false", "-f", "-", input=json.dumps(pod))
        if node:
            bind(api, name, node)
    kubectl("delete", "job", "pi-driver-job", "--wait=false")

    def listed() -> dict[str, Any]:
        return {
            p["metadata"]["name"]: p
            for p in json.loads(kubectl("get", "pods", "-o", "json").stdout)["items"]
        }

    # Background propagation: the garbage collector deletes the dependents after the Job, on
    # its own time (kube-controller-manager's graph sync; the emulator at once).
    deadline = time.monotonic() + 20
    pods = listed()
    while "pi-driver-job-aaaaa" in pods and time.monotonic() < deadline:
        time.sleep(0.2)
        pods = listed()
    # never scheduled: deleted at once
    if "pi-driver-job-aaaaa" in pods:
        log = bed.plane.log_tail("kube-controller-manager", 4000) if bed.kind == "real" else ""
        gc = [line for line in log.splitlines() if "garbage" in line or "graph" in line]
        pytest.fail(
            f"{pods['pi-driver-job-aaaaa']['metadata']}\n" + "\n".join(gc[-40:]), pytrace=False
        )
    assert pods["pi-driver-job-bbbbb"]["metadata"][
        "deletionTimestamp"
    ]  # running: graceful, Terminating
    assert kubectl("get", "jobs", "-o", "name").stdout.strip() == ""


def test_events_by_involved_object(kubectl, api) -> None:
    kubectl("create", "--validate=false", "-f", "-", input=DRIVER)
    core = client.CoreV1Api(api)
    for i, name in enumerate(["pi-driver", "other"]):
        core.create_namespaced_event(
            "default",
            {
                "metadata": {"name": f"{name}.{i}"},
                "involvedObject": {"kind": "Pod", "name": name, "namespace": "default"},
                "reason": "OOMKilling",
                "message": f"event for {name}",
                "type": "Warning",
            },
        )
    out = json.loads(
        kubectl(
            "get", "events", "--field-selector", "involvedObject.name=pi-driver", "-o", "json"
        ).stdout
    )
    # A real cluster's scheduler adds its own (FailedScheduling): only the test's are compared.
    assert [e["message"] for e in out["items"] if e["reason"] == "OOMKilling"] == [
        "event for pi-driver"
    ]
    assert {e["involvedObject"]["name"] for e in out["items"]} == {"pi-driver"}
    proc = kubectl("get", "events", "--field-selector", "involvedObject.color=red", check=False)
    assert proc.returncode != 0 and "field label not supported: involvedObject.color" in proc.stderr


def test_logs_current_previous_and_tail(kubectl, bed: Bed, api) -> None:
    kubectl("create", "--validate=false", "-f", "-", input=DRIVER)
    bed.add_node("node-a")
    bind(api, "pi-driver", "node-a")
    bed.append_log("default", "pi-driver", "spark-kubernetes-driver", "first run\nOutOfMemoryError")
    bed.append_log(
        "default",
        "pi-driver",
        "spark-kubernetes-driver",
        "second run line 1\nsecond run line 2",
        rotate=True,
    )
    assert kubectl("logs", "pi-driver").stdout == "second run line 1\nsecond run line 2\n"
    assert kubectl("logs", "pi-driver", "--tail=1").stdout == "second run line 2\n"
    assert kubectl("logs", "pi-driver", "-p").stdout == "first run\nOutOfMemoryError\n"


def test_wrong_token_is_401_and_forbidden_is_403(
    kubectl, emulator: EmbeddedApiServer, tmp_path
) -> None:
    bad = emulator.write_kubeconfig(tmp_path / "bad", token="not-the-token")
    proc = kubectl("--kubeconfig", str(bad), "get", "pods", check=False)
    assert proc.returncode != 0 and "You must be logged in to the server" in proc.stderr
    emulator.set_policy({"rules": [{"effect": "deny", "verbs": ["delete"], "resources": ["pods"]}]})
    kubectl("create", "--validate=false", "-f", "-", input=DRIVER)
    proc = kubectl("delete", "pod", "pi-driver", check=False)
    assert proc.returncode != 0
    assert (
        'User "kubectl-spark-admin" cannot delete resource "pods" in API group "" in the namespace "default"'
        in proc.stderr
    )
    assert kubectl("auth", "can-i", "delete", "pods", check=False).stdout.strip() == "no"
    assert kubectl("auth", "can-i", "get", "pods").stdout.strip() == "yes"


def test_impersonation_as_kubectl_sends_it(kubectl, emulator: EmbeddedApiServer, tmp_path) -> None:
    """kubectl's --as/--as-group: one Impersonate-Group header per group, the user's policy."""
    emulator.set_policy(
        {
            "rules": [
                {"effect": "allow", "users": ["oncall"], "groups": ["spark-admins"]},
                {"effect": "deny", "users": ["oncall"], "verbs": ["delete"]},
                {"effect": "deny", "users": ["oncall"], "verbs": ["impersonate"]},
            ]
        }
    )
    kubectl("create", "-f", "-", input=DRIVER)
    proc = kubectl("delete", "pod", "pi-driver", "--as", "oncall", "--dry-run=server", check=False)
    assert proc.returncode != 0
    assert 'User "oncall" cannot delete resource "pods"' in proc.stderr
    proc = kubectl(
        "delete", "pod", "pi-driver", "--dry-run=server",
        "--as", "oncall", "--as-group", "other", "--as-group", "spark-admins",
    )  # fmt: skip
    assert "deleted (server dry run)" in proc.stdout
    proc = kubectl("get", "pods", "--as", "oncall", "--as", "someone", check=False)
    assert proc.returncode == 0  # kubectl keeps the last --as: the admin may impersonate anyone
    oncall = emulator.write_kubeconfig(
        tmp_path / "oncall", user="oncall", token=emulator.add_user("oncall")
    )
    proc = kubectl("--kubeconfig", str(oncall), "get", "pods", "--as", "root", check=False)
    assert proc.returncode != 0
    assert (
        'users "root" is forbidden: User "oncall" cannot impersonate resource "users" in API '
        'group "" at the cluster scope' in proc.stderr
    )


def test_sparkapplications_and_nodes(kubectl) -> None:
    app = {
        "apiVersion": "sparkoperator.k8s.io/v1beta2",
        "kind": "SparkApplication",
        "metadata": {"name": "pi"},
        "spec": {
            "type": "Scala",
            "mode": "cluster",
            "restartPolicy": {"type": "OnFailure", "onFailureRetries": 2},
        },
    }
    kubectl("create", "--validate=false", "-f", "-", input=json.dumps(app))
    # Both operators' CRDs are installed, and both say `sparkapp`: kubectl takes the group that
    # sorts first, the Apache operator's; the Kubeflow one needs its group named.
    kubeflow = "sparkapplications.sparkoperator.k8s.io"
    assert "No resources found" in kubectl("get", "sparkapp").stderr
    kubectl(
        "patch",
        kubeflow,
        "pi",
        "--subresource=status",
        "--type=merge",
        "-p",
        '{"status":{"applicationState":{"state":"RUNNING"}}}',
    )
    got = json.loads(kubectl("get", kubeflow, "pi", "-o", "json").stdout)
    assert got["status"]["applicationState"]["state"] == "RUNNING"
    lines = kubectl("get", kubeflow).stdout.splitlines()  # the operator CRD's printer columns
    assert lines[0].split() == ["NAME", "STATUS", "ATTEMPTS", "START", "FINISH", "AGE"]
    assert lines[1].split()[:2] == ["pi", "RUNNING"]
    proc = kubectl("patch", kubeflow, "pi", "-p", '{"spec":{"mode":"client"}}', check=False)
    assert (
        proc.returncode != 0 and "UnsupportedMediaType" in proc.stderr
    ) or "unknown format" in proc.stderr
    kubectl(
        "create",
        "--validate=false",
        "-f",
        "-",
        input=json.dumps({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"}}),
    )
    kubectl("cordon", "node-a")
    assert (
        json.loads(kubectl("get", "node", "node-a", "-o", "json").stdout)["spec"]["unschedulable"]
        is True
    )


def test_get_prints_the_servers_table_as_on_a_real_cluster(kubectl, api) -> None:
    """kubectl asks for a Table; READY, STATUS and RESTARTS read as they would on a cluster."""
    core = client.CoreV1Api(api)
    kubectl("create", "--validate=false", "-f", "-", input=DRIVER)
    for i in (1, 2):
        kubectl(
            "create", "--validate=false", "-f", "-", input=json.dumps(executor(f"pi-exec-{i}", i))
        )
    for name in ("pi-driver", "pi-exec-1", "pi-exec-2"):
        bind(api, name, "node-a")
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 1200))
    statuses = {
        "pi-driver": {
            "phase": "Running",
            "podIP": "10.0.0.7",
            "containerStatuses": [
                {
                    "name": "spark-kubernetes-driver",
                    "ready": True,
                    "restartCount": 2,
                    "state": {"running": {"startedAt": now}},
                    "lastState": {"terminated": {"exitCode": 52, "finishedAt": now}},
                }
            ],
        },
        "pi-exec-1": {
            "phase": "Failed",
            "containerStatuses": [
                {
                    "name": "spark-kubernetes-executor",
                    "ready": False,
                    "restartCount": 0,
                    "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
                }
            ],
        },
        "pi-exec-2": {
            "phase": "Failed",
            "containerStatuses": [
                {
                    "name": "spark-kubernetes-executor",
                    "ready": False,
                    "restartCount": 0,
                    "state": {"terminated": {"exitCode": 143}},
                }
            ],
        },
    }
    for name, status in statuses.items():
        core.patch_namespaced_pod_status(
            name, "default", {"status": status}, _preload_content=False
        )
    lines = kubectl("get", "pods").stdout.splitlines()
    assert lines[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[1:]}
    assert rows["pi-driver"][:4] == ["1/1", "Running", "2", "(20m"]  # "2 (20m ago)"
    assert rows["pi-exec-1"][:3] == ["0/1", "OOMKilled", "0"]
    assert rows["pi-exec-2"][:3] == ["0/1", "ExitCode:143", "0"]
    wide = kubectl("get", "pod", "pi-driver", "-o", "wide").stdout.splitlines()
    assert wide[0].split()[-6:] == ["IP", "NODE", "NOMINATED", "NODE", "READINESS", "GATES"]
    assert wide[1].split()[-4:] == ["10.0.0.7", "node-a", "<none>", "<none>"]
    kubectl("delete", "pod", "pi-driver", "--wait=false")
    assert kubectl("get", "pod", "pi-driver").stdout.splitlines()[1].split()[2] == "Terminating"
    # the object behind each row is there for -o name, --show-labels and -A's NAMESPACE
    assert "spark-role=executor" in kubectl("get", "pod", "pi-exec-1", "--show-labels").stdout
    assert kubectl("get", "pods", "-A").stdout.splitlines()[1].split()[0] == "default"


def test_get_nodes_and_events_tables(kubectl, api) -> None:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node-b", "labels": {"node-role.kubernetes.io/worker": ""}},
    }
    kubectl("create", "--validate=false", "-f", "-", input=json.dumps(node))
    client.CoreV1Api(api).patch_node_status(
        "node-b",
        {
            "status": {
                "conditions": [
                    {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown"}
                ],
                "nodeInfo": {"kubeletVersion": "v1.32.0"},
            }
        },
        _preload_content=False,
    )
    kubectl("cordon", "node-b")
    lines = kubectl("get", "nodes").stdout.splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert lines[1].split()[:3] == ["node-b", "NotReady,SchedulingDisabled", "worker"]
    assert lines[1].split()[-1] == "v1.32.0"
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "pi-driver.1"},
        "involvedObject": {"kind": "Pod", "name": "pi-driver", "namespace": "default"},
        "reason": "Evicted",
        "message": "The node was low on resource: memory.",
        "type": "Warning",
        "count": 3,
        "firstTimestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3000)),
        "lastTimestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 1200)),
    }
    kubectl("create", "--validate=false", "-f", "-", input=json.dumps(event))
    # The real node controller adds the node's own Events: the pod's are the ones compared.
    lines = kubectl(
        "get", "events", "--field-selector", "involvedObject.name=pi-driver"
    ).stdout.splitlines()
    assert lines[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert lines[1].split()[:4] == ["20m", "Warning", "Evicted", "pod/pi-driver"]  # whole minutes
    assert lines[1].endswith("The node was low on resource: memory.")


def test_watch_prints_table_rows_as_pods_change(kubectl, api) -> None:
    kubectl("create", "--validate=false", "-f", "-", input=DRIVER)
    watch = kubectl.popen("get", "pods", "-w", "--output-watch-events")
    try:
        time.sleep(1.5)  # let kubectl list and start watching
        bind(api, "pi-driver", "node-a")
        client.CoreV1Api(api).patch_namespaced_pod_status(
            "pi-driver",
            "default",
            {
                "status": {
                    "phase": "Failed",
                    "containerStatuses": [
                        {
                            "name": "spark-kubernetes-driver",
                            "ready": False,
                            "restartCount": 0,
                            "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
                        }
                    ],
                }
            },
            _preload_content=False,
        )
        lines = _lines_until(watch, "OOMKilled")
    finally:
        watch.kill()
        watch.communicate()
    assert lines[0].split() == ["EVENT", "NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert lines[1].split()[:4] == ["ADDED", "pi-driver", "0/1", "Pending"]
    assert any(line.split()[:4] == ["MODIFIED", "pi-driver", "0/1", "OOMKilled"] for line in lines)


def test_replace_with_the_creation_manifest_is_defaulted_like_create(kubectl) -> None:
    """The update body is defaulted as it is decoded, so only real changes are compared.

    The service account is named and its token not mounted: kube-apiserver's ServiceAccount
    admission sets both on create only, so a replace without them is a change it refuses (the
    emulator has no such admission: a gap the README lists).
    """
    manifest = DRIVER.replace(
        "spec:\n", "spec:\n  serviceAccountName: default\n  automountServiceAccountToken: false\n"
    )
    kubectl("create", "-f", "-", input=manifest)
    assert kubectl("replace", "-f", "-", input=manifest).stdout.strip() == "pod/pi-driver replaced"
    newer = manifest.replace("3.5.1", "3.5.2")
    kubectl("replace", "-f", "-", input=newer)
    pod = json.loads(kubectl("get", "pod", "pi-driver", "-o", "json").stdout)
    assert pod["spec"]["containers"][0]["image"] == "apache/spark:3.5.2"
    renamed = newer.replace("name: spark-kubernetes-driver", "name: other")
    proc = kubectl("replace", "-f", "-", input=renamed, check=False)
    assert proc.returncode != 0 and "pod updates may not change fields" in proc.stderr


TYPO = """
apiVersion: v1
kind: Pod
metadata:
  name: typo
  lables: {spark-role: driver}
spec:
  containers: [{name: c, image: "apache/spark:3.5.1", imagePullPolicyy: Always}]
"""


def test_unknown_fields_are_refused_warned_or_ignored_as_kubectl_asks(kubectl) -> None:
    proc = kubectl("create", "-f", "-", input=TYPO, check=False)  # --validate=strict
    assert proc.returncode != 0
    assert (
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
        'unknown field "metadata.lables", unknown field "spec.containers[0].imagePullPolicyy"'
    ) in proc.stderr
    assert kubectl("get", "pods", "-o", "name").stdout.strip() == ""
    proc = kubectl("create", "--validate=warn", "-f", "-", input=TYPO)
    assert 'Warning: unknown field "metadata.lables"' in proc.stderr
    assert "pod/typo created" in proc.stdout
    kubectl("delete", "pod", "typo", "--wait=false")
    proc = kubectl("create", "--validate=false", "-f", "-", input=TYPO)
    assert "Warning" not in proc.stderr and "pod/typo created" in proc.stdout
    stored = json.loads(kubectl("get", "pod", "typo", "-o", "json").stdout)
    assert "lables" not in stored["metadata"]  # dropped, as a typed decode drops it
    assert "imagePullPolicyy" not in stored["spec"]["containers"][0]


def test_create_namespace_configmap_and_job_as_kubectl_sends_them(kubectl, tmp_path) -> None:
    """kubectl's generators post protobuf for built-in kinds; what they send is what is kept."""
    kubectl("create", "namespace", "spark-team")
    assert (
        json.loads(kubectl("get", "namespace", "spark-team", "-o", "json").stdout)["metadata"][
            "name"
        ]
        == "spark-team"
    )
    binary = tmp_path / "blob"
    binary.write_bytes(b"\xff\x00spark")
    kubectl(
        "create", "configmap", "conf", "-n", "spark-team",
        "--from-literal=spark.executor.memory=4g", "--from-literal=note=two words",
        f"--from-file=blob={binary}",
    )  # fmt: skip
    conf = json.loads(kubectl("get", "configmap", "conf", "-n", "spark-team", "-o", "json").stdout)
    assert conf["data"] == {"spark.executor.memory": "4g", "note": "two words"}
    assert conf["binaryData"] == {"blob": "/wBzcGFyaw=="}
    kubectl("create", "job", "j", "-n", "spark-team", "--image=busybox", "--", "sh", "-c", "exit 3")
    job = json.loads(kubectl("get", "job", "j", "-n", "spark-team", "-o", "json").stdout)
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert (container["name"], container["image"]) == ("j", "busybox")
    assert container["command"] == ["sh", "-c", "exit 3"]
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert job["spec"]["backoffLimit"] == 6  # defaulted by the server, not sent


def test_kubectl_and_ls_age_pods_by_the_servers_clock(cluster, capsys) -> None:
    """kubectl get prints AGE as the server computes it, by the server's clock; `ls` reads the
    same clock from the Date header, so both agree when this machine's clock does not."""
    from tests.command_line import run
    from tests.conftest import Kubectl, kubectl_binary

    binary = kubectl_binary()
    if binary is None:
        pytest.skip("SKIPPING real-kubectl test LOUDLY: no kubectl binary on PATH")
    c = cluster("s6-driver-restarts")
    c.player.play()
    c.clock.advance(3 * 3600)  # 3 hours ahead of this machine's clock
    kubectl = Kubectl(binary, c.kubeconfig)
    rows = kubectl("get", "pods", "-l", "spark-role=driver", "--no-headers").stdout.splitlines()
    assert rows and all(r.split()[-1].startswith("3h") for r in rows), rows
    code, out, err = run(capsys, c, "ls", "--no-headers")
    assert code == 0, err
    assert all(line.split()[-1].startswith("3h") for line in out.splitlines()), out


def test_the_date_header_is_the_emulators_clock(cluster) -> None:
    """Every answer, even an error, carries the clock the emulator stamps objects with."""
    import urllib.request
    from email.utils import parsedate_to_datetime

    c = cluster("s6-driver-restarts")
    c.clock.advance(-86400)  # a day behind this machine's clock
    import urllib.error

    stamped = c.clock.now().replace(microsecond=0)
    with urllib.request.urlopen(c.server.url + "/version", context=_unverified()) as answer:
        assert parsedate_to_datetime(answer.headers["Date"]) == stamped
    with pytest.raises(urllib.error.HTTPError) as refused:  # no credentials: 401
        urllib.request.urlopen(c.server.url + "/api/v1/pods", context=_unverified())
    with refused.value as error:
        assert error.code == 401
        assert parsedate_to_datetime(error.headers["Date"]) == stamped


def _unverified() -> ssl.SSLContext:
    import ssl

    return ssl._create_unverified_context()


def _init_status(name: str, restarts: int, state: dict, **more: object) -> dict:
    return {"name": name, "restartCount": restarts, "state": state, **more}


RUNNING_STATE = {"running": {"startedAt": "2026-03-01T02:00:00Z"}}
CRASH_LOOP = {"waiting": {"reason": "CrashLoopBackOff"}}
DONE = {"terminated": {"exitCode": 0, "reason": "Completed"}}
# executor id: (its init containers' specs, their statuses, the Spark container's restarts,
# and whether the pod is initialized), one per way kubectl's printPod counts RESTARTS.
RESTART_CASES: dict[int, tuple[list[dict], list[dict], int, bool]] = {
    1: ([], [], 2, True),  # no init containers: the container's
    2: (  # an init container crash-looping: its restarts, while the pod initializes
        [{"name": "fetch-jars", "image": "busybox"}],
        [_init_status("fetch-jars", 5, CRASH_LOOP)],
        0,
        False,
    ),
    3: (  # initialized: the init container's old restarts no longer count
        [{"name": "fetch-jars", "image": "busybox"}],
        [_init_status("fetch-jars", 4, DONE)],
        1,
        True,
    ),
    4: (  # a sidecar (restartPolicy Always) that restarted: it counts as a container
        [{"name": "proxy", "image": "envoy", "restartPolicy": "Always"}],
        [_init_status("proxy", 3, RUNNING_STATE, started=True, ready=True)],
        1,
        True,
    ),
}


def test_restarts_are_counted_as_kubectl_counts_them(kubectl, api, kubeconfig, capsys) -> None:
    """ls (slim pods) and describe (whole ones) say the RESTARTS kubectl get pods says."""
    from kubectl_spark.cli.main import main

    core = client.CoreV1Api(api)
    kubectl("create", "--validate=false", "-f", "-", input=DRIVER)
    driver_uid = kubectl("get", "pod", "pi-driver", "-o", "jsonpath={.metadata.uid}").stdout
    owner = {"apiVersion": "v1", "kind": "Pod", "name": "pi-driver", "uid": driver_uid}
    for exec_id, (specs, inits, restarts, initialized) in RESTART_CASES.items():
        pod = executor(f"pi-exec-{exec_id}", exec_id)
        pod["metadata"]["ownerReferences"] = [{**owner, "controller": True}]
        if specs:
            pod["spec"]["initContainers"] = specs
        kubectl("create", "--validate=false", "-f", "-", input=json.dumps(pod))
        status = {
            "phase": "Running" if initialized else "Pending",
            "conditions": [{"type": "Initialized", "status": str(initialized)}],
            "initContainerStatuses": inits,
            "containerStatuses": [
                {
                    "name": "spark-kubernetes-executor",
                    "restartCount": restarts,
                    "state": RUNNING_STATE
                    if initialized
                    else {"waiting": {"reason": "PodInitializing"}},
                }
            ],
        }
        core.patch_namespaced_pod_status(
            pod["metadata"]["name"], "default", {"status": status}, _preload_content=False
        )
    rows = kubectl("get", "pods", "-l", "spark-role=executor", "--no-headers").stdout.splitlines()
    said = {line.split()[0]: int(line.split()[3]) for line in rows}
    assert said == {"pi-exec-1": 2, "pi-exec-2": 5, "pi-exec-3": 1, "pi-exec-4": 4}
    for command in (["ls", "-o", "json"], ["describe", "pi", "-o", "json"]):
        assert main(["--kubeconfig", str(kubeconfig), *command]) == 0
        doc = json.loads(capsys.readouterr().out)
        app = doc["items"][0] if "items" in doc else doc
        assert len(app["attempts"]) == 1, doc
        (attempt,) = app["attempts"]
        assert {e["pod"]: e["restarts"] for e in attempt["executors"]} == said, command


def test_kubectl_with_a_server_without_a_scheme_is_told_bad_request(kubectl, emulator) -> None:
    """kubectl --server host:port speaks plain HTTP; kube-apiserver answers 400, not EOF."""
    proc = kubectl("--server", f"127.0.0.1:{emulator.port}", "get", "pods", check=False)
    assert proc.returncode == 1
    assert "Error from server (BadRequest)" in proc.stderr, proc.stderr
    assert "EOF" not in proc.stderr and "reset by peer" not in proc.stderr
