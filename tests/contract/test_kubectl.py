"""The real kubectl, unchanged, against the emulator: the proof that it speaks kube-apiserver."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from kubernetes import client

from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer
from tests.beds import Bed
from tests.contract.objects import DRIVER, bind, executor, lines_until

pytestmark = pytest.mark.kubectl


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
        lines = lines_until(watch, "DELETED")
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


def test_kubectl_with_a_server_without_a_scheme_is_told_bad_request(kubectl, emulator) -> None:
    """kubectl --server host:port speaks plain HTTP; kube-apiserver answers 400, not EOF."""
    proc = kubectl("--server", f"127.0.0.1:{emulator.port}", "get", "pods", check=False)
    assert proc.returncode == 1
    assert "Error from server (BadRequest)" in proc.stderr, proc.stderr
    assert "EOF" not in proc.stderr and "reset by peer" not in proc.stderr
