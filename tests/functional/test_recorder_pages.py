"""The recorder answers a page at a time, and the plugin pages through (issue 49, point 2).

One unpaged read of the store's row cap (500,000 Events) used to answer 434 MB and take the
recorder to 2.4 GiB, over the 1 GiB its manifests give it. Now every answer is at most a page
(``limit`` items, ``MAX_ANSWER_BYTES``), and a reader follows ``metadata.continue``.
"""

from __future__ import annotations

import json
import ssl
import subprocess
import sys
import textwrap
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import orjson
import pytest

from kubectl_spark.app import recorder_http
from kubectl_spark.core.recorder_manifests import API_PATH, KEPT_RESOURCES
from kubectl_spark.kube import recorder_api
from kubectl_spark.kube.incluster import ServiceRef
from kubectl_spark.localstore import MAX_ROWS, LocalStore, Scope
from tests.recorder_access import ADMIN_TOKEN, access, read_recorder

SCOPE = Scope("https://cluster.example:6443", "prod")
MIB = 1 << 20
MEMORY_LIMIT = 1024 * MIB  # the recorder's in its manifests (core/recorder_manifests.py)


def _event(n: int) -> dict[str, Any]:
    """An Event as kube-apiserver writes one about a lost executor (about 700 bytes)."""
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"app-{n // 100}-exec-{n % 100}.{n:016x}",
            "namespace": f"team-{n % 7}",
            "uid": f"00000000-0000-4000-8000-{n:012d}",
            "resourceVersion": str(1000 + n),
            "creationTimestamp": "2026-12-05T03:00:00Z",
        },
        "involvedObject": {
            "kind": "Pod",
            "namespace": f"team-{n % 7}",
            "name": f"app-{n // 100}-exec-{n % 100}",
            "uid": f"11111111-0000-4000-8000-{n:012d}",
            "apiVersion": "v1",
            "resourceVersion": str(900 + n),
            "fieldPath": "spec.containers{spark-kubernetes-executor}",
        },
        "reason": "Killing",
        "message": "Stopping container spark-kubernetes-executor: the executor was lost after "
        "its container was OOM-killed by the kernel (memory limit 4Gi)",
        "source": {"component": "kubelet", "host": f"node-{n % 50}"},
        "firstTimestamp": "2026-12-05T03:00:00Z",
        "lastTimestamp": "2026-12-05T03:00:00Z",
        "count": 1,
        "type": "Normal",
        "reportingComponent": "kubelet",
        "reportingInstance": f"node-{n % 50}",
    }


def _fill(path: Path, count: int) -> None:
    """``count`` Events in the store, in the rows ``LocalStore.record`` writes, in batches."""
    with LocalStore(path) as store:
        assert store.db is not None
        for start in range(0, count, 50_000):
            rows = [
                (SCOPE.cluster, SCOPE.context, f"team-{n % 7}", "events",
                 f"00000000-0000-4000-8000-{n:012d}", 1000 + n, "2026-12-05T03:00:00Z", None,
                 orjson.dumps(_event(n)))
                for n in range(start, min(count, start + 50_000))
            ]  # fmt: skip
            store.db.execute("BEGIN")
            store.db.executemany("INSERT INTO objects VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
            store.db.execute("COMMIT")


SERVE = textwrap.dedent(
    """
    import sys, threading
    from pathlib import Path
    from kubectl_spark.app.recorder_http import RecorderServer
    from kubectl_spark.localstore import Scope
    from tests.recorder_access import access
    server = RecorderServer(
        Path(sys.argv[1]), Scope(sys.argv[2], sys.argv[3]), None, 0, "127.0.0.1", access()
    )
    print(server.port, flush=True)
    threading.Event().wait()
    """
)


def _path(query: dict[str, str]) -> str:
    """The recorder's path for ``kind`` (and ``namespace``) with the rest as its query."""
    rest = dict(query)
    kind, namespace = rest.pop("kind"), rest.pop("namespace", "")
    where = f"/namespaces/{namespace}" if namespace else ""
    return f"{API_PATH}{where}/{KEPT_RESOURCES[kind]}?{urllib.parse.urlencode(rest)}"


def _get(port: int, query: dict[str, str]) -> tuple[dict[str, Any], int]:
    """A page (and its size in bytes) as the admin asks it; raises on anything but 200."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    request = urllib.request.Request(
        f"https://127.0.0.1:{port}{_path(query)}",
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
    )
    with urllib.request.urlopen(request, timeout=120, context=context) as answer:
        body = answer.read()
    page: dict[str, Any] = json.loads(body)
    return page, len(body)


def _peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    pytest.skip("no VmHWM in /proc")


@pytest.mark.slow
def test_500000_kept_events_are_read_in_pages_under_the_memory_limit(tmp_path: Path) -> None:
    db = tmp_path / "recorder.db"
    _fill(db, MAX_ROWS)
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVE, str(db), SCOPE.cluster, SCOPE.context],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        # the unpaged read of the report: a page, not the store
        first, size = _get(port, {"kind": "events"})
        assert size <= recorder_http.MAX_ANSWER_BYTES + 4096
        assert first["metadata"]["continue"] and 0 < len(first["items"]) < MAX_ROWS
        seen = 0
        uids: set[str] = set()
        token = ""
        pages = 0
        while True:
            page, size = _get(port, {"kind": "events", **({"continue": token} if token else {})})
            assert size <= recorder_http.MAX_ANSWER_BYTES + 4096
            pages += 1
            seen += len(page["items"])
            uids.update(i["object"]["metadata"]["uid"] for i in page["items"])
            token = page["metadata"].get("continue", "")
            if not token:
                break
        assert seen == len(uids) == MAX_ROWS, (seen, len(uids), pages)
        peak = _peak_rss(proc.pid)
        # Far under the limit: a page at a time (it was 2.4 GiB in one read).
        assert peak < MEMORY_LIMIT // 4, f"peak {peak // MIB} MiB"
    finally:
        proc.kill()
        proc.communicate()


class _Proxyless:
    """The plugin's API handle, reaching the recorder's port directly over real HTTPS (the API
    server's aggregation layer stands between them in a cluster: test_recorder_proxy_on_both)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.asked: list[dict[str, str]] = []

    def request(self, method: str, path: str, *, query: list[tuple[str, Any]], **_: Any) -> Any:
        assert method == "GET" and path.startswith(API_PATH)
        self.asked.append(dict(query))
        status, page = read_recorder(
            self.port, f"{path}?{urllib.parse.urlencode(query)}", ADMIN_TOKEN
        )
        assert status == 200, page
        return page


def test_the_plugin_follows_continue_to_the_last_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "recorder.db"
    _fill(db, 3_000)
    monkeypatch.setattr(recorder_http, "MAX_ANSWER_BYTES", 64 * 1024)
    server = recorder_http.RecorderServer(db, SCOPE, None, 0, "127.0.0.1", access())
    try:
        api = _Proxyless(server.port)
        ref = ServiceRef("kubectl-spark", "kubectl-spark-recorder", "http")
        rows = recorder_api.kept(api, ref, "events", None)
        assert len(rows) == len({r[0]["metadata"]["uid"] for r in rows}) == 3_000
        assert len(api.asked) > 10 and all("continue" in q for q in api.asked[1:])
        in_one = recorder_api.kept(api, ref, "events", "team-3")
        assert {r[0]["metadata"]["namespace"] for r in in_one} == {"team-3"}
        assert len(in_one) == len([n for n in range(3_000) if n % 7 == 3])
    finally:
        server.close()


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"kind": "events", "limit": "0"}, "limit must be a whole number"),
        ({"kind": "events", "limit": "abc"}, "limit must be a whole number"),
        ({"kind": "events", "continue": "bm90LWEtdG9rZW4="}, "continue is not a token"),
        ({"kind": "events", "app": "x"}, "app selects pods only"),
    ],
)
def test_bad_page_requests_are_400(tmp_path: Path, query: dict[str, str], message: str) -> None:
    db = tmp_path / "recorder.db"
    _fill(db, 10)
    server = recorder_http.RecorderServer(db, SCOPE, None, 0, "127.0.0.1", access())
    try:
        with pytest.raises(urllib.error.HTTPError) as refused:
            _get(server.port, query)
        assert refused.value.code == 400
        assert message in refused.value.read().decode()
    finally:
        server.close()


def test_limit_and_app_select_what_a_page_holds(tmp_path: Path) -> None:
    db = tmp_path / "recorder.db"
    with LocalStore(db) as store:
        pods = [
            ({"metadata": {"name": f"p{n}", "namespace": "ns", "uid": f"u{n}",
                           "labels": {"spark-app-name": "wanted" if n % 2 else "other"}}}, False)
            for n in range(10)
        ]  # fmt: skip
        store.record(SCOPE, "pods", pods)
    server = recorder_http.RecorderServer(db, SCOPE, None, 0, "127.0.0.1", access())
    try:
        page, _ = _get(server.port, {"kind": "pods", "app": "wanted", "limit": "2"})
        assert [i["object"]["metadata"]["name"] for i in page["items"]] == ["p1", "p3"]
        rest, _ = _get(
            server.port, {"kind": "pods", "app": "wanted", "continue": page["metadata"]["continue"]}
        )
        assert [i["object"]["metadata"]["name"] for i in rest["items"]] == ["p5", "p7", "p9"]
        assert "continue" not in rest["metadata"]
    finally:
        server.close()
