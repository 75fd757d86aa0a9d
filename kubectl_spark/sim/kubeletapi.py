"""The simulated kubelets' HTTPS endpoint, for a real kube-apiserver to read logs from.

A real kube-apiserver answers ``pods/<name>/log`` by asking the kubelet of the pod's node
(``https://<InternalIP>:<daemonEndpoints.kubeletEndpoint.Port>/containerLogs/<ns>/<pod>/<c>``,
pkg/kubelet/server/server.go) and passing its answer on; a non-200 answer's body becomes the
message of the Status it returns. Each simulated node gets its own port on 127.0.0.1, closed
while the node is down or cut off, so that the API server's request fails as it would.

Without TLS client verification: kube-apiserver, started without
``--kubelet-certificate-authority``, does not verify the kubelet's certificate either.
"""

from __future__ import annotations

import contextlib
import ssl
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import trustme

from kubectl_spark.knowledge.clock import Clock
from kubectl_spark.knowledge.podlogs import ContainerLog, LogQuery, LogStore

FOLLOW_POLL_SECONDS = 0.2
FOLLOW_MAX_SECONDS = 600.0


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    api: KubeletApi


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        del format, args  # quiet: the test output is no place for an access log

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        segments = [unquote(s) for s in parts.path.split("/") if s]
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        if len(segments) != 4 or segments[0] != "containerLogs":
            self._text(404, "404 page not found")
            return
        _, namespace, pod, container = segments
        self.server.api.serve_logs(self, namespace, pod, container, query)

    def _text(self, status: int, body: str) -> None:
        data = body.encode("utf-8", "surrogateescape")
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class KubeletApi:
    """Logs of every simulated container, and one listening port per reachable node."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.logs = LogStore()
        self.uids: dict[tuple[str, str], str] = {}  # (namespace, pod) → the uid last written
        self.ports: dict[str, int] = {}
        self._servers: dict[str, _Server] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._lock = threading.Lock()
        ca = trustme.CA(organization_name="kubectl-spark simulated kubelets")
        cert = ca.issue_cert("127.0.0.1", "localhost")
        self._ssl = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        cert.configure_cert(self._ssl)

    # ------------------------------------------------------------------------------- nodes
    def open(self, node: str) -> int:
        """Listen for ``node`` (on the port it had before, so the Node object stays right)."""
        with self._lock:
            if node in self._servers:
                return self.ports[node]
            server = _Server(("127.0.0.1", self.ports.get(node, 0)), _Handler)
            server.api = self
            server.socket = self._ssl.wrap_socket(server.socket, server_side=True)
            self.ports[node] = int(server.server_address[1])
            self._servers[node] = server
            thread = threading.Thread(
                target=server.serve_forever,
                kwargs={"poll_interval": 0.2},
                daemon=True,
                name=f"kubelet-{node}",
            )
            self._threads[node] = thread
            thread.start()
            return self.ports[node]

    def close(self, node: str) -> None:
        """The node is down or cut off: the API server's requests find nobody listening."""
        with self._lock:
            server = self._servers.pop(node, None)
            thread = self._threads.pop(node, None)
        if server is not None:
            server.shutdown()
            server.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def reachable(self, nodes: set[str]) -> None:
        for node in list(self._servers):
            if node not in nodes:
                self.close(node)
        for node in nodes:
            if node in self.ports:
                self.open(node)

    def stop(self) -> None:
        for node in list(self._servers):
            self.close(node)

    # -------------------------------------------------------------------------------- logs
    def append(self, namespace: str, pod: str, uid: str, container: str, text: str) -> None:
        with self._lock:
            self.uids[(namespace, pod)] = uid
            self.logs.append(uid, container, text, self.clock.now())

    def rotate(self, namespace: str, pod: str, uid: str, container: str) -> None:
        with self._lock:
            self.uids[(namespace, pod)] = uid
            self.logs.rotate(uid, container)

    def serve_logs(
        self,
        handler: _Handler,
        namespace: str,
        pod: str,
        container: str,
        query: dict[str, str],
    ) -> None:
        uid = self.uids.get((namespace, pod))
        entry = self.logs.get(uid, container) if uid else None
        previous = query.get("previous") == "true"
        if previous:
            if entry is None or entry.previous is None:
                handler._text(
                    400, f'previous terminated container "{container}" in pod "{pod}" not found'
                )
                return
            log = entry.previous
        else:
            if entry is None:
                handler._text(
                    400,
                    f'container "{container}" in pod "{pod}" is waiting to start: ContainerCreating',
                )
                return
            log = entry.current
        try:
            wanted = LogQuery.parse(query, self.clock.now(), lambda v: v == "true")
        except ValueError as exc:
            handler._text(400, f"invalid log options: {exc}")
            return
        with self._lock:
            data = wanted.body(log)
            seen = len(log.lines)
        stamps = wanted.timestamps
        if query.get("follow") != "true" or previous:
            handler.send_response(200)
            handler.send_header("Content-Type", "text/plain; charset=utf-8")
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
            return
        handler.send_response(200)
        handler.send_header("Content-Type", "text/plain; charset=utf-8")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        self._follow(handler, data, log, seen, stamps, lambda: entry.current is not log)

    def _follow(
        self,
        handler: _Handler,
        first: bytes,
        log: ContainerLog,
        seen: int,
        stamps: bool,
        over: Callable[[], bool],
    ) -> None:
        """New lines as they come, until the run followed is over, or the cap.

        A run is over once its container runs again (its log is another): the kubelet ends a
        follow with its container's run. (It ends it sooner, as the container stops; this
        kubelet knows only the logs.)
        """

        def chunk(data: bytes) -> None:
            handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            handler.wfile.flush()

        deadline = time.monotonic() + FOLLOW_MAX_SECONDS
        with contextlib.suppress(OSError):
            if first:
                chunk(first)
            while time.monotonic() < deadline:
                time.sleep(FOLLOW_POLL_SECONDS)
                with self._lock:
                    more = log.text(timestamps=stamps, start=seen)
                    seen = len(log.lines)
                if more:
                    chunk(more.encode("utf-8", "surrogateescape"))
                if over():
                    break
            handler.wfile.write(b"0\r\n\r\n")
