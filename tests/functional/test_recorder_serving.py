"""The recorder's HTTP API over a socket, and a history server that does not answer.

(The recorder's flags and what it keeps are read without a server: tests/unit/test_recorder_reading.py.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import trustme

from kubectl_spark.app.metrics import RecorderMetrics
from kubectl_spark.app.recorder_http import RecorderServer
from kubectl_spark.core.recorder_manifests import API_PATH
from kubectl_spark.kube.delegation import Caller
from kubectl_spark.localstore import LocalStore, Scope
from tests.recorder_access import (
    ADMIN_TOKEN,
    PROXY_CLIENT,
    Decisions,
    access,
    read_recorder,
    recorded_pod,
)


def test_the_recorder_serves_slim_pods_events_and_kept_lines(tmp_path: Path) -> None:
    db = tmp_path / "history.db"
    scope = Scope("https://cluster", "in-cluster")
    with LocalStore(db) as store:
        store.record(
            scope,
            "pods",
            [(recorded_pod("a", "7", "Failed", AWS_SECRET_ACCESS_KEY="s3cr3t"), True)],
        )
        store.record(scope, "events", [({"metadata": {"uid": "e", "namespace": "ns"}}, False)])
        store.record(scope, "logs", [({"metadata": {"uid": "a/c/0/False", "namespace": "ns",
                                                    "resourceVersion": "1"},
                                       "pod": {"uid": "a"}, "text": "OutOfMemoryError\n",
                                       "restartCount": 0, "exitCode": 52}, False)])  # fmt: skip
    decisions = Decisions()
    server = RecorderServer(db, scope, RecorderMetrics(), 0, "127.0.0.1", access(decisions))

    def get(path: str) -> tuple[int, Any]:
        return read_recorder(server.port, path, ADMIN_TOKEN)

    try:
        status, kept = get(f"{API_PATH}/namespaces/ns/keptpods")
        assert status == 200
        assert kept["kind"] == "KeptList" and kept["context"] == "in-cluster"
        (item,) = kept["items"]
        assert item["object"]["metadata"]["uid"] == "a" and item["deletedAt"]
        assert "s3cr3t" not in json.dumps(kept)  # the containers' environment is not served
        assert decisions.asked[-1] == ("admin", {"verb": "list", "resource": "pods",
                                                 "namespace": "ns"})  # fmt: skip
        status, kept = get(f"{API_PATH}/keptevents")
        assert status == 200 and [i["object"]["metadata"]["uid"] for i in kept["items"]] == ["e"]
        assert decisions.asked[-1] == ("admin", {"verb": "list", "resource": "events",
                                                 "namespace": ""})  # fmt: skip
        status, tail = get(f"{API_PATH}/namespaces/ns/keptlogs/a")
        assert status == 200 and tail["text"] == "OutOfMemoryError\n"
        assert decisions.asked[-1][1] == {"verb": "get", "resource": "pods",
                                          "subresource": "log", "namespace": "ns"}  # fmt: skip
        assert get(f"{API_PATH}/namespaces/ns/keptlogs/zzz")[0] == 404
        assert get(f"{API_PATH}/keptlogs/a")[0] == 404  # a pod's lines are in its namespace
        assert get(f"{API_PATH}/namespaces/ns/keptsecrets")[0] == 404  # only what it keeps
        assert get("/v1/kept?kind=pods")[0] == 404  # the old unauthenticated paths are gone
        status, discovery = get(API_PATH)
        assert status == 200 and {r["name"] for r in discovery["resources"]} == {
            "keptpods", "keptevents", "keptlogs"
        }  # fmt: skip
        assert read_recorder(server.port, "/healthz") == (200, "ok\n")
        status, body = get("/metrics")
        assert status == 200 and "kubectl_spark_recorder_leader" in body
        assert decisions.asked[-1][1] == {"verb": "get", "path": "/metrics"}
        assert get("/nothing")[0] == 404
    finally:
        server.close()


def test_the_recorder_believes_only_its_front_proxy_and_reviewed_tokens(tmp_path: Path) -> None:
    """A user named in X-Remote-User counts only over the front proxy's certificate."""
    db = tmp_path / "history.db"
    scope = Scope("https://cluster", "in-cluster")
    LocalStore(db).close()
    front_proxy = trustme.CA()
    alice = Caller("alice", ("team-a",))
    decisions = Decisions(
        {"alice-token": alice}, allowed=lambda who, attrs: attrs.get("namespace") == "a"
    )
    server = RecorderServer(db, scope, None, 0, "127.0.0.1", access(decisions, front_proxy))
    port, kept_a, kept_b = (
        server.port,
        f"{API_PATH}/namespaces/a/keptpods",
        f"{API_PATH}/namespaces/b/keptpods",
    )
    headers = {"X-Remote-User": "alice", "X-Remote-Group": "team-a"}
    proxy_cert = front_proxy.issue_cert(PROXY_CLIENT, common_name=PROXY_CLIENT)
    other_name = front_proxy.issue_cert("someone-else", common_name="someone-else")
    try:
        # nobody: no credentials, an unknown token, a named user with no certificate
        for token, sent in (("", {}), ("nope", {}), ("", headers)):
            status, answer = read_recorder(port, kept_a, token, headers=sent)
            assert (status, answer["reason"]) == (401, "Unauthorized"), (token, sent)
        # the front proxy's certificate with a name it may not pass users on with
        assert read_recorder(port, kept_a, cert=other_name, headers=headers)[0] == 401
        # a certificate of another CA: no TLS session at all
        with pytest.raises(OSError):
            read_recorder(port, kept_a, cert=trustme.CA().issue_cert(
                PROXY_CLIENT, common_name=PROXY_CLIENT), headers=headers)  # fmt: skip
        # the front proxy passing alice on, and alice's own token: the same rights
        assert read_recorder(port, kept_a, cert=proxy_cert, headers=headers)[0] == 200
        assert decisions.asked[-1][0] == "alice"
        assert read_recorder(port, kept_a, "alice-token")[0] == 200
        status, answer = read_recorder(port, kept_b, cert=proxy_cert, headers=headers)
        assert status == 403 and answer["message"] == (
            'pods is forbidden: User "alice" cannot list resource "pods" in API group "" '
            'in the namespace "b"'
        )
        assert read_recorder(port, kept_b, "alice-token")[0] == 403
        # the proxy's certificate without a user is nobody (the aggregator always names one)
        assert read_recorder(port, kept_a, cert=proxy_cert)[0] == 401
    finally:
        server.close()


def test_a_history_server_that_does_not_answer_is_not_asked_fifty_times() -> None:
    import socket

    from kubectl_spark.kube.historyserver import read_finished

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # bound, never listening: every connection refused
        ids = [f"app-{i}" for i in range(40)]
        views = read_finished(f"http://127.0.0.1:{port}", ids)
    notes = [v["note"] for v in views.values()]
    assert len(notes) == 40
    skipped = [n for n in notes if "was not asked" in n]
    assert len(skipped) >= 40 - 8, notes  # at most the first batch of 8 tried
