"""The official kubernetes Python client, unchanged, against the emulator (no mocks)."""

from __future__ import annotations

import threading
import time

import orjson
import pytest
from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException

from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer
from tests.beds import Bed
from tests.helpers import pod, raw


def test_create_list_patch_status_and_delete_by_uid(api) -> None:
    core = client.CoreV1Api(api)
    created = core.create_namespaced_pod("default", pod("drv", {"spark-role": "driver"}))
    core.create_namespaced_pod("default", pod("exec-1", {"spark-role": "executor"}))
    names = [
        p.metadata.name
        for p in core.list_pod_for_all_namespaces(label_selector="spark-role=executor").items
    ]
    assert names == ["exec-1"]
    core.patch_namespaced_pod(
        "drv",
        "default",
        {"metadata": {"labels": {"x": "1"}}},
        _content_type="application/merge-patch+json",
    )
    core.patch_namespaced_pod_status("drv", "default", {"status": {"phase": "Running"}})
    got = core.read_namespaced_pod("drv", "default")
    assert got.metadata.labels == {"spark-role": "driver", "x": "1"}
    assert got.status.phase == "Running"
    with pytest.raises(ApiException) as err:
        core.delete_namespaced_pod(
            "drv",
            "default",
            body=client.V1DeleteOptions(preconditions=client.V1Preconditions(uid="not-the-uid")),
        )
    assert err.value.status == 409
    core.delete_namespaced_pod(
        "drv",
        "default",
        grace_period_seconds=0,
        body=client.V1DeleteOptions(preconditions=client.V1Preconditions(uid=created.metadata.uid)),
    )
    assert [p.metadata.name for p in core.list_namespaced_pod("default").items] == ["exec-1"]


def test_logs_through_the_client(api, bed: Bed) -> None:
    core = client.CoreV1Api(api)
    # No node took it: no kubelet to ask, and kube-apiserver answers 204 with no body.
    core.create_namespaced_pod("default", pod("waiting"))
    unscheduled = core.read_namespaced_pod_log("waiting", "default", _preload_content=False)
    assert (unscheduled.status, unscheduled.data) == (204, b"")
    bed.add_node("node-a")
    core.create_namespaced_pod("default", pod("drv", nodeName="node-a"))
    bed.append_log("default", "drv", "main", "a\nb\nc")
    # read raw: the 36.x client turns a "str" response into repr(bytes) (the plugin reads raw too)
    resp = core.read_namespaced_pod_log("drv", "default", tail_lines=2, _preload_content=False)
    assert resp.data == b"b\nc\n"
    assert resp.headers["Content-Type"].startswith("text/plain")
    with pytest.raises(ApiException) as err:
        core.read_namespaced_pod_log("drv", "default", previous=True)
    assert err.value.status == 400
    assert (
        orjson.loads(err.value.body)["message"]
        == 'previous terminated container "main" in pod "drv" not found'
    )


def test_watch_helper_streams_changes(api) -> None:
    core = client.CoreV1Api(api)
    listed = core.list_namespaced_pod("default")
    rv = listed.metadata.resource_version

    def writer() -> None:
        time.sleep(0.3)
        core.create_namespaced_pod("default", pod("w"))
        core.patch_namespaced_pod("w", "default", {"metadata": {"labels": {"a": "b"}}})
        core.delete_namespaced_pod("w", "default")

    thread = threading.Thread(target=writer)
    thread.start()
    seen = []
    for event in watch.Watch().stream(
        core.list_namespaced_pod, "default", resource_version=rv, timeout_seconds=5
    ):
        seen.append((event["type"], event["object"].metadata.name))
        if event["type"] == "DELETED":
            break
    thread.join()
    # The pod never scheduled: kube-apiserver marks it (deletionGracePeriodSeconds 0), a
    # MODIFIED, then deletes it. A real scheduler's PodScheduled=False adds a MODIFIED of its own.
    kinds = [kind for kind, _ in seen]
    assert {name for _, name in seen} == {"w"}
    assert kinds[0] == "ADDED"
    assert kinds[-2:] == ["MODIFIED", "DELETED"]
    assert kinds.count("MODIFIED") in (2, 3)  # the label, the mark (and the scheduler's)


def test_watch_recovers_from_410_by_relisting(api, emulator: EmbeddedApiServer) -> None:
    """The Watch helper retries a 410 once from the same (too old) RV, then raises; a client
    recovers by listing again and watching from the list's resourceVersion."""
    core = client.CoreV1Api(api)
    core.create_namespaced_pod("default", pod("before"))
    old_rv = core.list_namespaced_pod("default").metadata.resource_version
    core.create_namespaced_pod("default", pod("during"))
    emulator.compact()
    with pytest.raises(ApiException) as err:
        for _ in watch.Watch().stream(core.list_namespaced_pod, "default", resource_version=old_rv):
            pass
    assert err.value.status == 410
    assert "Expired" in str(err.value.reason)
    relisted = core.list_namespaced_pod("default")
    assert sorted(p.metadata.name for p in relisted.items) == ["before", "during"]
    threading.Timer(0.3, lambda: core.create_namespaced_pod("default", pod("after"))).start()
    for event in watch.Watch().stream(
        core.list_namespaced_pod,
        "default",
        resource_version=relisted.metadata.resource_version,
        timeout_seconds=5,
    ):
        first = (event["type"], event["object"].metadata.name)
        break
    else:
        first = None  # the watch ended without an event
    assert first == ("ADDED", "after")


def test_too_old_watch_is_200_with_one_error_event(api, emulator: EmbeddedApiServer) -> None:
    core = client.CoreV1Api(api)
    core.create_namespaced_pod("default", pod("a"))
    emulator.compact()
    resp = core.list_namespaced_pod(
        "default", watch=True, resource_version="2", _preload_content=False
    )
    assert resp.status == 200
    lines = resp.data.split(b"\n")
    assert lines[-1] == b""  # newline-terminated, no blank lines in between
    events = [orjson.loads(line) for line in lines[:-1]]
    assert len(events) == 1
    assert events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert (status["kind"], status["code"], status["reason"]) == ("Status", 410, "Expired")
    assert status["message"].startswith("too old resource version: 2 (")


def test_watch_ends_at_its_timeout(api) -> None:
    start = time.monotonic()
    resp = client.CoreV1Api(api).list_namespaced_pod(
        "default", watch=True, allow_watch_bookmarks=True, timeout_seconds=2, _preload_content=False
    )
    body = resp.data
    assert 1.5 <= time.monotonic() - start < 6
    assert all(line for line in body.split(b"\n")[:-1])


def test_watch_bookmarks_and_timeout(api, emulator: EmbeddedApiServer) -> None:
    """Emulator only: its bookmark interval is set (0.5 s); kube-apiserver's is about a minute."""
    start = time.monotonic()
    status, _ = raw(api, "GET", "/api/v1/namespaces/default/pods")
    assert status == 200
    resp = client.CoreV1Api(api).list_namespaced_pod(
        "default", watch=True, allow_watch_bookmarks=True, timeout_seconds=2, _preload_content=False
    )
    body = resp.data
    elapsed = time.monotonic() - start
    assert 1.5 <= elapsed < 6
    events = [orjson.loads(line) for line in body.splitlines()]
    assert all(line for line in body.split(b"\n")[:-1])
    bookmarks = [e for e in events if e["type"] == "BOOKMARK"]
    assert bookmarks, "the fixture's bookmark interval is 0.5 s"
    assert set(bookmarks[0]["object"]) == {"kind", "apiVersion", "metadata"}
    assert bookmarks[0]["object"]["kind"] == "Pod"


def test_batch_jobs_and_cascading_delete(api, bed: Bed) -> None:
    batch = client.BatchV1Api(api)
    core = client.CoreV1Api(api)
    job = batch.create_namespaced_job(
        "default",
        {
            "metadata": {"name": "drv-job"},
            "spec": {
                "backoffLimit": 3,
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "d", "image": "spark:3"}],
                    }
                },
            },
        },
    )
    assert job.spec.pod_replacement_policy == "TerminatingOrFailed"
    assert job.spec.template.metadata.labels["batch.kubernetes.io/job-name"] == "drv-job"
    # Never scheduled (no such scheduler): on the real control plane a pod bound to a node no
    # kubelet heartbeats is evicted by the taint manager seconds later, and this test once lost
    # its pod (404) while it waited for the orphaning.
    owned = pod("drv-job-x", schedulerName="no-scheduler")
    owned["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "name": "drv-job",
            "uid": job.metadata.uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    core.create_namespaced_pod("default", owned)
    # The API's default for Jobs is to orphan their pods; the plugin must ask for Background.
    # The answer says so: the Job stays, marked for deletion, with the orphan finalizer.
    answer = orjson.loads(
        batch.delete_namespaced_job("drv-job", "default", _preload_content=False).data
    )
    assert answer["kind"] == "Job" and "orphan" in answer["metadata"]["finalizers"], answer
    # The garbage collector orphans it (drops the owner reference) soon after, not at once.
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            survivor = core.read_namespaced_pod("drv-job-x", "default")
        except ApiException as exc:
            if bed.kind == "real" and exc.status == 404:
                # kube-controller-manager's collector orphans only the dependents its graph
                # holds (garbagecollector.go, orphanDependents): under load its informer may
                # not have seen the pod yet, which it then deletes as one whose owner is gone
                # (attemptToDeleteItem: no solid owner). The orphan finalizer above is the
                # default this test is about; the race is the real control plane's.
                return
            events = core.list_namespaced_event(
                "default", field_selector="involvedObject.name=drv-job-x"
            )
            said = [
                (e.reason, e.source.component if e.source else "", e.message) for e in events.items
            ]
            pytest.fail(f"the orphan was deleted ({exc.status}) instead: its Events {said}")
        if survivor.metadata.owner_references is None:
            break
        time.sleep(0.1)
    assert survivor.metadata.owner_references is None
