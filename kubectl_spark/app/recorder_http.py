"""What an in-cluster recorder serves on its port: its metrics, and what it kept, for the plugin.

The plugin reaches it through the API server's service proxy
(``/api/v1/namespaces/<ns>/services/<name>:http/proxy/v1/...``, ``kube/recorder_api.py``), so a
person needs no credentials beyond their kubeconfig's and no port-forward:

- ``/metrics``: Prometheus' text format (``app/metrics.py``);
- ``/healthz``: ``ok``;
- ``/v1/kept?kind=pods|events[&namespace=NS][&app=APP][&limit=N][&continue=TOKEN]``: the kept
  states (``KeptList``), a page at a time as the API server pages a list: at most ``limit``
  items and ``MAX_ANSWER_BYTES`` of them, ``metadata.continue`` naming where the next page
  starts (issue 49: one unpaged read of 500,000 Events answered 434 MB and took the process to
  2.4 GiB); ``app`` keeps the pods of one application (its name or app id label);
- ``/v1/logs?namespace=NS&uid=UID[&previous=true]``: a gone container's last lines, 404 if none.

Pods are served as ``core.slim`` keeps them: what the analysis reads, without the containers'
environment (where Spark configurations carry credentials) or volumes. Kept log lines are served
as kept: whoever can reach the port reads them, as whoever may ``get pods/log`` could before the
pod went (docs/recorder.md says how to fence the port with a NetworkPolicy). The store is opened
read-only per request: the recording thread keeps its own connection.
"""

from __future__ import annotations

import base64
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson

from kubectl_spark.core.slim import slim
from kubectl_spark.errors import KubectlSparkError
from kubectl_spark.knowledge.labels import APACHE_APP, APP_ID, APP_NAME, OPERATOR_APP

API_VERSION = "kubectl-spark/v1"
KINDS = ("pods", "events")
# A request's whole head must arrive within this: a client that sends half of one (a slow
# loris) holds a thread this long, no longer.
REQUEST_SECONDS = 10.0
# An answer's items stop at this many bytes (at least one item): what one request costs the
# recorder is a page, never the store. The plugin pages through (kube/recorder_api.py).
MAX_ANSWER_BYTES = 4 << 20
MAX_LIMIT = 10_000
BATCH = 1_000  # rows read from the store at a time while a page fills
APP_LABELS = (APP_NAME, APP_ID, OPERATOR_APP, APACHE_APP)


class RecorderServer:
    """The recorder's HTTP port, served from a daemon thread until ``close``."""

    def __init__(self, path: Path, scope: Any, metrics: Any, port: int, address: str) -> None:
        self.path, self.scope, self.metrics = path, scope, metrics
        owner = self

        class Handler(BaseHTTPRequestHandler):
            timeout = REQUEST_SECONDS  # the socket's timeout for every read (StreamRequestHandler)

            def do_GET(self) -> None:
                owner.answer(self)

            def log_message(self, *_: Any) -> None:
                return None  # the recorder's own lines say what matters

        self.httpd = ThreadingHTTPServer((address, port), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        url = urlsplit(handler.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        try:
            status, content_type, body = self._route(url.path, query)
        except KubectlSparkError as exc:
            status, content_type, body = 503, "text/plain", f"{exc.message}\n".encode()
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    def _route(self, path: str, query: dict[str, str]) -> tuple[int, str, bytes]:
        if path == "/metrics":
            from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

            return 200, CONTENT_TYPE_LATEST, generate_latest(self.metrics.registry)
        if path == "/healthz":
            return 200, "text/plain", b"ok\n"
        if path == "/v1/kept":
            kind = query.get("kind", "")
            if kind not in KINDS:
                return 400, "text/plain", f"kind must be one of {', '.join(KINDS)}\n".encode()
            try:
                limit = _limit(query.get("limit", ""))
                after = _after(query.get("continue", ""))
            except ValueError as exc:
                return 400, "text/plain", f"{exc}\n".encode()
            if query.get("app") and kind != "pods":
                return 400, "text/plain", b"app selects pods only\n"
            page = self._kept(kind, query.get("namespace"), query.get("app"), limit, after)
            return 200, "application/json", page
        if path == "/v1/logs":
            namespace, uid = query.get("namespace", ""), query.get("uid", "")
            if not namespace or not uid:
                return 400, "text/plain", b"namespace and uid are required\n"
            kept = self._tail(namespace, uid, previous=query.get("previous") == "true")
            if kept is None:
                return 404, "text/plain", b"no lines kept for this pod\n"
            return 200, "application/json", orjson.dumps(kept)
        return 404, "text/plain", b"not found\n"

    def _kept(
        self, kind: str, namespace: str | None, app: str | None, limit: int, after: int
    ) -> bytes:
        """One page: at most ``limit`` items and about ``MAX_ANSWER_BYTES`` of them.

        Encoded an item at a time; ``metadata.continue`` is set when a matching item is left.
        """
        from kubectl_spark.history.store import HistoryStore

        items: list[bytes] = []
        size, sent_last, more = 0, after, False
        with HistoryStore(self.path, create=False) as store:
            cursor = after
            while not more:
                rows = store.page(self.scope, kind, namespace or None, after=cursor, limit=BATCH)
                if not rows:
                    break
                for rowid, body, seen, deleted in rows:
                    cursor = rowid
                    obj = orjson.loads(body)
                    if app and not _of_app(obj, app):
                        continue
                    item = orjson.dumps(
                        {"object": slim(kind, obj), "seenAt": seen, "deletedAt": deleted}
                    )
                    if items and (len(items) >= limit or size + len(item) > MAX_ANSWER_BYTES):
                        more = True
                        break
                    items.append(item)
                    size += len(item) + 1
                    sent_last = rowid
        head = orjson.dumps(
            {"apiVersion": API_VERSION, "kind": "KeptList", "context": self.scope.context}
        )
        meta = orjson.dumps({"continue": _token(sent_last)} if more else {})
        return b"".join((head[:-1], b',"metadata":', meta, b',"items":[', b",".join(items), b"]}"))

    def _tail(self, namespace: str, uid: str, *, previous: bool) -> dict[str, Any] | None:
        from kubectl_spark.history.store import HistoryStore
        from kubectl_spark.kube.logtails import kept_tail

        with HistoryStore(self.path, create=False) as store:
            return kept_tail(store, self.scope, namespace, uid, previous=previous)


def _limit(text: str) -> int:
    if not text:
        return MAX_LIMIT
    if not text.isdecimal() or not 0 < int(text) <= MAX_LIMIT:
        raise ValueError(f"limit must be a whole number from 1 to {MAX_LIMIT}")
    return int(text)


def _token(rowid: int) -> str:
    """Opaque to the reader, as the API server's continue tokens are."""
    return base64.urlsafe_b64encode(f"kept/1/{rowid}".encode()).decode()


def _after(token: str) -> int:
    if not token:
        return 0
    try:
        prefix, _, rowid = base64.urlsafe_b64decode(token.encode()).decode().rpartition("/")
    except (ValueError, UnicodeError):
        prefix, rowid = "", ""
    if prefix != "kept/1" or not rowid.isdecimal():
        raise ValueError("continue is not a token this recorder gave")
    return int(rowid)


def _of_app(obj: dict[str, Any], app: str) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return any(labels.get(key) == app for key in APP_LABELS)
