"""What an in-cluster recorder serves on its port: its metrics, and what it kept, for the plugin.

The plugin reaches it through the API server's service proxy
(``/api/v1/namespaces/<ns>/services/<name>:http/proxy/v1/...``, ``kube/recorder_api.py``), so a
person needs no credentials beyond their kubeconfig's and no port-forward:

- ``/metrics``: Prometheus' text format (``app/metrics.py``);
- ``/healthz``: ``ok``;
- ``/v1/kept?kind=pods|events[&namespace=NS]``: the kept states (``KeptList``);
- ``/v1/logs?namespace=NS&uid=UID[&previous=true]``: a gone container's last lines, 404 if none.

Pods are served as ``core.slim`` keeps them: what the analysis reads, without the containers'
environment (where Spark configurations carry credentials) or volumes. Kept log lines are served
as kept: whoever can reach the port reads them, as whoever may ``get pods/log`` could before the
pod went (docs/recorder.md says how to fence the port with a NetworkPolicy). The store is opened
read-only per request: the recording thread keeps its own connection.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson

from kubectl_spark.core.slim import slim
from kubectl_spark.errors import KubectlSparkError

API_VERSION = "kubectl-spark/v1"
KINDS = ("pods", "events")
# A request's whole head must arrive within this: a client that sends half of one (a slow
# loris) holds a thread this long, no longer.
REQUEST_SECONDS = 10.0


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
            return 200, "application/json", orjson.dumps(self._kept(kind, query.get("namespace")))
        if path == "/v1/logs":
            namespace, uid = query.get("namespace", ""), query.get("uid", "")
            if not namespace or not uid:
                return 400, "text/plain", b"namespace and uid are required\n"
            kept = self._tail(namespace, uid, previous=query.get("previous") == "true")
            if kept is None:
                return 404, "text/plain", b"no lines kept for this pod\n"
            return 200, "application/json", orjson.dumps(kept)
        return 404, "text/plain", b"not found\n"

    def _kept(self, kind: str, namespace: str | None) -> dict[str, Any]:
        from kubectl_spark.history.store import HistoryStore

        with HistoryStore(self.path, create=False) as store:
            rows = store.load(self.scope, kind, namespace or None)
        return {
            "apiVersion": API_VERSION,
            "kind": "KeptList",
            "context": self.scope.context,
            "items": [
                {"object": slim(kind, obj), "seenAt": seen, "deletedAt": deleted}
                for obj, seen, deleted in rows
            ],
        }

    def _tail(self, namespace: str, uid: str, *, previous: bool) -> dict[str, Any] | None:
        from kubectl_spark.history.store import HistoryStore
        from kubectl_spark.kube.logtails import kept_tail

        with HistoryStore(self.path, create=False) as store:
            return kept_tail(store, self.scope, namespace, uid, previous=previous)
