"""kubectl get's tables as on a real cluster: the server's columns, watch rows, AGE by the
server's clock, RESTARTS as kubectl counts them."""

from __future__ import annotations

import json
import ssl
import time

import pytest
from kubernetes import client

from tests.contract.objects import DRIVER, bind, executor, lines_until

pytestmark = pytest.mark.kubectl


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
        lines = lines_until(watch, "OOMKilled")
    finally:
        watch.kill()
        watch.communicate()
    assert lines[0].split() == ["EVENT", "NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert lines[1].split()[:4] == ["ADDED", "pi-driver", "0/1", "Pending"]
    assert any(line.split()[:4] == ["MODIFIED", "pi-driver", "0/1", "OOMKilled"] for line in lines)


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
