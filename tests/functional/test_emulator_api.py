"""kube-apiserver semantics the emulator must honour, each checked over real HTTPS."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime

import orjson
import pytest

from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer, EmulatorOptions
from kubectl_spark.knowledge.clock import ManualClock
from tests.helpers import MERGE, PODS, bind, make, pod, raw


# ----------------------------------------------------------------------------- identity
def test_resource_version_is_global_and_increasing(api) -> None:
    a = make(api, "a")
    _, cm = raw(api, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "c"}})
    b = make(api, "b")
    rvs = [int(x["metadata"]["resourceVersion"]) for x in (a, cm, b)]
    assert rvs == sorted(rvs) and len(set(rvs)) == 3
    assert a["metadata"]["uid"] != b["metadata"]["uid"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", a["metadata"]["creationTimestamp"])


def test_generate_name(api) -> None:
    status, body = raw(api, "POST", PODS, {**pod(""), "metadata": {"generateName": "x" * 70}})
    assert status == 201
    name = body["metadata"]["name"]
    assert len(name) == 63 and name.startswith("x" * 58)
    assert re.fullmatch(r"[bcdfghjklmnpqrstvwxz2456789]{5}", name[58:])


def test_pod_defaults_include_default_toleration_seconds(api) -> None:
    body = make(api, "d")
    keys = {(t["key"], t["tolerationSeconds"]) for t in body["spec"]["tolerations"]}
    assert keys == {("node.kubernetes.io/not-ready", 300), ("node.kubernetes.io/unreachable", 300)}
    assert body["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    assert body["spec"]["restartPolicy"] == "Always"


# -------------------------------------------------------------------------------- errors
def test_not_found_already_exists_and_invalid_are_real_status_objects(api) -> None:
    status, body = raw(api, "GET", f"{PODS}/nope")
    assert status == 404
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'pods "nope" not found',
        "reason": "NotFound",
        "details": {"name": "nope", "kind": "pods"},
        "code": 404,
    }
    status, body = raw(api, "GET", "/apis/batch/v1/namespaces/default/jobs/nope")
    assert (status, body["message"], body["details"]["group"]) == (
        404,
        'jobs.batch "nope" not found',
        "batch",
    )
    make(api, "dup")
    status, body = raw(api, "POST", PODS, pod("dup"))
    assert (status, body["reason"], body["message"]) == (
        409,
        "AlreadyExists",
        'pods "dup" already exists',
    )
    status, body = raw(api, "POST", PODS, pod("Bad_Name"))
    assert (status, body["reason"]) == (422, "Invalid")
    assert body["details"]["causes"][0]["field"] == "metadata.name"
    status, body = raw(api, "POST", PODS, {"metadata": {"name": "nocontainers"}, "spec": {}})
    assert status == 422 and body["details"]["causes"][0] == {
        "reason": "FieldValueRequired",
        "message": "Required value",
        "field": "spec.containers",
    }
    status, body = raw(api, "GET", "/api/v1/namespaces/default/widgets")
    assert (status, body["message"]) == (404, "the server could not find the requested resource")


def test_namespace_lifecycle(api) -> None:
    status, body = raw(api, "POST", "/api/v1/namespaces/ghost/pods", pod("p"))
    assert (status, body["message"]) == (404, 'namespaces "ghost" not found')
    raw(api, "POST", "/api/v1/namespaces", {"metadata": {"name": "team"}})
    make(api, "p", path="/api/v1/namespaces/team/pods")
    status, body = raw(api, "DELETE", "/api/v1/namespaces/team")
    # As kube-apiserver answers: the namespace as it now is, Terminating, not as it was.
    assert status == 200
    assert body["status"]["phase"] == "Terminating"
    assert body["metadata"]["deletionTimestamp"]
    assert body["spec"]["finalizers"] == ["kubernetes"]
    status, body = raw(api, "POST", "/api/v1/namespaces/team/pods", pod("late"))
    assert (status, body["reason"]) == (403, "Forbidden")  # NamespaceTerminating
    deadline = time.monotonic() + 10  # the namespace controller removes it a moment later
    while raw(api, "GET", "/api/v1/namespaces/team")[0] != 404 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert raw(api, "GET", "/api/v1/namespaces/team")[0] == 404
    assert raw(api, "GET", "/api/v1/namespaces/team/pods/p")[0] == 404


# ------------------------------------------------------------------------------ list/page
def test_label_and_field_selectors(api) -> None:
    make(api, "d", {"spark-role": "driver", "app": "a"})
    make(api, "e1", {"spark-role": "executor", "app": "a"})
    make(api, "e2", {"spark-role": "executor", "app": "b"})
    make(api, "x")
    bind(api, "e1")

    def names(**query) -> list[str]:
        status, body = raw(api, "GET", PODS, query=query)
        assert status == 200, body
        return [i["metadata"]["name"] for i in body["items"]]

    assert names(labelSelector="spark-role=executor,app!=b") == ["e1"]
    assert names(labelSelector="app notin (a)") == [
        "e2",
        "x",
    ]  # notin matches objects without the key
    assert names(labelSelector="!spark-role") == ["x"]
    assert names(labelSelector="spark-role in (driver, executor),app==a") == ["d", "e1"]
    assert names(fieldSelector="spec.nodeName=node-a") == ["e1"]
    assert names(fieldSelector="status.phase=Pending,metadata.name!=x") == ["d", "e1", "e2"]
    status, body = raw(api, "GET", PODS, query={"fieldSelector": "spec.color=red"})
    assert (status, body["message"]) == (400, "field label not supported: spec.color")
    status, body = raw(api, "GET", PODS, query={"labelSelector": "a in (b"})
    assert status == 400


def test_paging_is_one_consistent_snapshot(api, emulator: EmbeddedApiServer) -> None:
    for i in range(7):
        make(api, f"p{i}")
    status, page1 = raw(api, "GET", PODS, query={"limit": 3})
    assert [i["metadata"]["name"] for i in page1["items"]] == ["p0", "p1", "p2"]
    token = page1["metadata"]["continue"]
    make(api, "p3a")  # created after the first page: not in this list
    raw(api, "DELETE", f"{PODS}/p5")  # deleted after the first page: still in this list
    seen = [i["metadata"]["name"] for i in page1["items"]]
    while token:
        status, page = raw(api, "GET", PODS, query={"limit": 3, "continue": token})
        assert status == 200
        assert page["metadata"]["resourceVersion"] == page1["metadata"]["resourceVersion"]
        seen += [i["metadata"]["name"] for i in page["items"]]
        token = page["metadata"].get("continue", "")
    assert seen == [f"p{i}" for i in range(7)]
    status, body = raw(
        api,
        "GET",
        PODS,
        query={"limit": 3, "continue": page1["metadata"]["continue"], "resourceVersion": "5"},
    )
    assert status == 400
    emulator.expire_continue_tokens()
    status, body = raw(
        api, "GET", PODS, query={"limit": 3, "continue": page1["metadata"]["continue"]}
    )
    assert (status, body["reason"]) == (410, "Expired")
    assert body["message"].startswith("The provided continue parameter is too old")
    assert body["metadata"]["continue"]  # a token to continue, inconsistently


def test_list_resource_version_rules(api) -> None:
    make(api, "a")
    status, body = raw(api, "GET", PODS, query={"resourceVersionMatch": "NotOlderThan"})
    assert status == 422
    status, body = raw(
        api, "GET", PODS, query={"resourceVersion": "0", "resourceVersionMatch": "Exact"}
    )
    assert status == 422
    status, body = raw(api, "GET", PODS, query={"resourceVersion": "999999"})
    assert (status, body["reason"]) == (504, "Timeout")
    _, listed = raw(api, "GET", PODS)
    rv = listed["metadata"]["resourceVersion"]
    assert (
        raw(api, "GET", PODS, query={"resourceVersion": rv, "resourceVersionMatch": "Exact"})[0]
        == 200
    )
    make(api, "b")
    status, body = raw(
        api, "GET", PODS, query={"resourceVersion": rv, "resourceVersionMatch": "Exact"}
    )
    assert (status, body["reason"]) == (410, "Expired")


# -------------------------------------------------------------------------- write rules
def test_update_conflicts_and_unconditional_updates(api) -> None:
    created = make(api, "u")
    stale = dict(created)
    raw(api, "PATCH", f"{PODS}/u", {"metadata": {"labels": {"a": "1"}}}, content_type=MERGE)
    status, body = raw(api, "PUT", f"{PODS}/u", stale)
    assert (status, body["reason"]) == (409, "Conflict")
    assert body["message"] == (
        'Operation cannot be fulfilled on pods "u": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    _, fresh = raw(api, "GET", f"{PODS}/u")
    fresh["metadata"]["labels"]["b"] = "2"
    del fresh["metadata"]["resourceVersion"]
    assert raw(api, "PUT", f"{PODS}/u", fresh)[0] == 200  # pods allow unconditional updates
    app_path = "/apis/sparkoperator.k8s.io/v1beta2/namespaces/default/sparkapplications"
    _, app = raw(api, "POST", app_path, {"metadata": {"name": "pi"}, "spec": {"mode": "cluster"}})
    del app["metadata"]["resourceVersion"]
    status, body = raw(api, "PUT", f"{app_path}/pi", app)
    assert status == 422 and "must be specified for an update" in body["message"]
    status, _ = raw(
        api,
        "PATCH",
        f"{app_path}/pi",
        {"spec": {"mode": "client"}},
        content_type="application/strategic-merge-patch+json",
    )
    assert status == 415


def test_pod_spec_is_immutable_but_status_is_separate(api) -> None:
    make(api, "i")
    status, body = raw(
        api, "PATCH", f"{PODS}/i", {"spec": {"restartPolicy": "Never"}}, content_type=MERGE
    )
    assert status == 422 and "pod updates may not change fields" in body["message"]
    status, body = raw(
        api,
        "PATCH",
        f"{PODS}/i/status",
        {"status": {"phase": "Running"}, "metadata": {"labels": {"z": "1"}}},
        content_type=MERGE,
    )
    assert status == 200
    assert body["status"]["phase"] == "Running" and "z" not in (
        body["metadata"].get("labels") or {}
    )


def test_strategic_merge_json_patch_and_apply(api) -> None:
    raw(
        api,
        "POST",
        PODS,
        {
            "metadata": {"name": "s"},
            "spec": {
                "containers": [{"name": "a", "image": "img:1"}, {"name": "b", "image": "img:1"}]
            },
        },
    )
    status, body = raw(
        api,
        "PATCH",
        f"{PODS}/s",
        {"spec": {"containers": [{"name": "b", "image": "img:2"}]}},
        content_type="application/strategic-merge-patch+json",
    )
    assert status == 200
    assert [(c["name"], c["image"]) for c in body["spec"]["containers"]] == [
        ("a", "img:1"),
        ("b", "img:2"),
    ]
    ops = [{"op": "test", "path": "/metadata/name", "value": "other"}]
    status, body = raw(api, "PATCH", f"{PODS}/s", ops, content_type="application/json-patch+json")
    assert status == 422
    status, body = raw(
        api,
        "PATCH",
        f"{PODS}/s",
        {"metadata": {"resourceVersion": "1", "labels": {"a": "b"}}},
        content_type=MERGE,
    )
    assert (status, body["reason"]) == (409, "Conflict")


def test_dry_run_changes_nothing(api, emulator: EmbeddedApiServer) -> None:
    make(api, "keep")
    emulator.clear_audit()
    status, body = raw(api, "POST", PODS, pod("ghost"), query={"dryRun": "All"})
    assert status == 201 and body["metadata"]["name"] == "ghost"
    assert (
        raw(
            api,
            "PATCH",
            f"{PODS}/keep",
            {"metadata": {"labels": {"a": "b"}}},
            query={"dryRun": "All"},
            content_type=MERGE,
        )[0]
        == 200
    )
    assert raw(api, "DELETE", f"{PODS}/keep", query={"dryRun": "All"})[0] == 200
    _, listed = raw(api, "GET", PODS)
    assert [(p["metadata"]["name"], p["metadata"].get("labels")) for p in listed["items"]] == [
        ("keep", {})
    ]
    assert emulator.audit_writes() == []


# ------------------------------------------------------------------------------- delete
def test_graceful_delete_shortening_and_finalizers(api) -> None:
    make(api, "g")
    bind(api, "g")
    _, deleting = raw(api, "DELETE", f"{PODS}/g")
    assert deleting["metadata"]["deletionGracePeriodSeconds"] == 30
    _, shorter = raw(api, "DELETE", f"{PODS}/g", {"gracePeriodSeconds": 5})
    assert shorter["metadata"]["deletionGracePeriodSeconds"] == 5
    _, longer = raw(api, "DELETE", f"{PODS}/g", {"gracePeriodSeconds": 60})
    assert longer["metadata"]["deletionGracePeriodSeconds"] == 5  # may only shorten
    raw(api, "DELETE", f"{PODS}/g", {"gracePeriodSeconds": 0})
    assert raw(api, "GET", f"{PODS}/g")[0] == 404
    # grace 0 with a finalizer: marked, kept until the finalizer goes
    make(api, "f")
    raw(
        api,
        "PATCH",
        f"{PODS}/f",
        {"metadata": {"finalizers": ["batch.kubernetes.io/job-tracking"]}},
        content_type=MERGE,
    )
    raw(api, "DELETE", f"{PODS}/f", {"gracePeriodSeconds": 0})
    status, kept = raw(api, "GET", f"{PODS}/f")
    assert status == 200 and kept["metadata"]["deletionTimestamp"]
    status, _body = raw(
        api,
        "PATCH",
        f"{PODS}/f",
        {"metadata": {"finalizers": ["x", "batch.kubernetes.io/job-tracking"]}},
        content_type=MERGE,
    )
    assert status == 422  # no new finalizers on a deleting object
    raw(api, "PATCH", f"{PODS}/f", {"metadata": {"finalizers": None}}, content_type=MERGE)
    assert raw(api, "GET", f"{PODS}/f")[0] == 404


def test_a_pod_deleted_at_once_is_marked_before_it_goes(api) -> None:
    """kube-apiserver's pod strategy (CheckGracefulDelete) gives a pod that never scheduled, or
    one deleted with --grace-period=0 --force, a graceful deletion of 0 seconds: the registry
    writes deletionTimestamp and deletionGracePeriodSeconds 0, then deletes. Watchers see
    MODIFIED then DELETED, both marked, so a watch's last sight of a pending executor that Spark
    deleted says it was deleted. Other kinds have no grace: they go unmarked."""
    from kubernetes import client, watch

    make(api, "pending")
    make(api, "bound")
    bind(api, "bound")
    rv = raw(api, "GET", PODS)[1]["metadata"]["resourceVersion"]
    status, gone = raw(api, "DELETE", f"{PODS}/pending")
    assert status == 200
    assert gone["metadata"]["deletionGracePeriodSeconds"] == 0
    assert gone["metadata"]["deletionTimestamp"]
    raw(api, "DELETE", f"{PODS}/bound", {"gracePeriodSeconds": 0})
    seen = [
        (
            e["type"],
            e["raw_object"]["metadata"]["name"],
            e["raw_object"]["metadata"].get("deletionGracePeriodSeconds"),
            bool(e["raw_object"]["metadata"].get("deletionTimestamp")),
        )
        for e in watch.Watch().stream(
            client.CoreV1Api(api).list_namespaced_pod,
            "default",
            resource_version=rv,
            timeout_seconds=1,
        )
    ]
    assert seen == [
        ("MODIFIED", "pending", 0, True),
        ("DELETED", "pending", 0, True),
        ("MODIFIED", "bound", 0, True),
        ("DELETED", "bound", 0, True),
    ]
    maps = "/api/v1/namespaces/default/configmaps"
    assert raw(api, "POST", maps, {"metadata": {"name": "c"}})[0] == 201
    status, gone = raw(api, "DELETE", f"{maps}/c")
    assert status == 200 and "deletionTimestamp" not in gone["metadata"]


def test_preconditions(api) -> None:
    created = make(api, "p")
    status, body = raw(api, "DELETE", f"{PODS}/p", {"preconditions": {"uid": "0000"}})
    assert (status, body["reason"]) == (409, "Conflict")
    assert body["message"].startswith(
        'Operation cannot be fulfilled on Pod "p": the UID in the precondition (0000) does not '
        "match the UID in record"
    )
    status, body = raw(api, "DELETE", f"{PODS}/p", {"preconditions": {"resourceVersion": "1"}})
    assert status == 409
    assert (
        raw(api, "DELETE", f"{PODS}/p", {"preconditions": {"uid": created["metadata"]["uid"]}})[0]
        == 200
    )


def _owned(api, name: str, owner: dict, block: bool = True) -> None:
    body = pod(name)
    body["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": block,
        }
    ]
    assert raw(api, "POST", PODS, body)[0] == 201


def test_propagation_background_orphan_foreground(api) -> None:
    driver = make(api, "drv")
    _owned(api, "exec-1", driver)
    bind(api, "exec-1")
    raw(api, "DELETE", f"{PODS}/drv", {"propagationPolicy": "Background"})
    _, ex = raw(api, "GET", f"{PODS}/exec-1")
    assert ex["metadata"]["deletionTimestamp"]  # garbage-collected gracefully: Terminating

    driver = make(api, "drv2")
    _owned(api, "exec-2", driver)
    raw(api, "DELETE", f"{PODS}/drv2", {"propagationPolicy": "Orphan"})
    _, ex = raw(api, "GET", f"{PODS}/exec-2")
    assert "ownerReferences" not in ex["metadata"] and not ex["metadata"].get("deletionTimestamp")

    driver = make(api, "drv3")
    bind(api, "drv3")
    _owned(api, "exec-3", driver)
    bind(api, "exec-3")
    raw(api, "DELETE", f"{PODS}/drv3", {"propagationPolicy": "Foreground", "gracePeriodSeconds": 0})
    _, owner = raw(api, "GET", f"{PODS}/drv3")
    assert "foregroundDeletion" in owner["metadata"]["finalizers"]  # waits for its dependent
    raw(api, "DELETE", f"{PODS}/exec-3", {"gracePeriodSeconds": 0})
    assert raw(api, "GET", f"{PODS}/drv3")[0] == 404


def test_dependents_with_a_second_live_owner_survive(api) -> None:
    driver = make(api, "drv")
    other = make(api, "other")
    body = pod("exec")
    body["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": "drv",
            "uid": driver["metadata"]["uid"],
            "controller": True,
        },
        {"apiVersion": "v1", "kind": "Pod", "name": "other", "uid": other["metadata"]["uid"]},
    ]
    raw(api, "POST", PODS, body)
    raw(api, "DELETE", f"{PODS}/drv")
    status, ex = raw(api, "GET", f"{PODS}/exec")
    assert status == 200
    assert [r["name"] for r in ex["metadata"]["ownerReferences"]] == ["other"]


def test_events_expire_after_the_ttl() -> None:
    clock = ManualClock(datetime(2026, 3, 1, tzinfo=UTC))
    with EmbeddedApiServer(EmulatorOptions(clock=clock)) as server:
        from kubernetes import config

        api = config.new_client_from_config_dict(server.kubeconfig())
        events = "/api/v1/namespaces/default/events"
        raw(
            api,
            "POST",
            events,
            {
                "metadata": {"name": "e1"},
                "involvedObject": {"kind": "Pod", "name": "p"},
                "reason": "Killing",
            },
        )
        clock.advance(1800)
        raw(
            api,
            "POST",
            events,
            {
                "metadata": {"name": "e2"},
                "involvedObject": {"kind": "Pod", "name": "p"},
                "reason": "Killing",
            },
        )
        clock.advance(1801)
        _, listed = raw(api, "GET", events)
        assert [e["metadata"]["name"] for e in listed["items"]] == ["e2"]
        _, as_v1 = raw(api, "GET", "/apis/events.k8s.io/v1/namespaces/default/events")
        assert as_v1["items"][0]["regarding"] == {"kind": "Pod", "name": "p"}
        api.close()


@pytest.mark.parametrize("path", ["/version", "/healthz", "/livez", "/readyz"])
def test_anonymous_paths_and_401(emulator: EmbeddedApiServer, path: str) -> None:
    import ssl
    import urllib.request

    ctx = ssl.create_default_context(cadata=emulator.ca_pem.decode())
    with urllib.request.urlopen(emulator.url + path, context=ctx, timeout=10) as resp:
        assert resp.status == 200
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(emulator.url + "/api/v1/pods", context=ctx, timeout=10)
    assert err.value.code == 401
    assert orjson.loads(err.value.read())["reason"] == "Unauthorized"
    err.value.close()


def test_create_resets_status_of_kinds_with_a_status_subresource(api) -> None:
    status, body = raw(
        api, "POST", PODS, {**pod("s"), "status": {"phase": "Running", "podIP": "1.2.3.4"}}
    )
    assert status == 201
    assert body["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    status, body = raw(
        api,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        {"metadata": {"name": "c"}, "data": {"a": "b"}},
    )
    assert body["data"] == {"a": "b"}


def test_a_uid_in_a_patch_is_a_precondition(api) -> None:
    created = make(api, "pinned")
    status, body = raw(
        api,
        "PATCH",
        f"{PODS}/pinned",
        {"metadata": {"uid": "0000", "labels": {"a": "b"}}},
        content_type=MERGE,
    )
    assert (status, body["reason"]) == (409, "Conflict")
    assert "Precondition failed: UID in precondition: 0000" in body["message"]
    uid = created["metadata"]["uid"]
    assert (
        raw(
            api,
            "PATCH",
            f"{PODS}/pinned",
            {"metadata": {"uid": uid, "labels": {"a": "b"}}},
            content_type=MERGE,
        )[0]
        == 200
    )


def test_the_date_header_holds_for_a_clock_in_any_time_zone(tmp_path) -> None:
    """The Date header is written on every answer: a clock that tells UTC as another tzinfo
    (zoneinfo's UTC, an offset) must not break them all (email.utils wants timezone.utc)."""
    import urllib.request
    from datetime import timedelta, timezone
    from email.utils import parsedate_to_datetime
    from zoneinfo import ZoneInfo

    for tz in (ZoneInfo("UTC"), timezone(timedelta(hours=2))):
        clock = ManualClock(datetime(2026, 1, 1, 12, 0, tzinfo=tz))
        with (
            EmbeddedApiServer(EmulatorOptions(clock=clock, tls=False)) as server,
            urllib.request.urlopen(server.url + "/version") as answer,
        ):
            assert answer.status == 200
            assert parsedate_to_datetime(answer.headers["Date"]) == clock.now()


def _exchange(port: int, data: bytes) -> bytes:
    """What the TLS port sends back to ``data`` sent in plain text, until it closes."""
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(data)
        received = b""
        while chunk := conn.recv(4096):
            received += chunk
        return received


def test_plain_http_to_the_tls_port_is_answered_as_go_answers_it(emulator, api) -> None:
    """kube-apiserver's TLS server (Go's) answers a request that starts like HTTP with a 400."""
    request = b"GET /api/v1/pods HTTP/1.1\r\nHost: x\r\nUser-Agent: kubectl\r\n\r\n"
    assert _exchange(emulator.port, request) == (
        b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"
    )
    assert _exchange(emulator.port, b"\x00\x01not tls, not http\r\n") == b""  # closed
    status, _ = raw(api, "GET", "/api/v1/namespaces/default/pods")  # TLS is still served
    assert status == 200


def test_a_client_that_says_nothing_is_closed(emulator, monkeypatch) -> None:
    import socket

    from kubectl_spark.cluster.apiserver import sniff

    monkeypatch.setattr(sniff, "FIRST_BYTES_TIMEOUT", 0.3)
    with socket.create_connection(("127.0.0.1", emulator.port), timeout=10) as conn:
        assert conn.recv(1) == b""  # closed by the server, not left open
