"""Issue 24's actions on both backends: orphans, a resubmitted Job's per-pod identity, a bare
driver kept before force-kill and resubmitted from what was kept.

On the real control plane the real garbage collector removes what a deleted driver owned
(executors, its ConfigMaps and Service) and drops an owner reference that dangles while
another owner lives (spark-operator#2961's executors); the real Job controller runs the
resubmitted Job. The simulator plays the kubelets, Spark and the spark-operator.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kubectl_spark.sim import scenario as scenarios
from tests.beds import Bed
from tests.stages import Stage, alerts

pytestmark = pytest.mark.slow


@pytest.fixture
def stage(bed: Bed, tmp_path: Path) -> Iterator[Any]:
    made: list[Stage] = []

    def start(app: dict[str, Any], *, before: Callable[[Stage], None] | None = None) -> Stage:
        doc = {
            "name": f"{app['name']}-alone",
            "title": app["name"],
            "description": "one application, driven by the test",
            "nodes": [{"name": "node-a"}, {"name": "node-b"}],
            "apps": [app],
            "steps": [],
        }
        made.append(Stage(bed, scenarios.parse(doc, doc["name"]), tmp_path))
        if before is not None:
            before(made[-1])
        made[-1].do("submit", app["name"])
        return made[-1]

    yield start
    for each in made:
        each.close()


def _running(s: Stage, name: str, role: str) -> list[dict[str, Any]]:
    return [p for p in s.running(spark_role=role) if p["metadata"]["name"].startswith(name)]


def _until_running(s: Stage, name: str, executors: int = 2) -> dict[str, Any]:
    s.until(
        f"{name}'s driver and {executors} executors running",
        lambda: (
            len(_running(s, name, "driver")) == 1
            and len(_running(s, name, "executor")) == executors
        ),
    )
    return _running(s, name, "driver")[0]


def test_orphaned_executors_are_what_force_kill_deletes(stage, capsys) -> None:
    """S8's etl: the spark-operator's executors also name the SparkApplication as an owner, so
    when the driver pod goes the garbage collector keeps them (it drops the dangling reference
    only). describe's advice, fence and force-kill all name them; force-kill deletes them."""
    s = stage({"name": "etl", "launch": "operator", "executors": 2})
    driver = _until_running(s, "etl")
    s.do("delete", {"app": "etl", "role": "driver"}, grace=0)
    gone = driver["metadata"]["uid"]

    def kept_without_their_driver() -> bool:
        execs = _running(s, "etl", "executor")
        return (
            not any(d["metadata"]["uid"] == gone for d in s.pods(spark_role="driver"))
            and len(execs) == 2
            and not any(r["uid"] == gone for p in execs for r in p["metadata"]["ownerReferences"])
        )

    s.until("the executors kept, their driver reference dropped", kept_without_their_driver)
    code, out, err = s.cli(capsys, "describe", "etl")
    assert code == 0 and "kubectl spark force-kill etl/1" in out, out + err
    code, out, err = s.cli(capsys, "fence", "etl/1", "--yes")
    assert code == 0 and "force-kill etl/1" in out, out + err
    code, out, err = s.cli(capsys, "force-kill", "etl/1", "--yes")
    assert code == 0 and "done" in out, out + err
    s.until("the orphaned executors gone", lambda: _running(s, "etl", "executor") == [])
    assert s.pods(spark_role="driver") == [] or all(
        d["metadata"]["uid"] != gone for d in s.pods(spark_role="driver")
    )


def test_a_resubmitted_job_gives_each_pod_its_own_identity(stage, capsys) -> None:
    """S7's hazard (a fixed executor prefix, one app id for every attempt) is not copied: each
    pod of the resubmitted Job takes spark.app.id and the prefix from its own name."""
    app = "networkwordcount"
    s = stage({"name": app, "launch": "job", "executors": 2, "executor_prefix": "fixed"})
    old = _until_running(s, app)
    code, out, err = s.cli(capsys, "force-kill", f"{app}/1", "--force", "--no-replace", "--yes")
    assert code == 0, out + err
    # Gone, not only Terminating: the Job controller drops its job-tracking finalizer first.
    s.until("the old driver gone", lambda: s.pods(spark_role="driver") == [])
    (job,) = s.world.client.list("/apis/batch/v1/namespaces/default/jobs")
    assert job["spec"]["suspend"] is True  # --no-replace: suspended, so no attempt 2 started
    code, out, err = s.cli(capsys, "resubmit", app, "--dry-run", "-o", "yaml")
    assert code == 0, err
    assert "spark.kubernetes.executor.podNamePrefix=$(POD_NAME)" in out
    assert "spark.app.id=$(POD_NAME)" in out and "fieldPath: metadata.name" in out
    code, out, err = s.cli(capsys, "resubmit", app, "--yes")
    assert code == 0, out + err
    new = _until_running(s, app)
    assert new["metadata"]["uid"] != old["metadata"]["uid"]
    name = new["metadata"]["name"]
    execs = _running(s, app, "executor")
    assert all(p["metadata"]["name"].startswith(f"{name}-exec-") for p in execs), execs
    assert {p["metadata"]["labels"]["spark-app-selector"] for p in execs} == {name}
    listed = s.app(capsys, app)
    last = listed["attempts"][-1]
    assert (last["driverPod"], last["state"]) == (name, "Running")
    assert len([e for e in last["executors"] if e["state"] == "Running"]) == 2
    assert not {"NameCollision", "SharedAppId"} & set(alerts(listed))


def test_a_force_killed_bare_driver_is_resubmitted_from_what_was_kept(stage, capsys) -> None:
    """A spark-submit driver pod is the only copy of its spec, and the garbage collector takes
    its ConfigMaps and Service with it: force-kill keeps them in the history store first."""
    app = "pi"
    s = stage({"name": app, "launch": "submit", "executors": 2})
    old = _until_running(s, app)
    owned = _owned_objects(s, old)
    assert owned, "Spark's driver owns its properties ConfigMap and its Service"
    code, out, err = s.cli(capsys, "force-kill", f"{app}/1", "--force", "--dry-run")
    assert code == 0 and "kept in the local history store" in out, out + err
    code, out, err = s.cli(capsys, "force-kill", f"{app}/1", "--force", "--yes")
    assert code == 0, out + err
    s.until(
        "the driver, its executors and what it owned gone",
        lambda: (
            s.pods(spark_role="driver") == []
            and s.pods(spark_role="executor") == []
            and _owned_objects(s, old) == []
        ),
    )
    code, out, err = s.cli(capsys, "ls", "-A", "-o", "json")
    assert code == 0, err
    rows = next(a for a in json.loads(out)["items"] if a["name"] == app)["attempts"]
    assert [a["state"] for a in rows] == ["Gone"]  # still listed: resubmit finds it
    code, out, err = s.cli(capsys, "resubmit", app, "--yes")
    assert code == 0, out + err
    assert "copied from what force-kill kept in the local history store" in out
    assert "create configmaps" in out and "create services" in out
    new = _until_running(s, app)
    assert new["metadata"]["uid"] != old["metadata"]["uid"]
    # The copy's own identity (spark.app.id, driver pod name): its executors are its own.
    app_id = new["metadata"]["labels"]["spark-app-selector"]
    assert app_id != old["metadata"]["labels"]["spark-app-selector"]
    assert {
        p["metadata"]["labels"]["spark-app-selector"] for p in _running(s, app, "executor")
    } == {app_id}
    last = s.app(capsys, app)["attempts"][-1]
    assert last["state"] == "Running" and len(last["executors"]) == 2


def _owned_objects(s: Stage, driver: dict[str, Any]) -> list[str]:
    uid = driver["metadata"]["uid"]
    found = []
    for kind in ("configmaps", "services"):
        for item in s.world.client.list(f"/api/v1/namespaces/default/{kind}"):
            if any(r.get("uid") == uid for r in item["metadata"].get("ownerReferences") or []):
                found.append(f"{kind}/{item['metadata']['name']}")
    return found


# Of kube-scheduler's message (v1.33 on the test bed: "0/2 nodes are available: 1 node has pod
# using …, 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }. preemption: 0/2
# nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not
# helpful for scheduling."), what the simulator's scheduler must say the same way.
RWOP_UNSCHEDULABLE = (
    "0/2 nodes are available: ",
    "1 node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode",
    "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod",
)


def _rwop_claim(s: Stage) -> None:
    """A ReadWriteOncePod claim bound to a volume made for it (Spark 4's default access mode)."""
    s.world.client.create(
        "/api/v1/persistentvolumes",
        {
            "metadata": {"name": "checkpoint-pv"},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOncePod"],
                "storageClassName": "",
                "hostPath": {"path": "/tmp/checkpoint"},
                "claimRef": {"namespace": "default", "name": "checkpoint"},
            },
        },
    )
    claims = "/api/v1/namespaces/default/persistentvolumeclaims"
    s.world.client.create(
        claims,
        {
            "metadata": {"name": "checkpoint"},
            "spec": {
                "accessModes": ["ReadWriteOncePod"],
                "storageClassName": "",
                "volumeName": "checkpoint-pv",
                "resources": {"requests": {"storage": "1Gi"}},
            },
        },
    )
    if s.kind == "emulator":  # no persistentvolume-binder there: bind as it would
        s.world.client.patch(f"{claims}/checkpoint/status", {"status": {"phase": "Bound"}})
    s.until(
        "the claim bound",
        lambda: (
            (s.world.client.get(f"{claims}/checkpoint") or {})["status"].get("phase") == "Bound"
        ),
    )


def test_a_readwriteoncepod_claim_blocks_attempt_2_until_attempt_1_is_killed(stage, capsys):
    """One pod in the cluster may use a ReadWriteOncePod claim (kube-scheduler's
    VolumeRestrictions plugin): attempt 2 stays Pending while attempt 1's driver pod, on its
    lost node, still exists. The alert says so and names the kill that frees it."""
    app = "streaming"
    s = stage(
        {"name": app, "launch": "job", "executors": 1, "pvc": "checkpoint"}, before=_rwop_claim
    )
    old = _until_running(s, app, executors=1)
    s.do("shutdown", old["spec"]["nodeName"])

    def attempt_2_unschedulable() -> bool:
        return any(
            "ReadWriteOncePod" in (c.get("message") or "")
            for p in s.pods(spark_role="driver")
            for c in (p.get("status") or {}).get("conditions") or []
            if c.get("type") == "PodScheduled" and c.get("status") == "False"
        )

    s.until("attempt 2 kept off every node by the claim", attempt_2_unschedulable)
    # kube-scheduler's own words, which the simulator's scheduler writes the same way.
    (waiting,) = [p for p in s.pods(spark_role="driver") if not p["spec"].get("nodeName")]
    said = next(c for c in waiting["status"]["conditions"] if c["type"] == "PodScheduled")
    for words in RWOP_UNSCHEDULABLE:
        assert words in said["message"], said["message"]
    listed = s.app(capsys, app)
    blocked = next(a for a in listed["alerts"] if a["type"] == "ReplacementBlocked")
    assert "claim checkpoint is ReadWriteOncePod" in blocked["message"], blocked["message"]
    assert f"kubectl spark force-kill {app}/1 --node-down" in blocked["message"]
    code, out, err = s.cli(capsys, "force-kill", f"{app}/1", "--node-down", "--yes")
    assert code == 0, out + err
    gone = old["metadata"]["uid"]
    s.until(
        "attempt 2 running",
        lambda: any(d["metadata"]["uid"] != gone for d in _running(s, app, "driver")),
    )
    assert "ReplacementBlocked" not in alerts(s.app(capsys, app))
