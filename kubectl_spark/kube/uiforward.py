"""A driver's Spark UI on a local port, reached through the API server's pod proxy.

``kubectl port-forward`` needs the kubelet's streaming endpoint (SPDY or WebSocket) and
``pods/portforward``; the pod proxy (``pods/<pod>:<port>/proxy``, ``get pods/proxy``) needs
neither, is what ``kubectl spark`` already reads Spark's executor list through
(``sparkapi.py``), and works with every credential the kubeconfig has. The UI is served at the
local port's root, so its own absolute links (``/jobs/``, ``/static/…``) keep working, which
they do not under ``kubectl proxy``'s long path. Like ``kubectl port-forward``, it listens on
127.0.0.1 only and reads: GET and HEAD.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from kubectl_spark import errors

from .client import Api
from .sparkapi import DEFAULT_UI_PORT

CHUNK = 65536


class UiForward:
    """One local port for one driver pod; ``stop`` closes it (the TUI does on exit)."""

    def __init__(
        self, connect: Callable[[], Api], namespace: str, pod: str, port: int = DEFAULT_UI_PORT
    ) -> None:
        self.namespace, self.pod, self.port = namespace, pod, port
        self.api = connect()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, name=f"spark-ui {pod}", daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/"

    def start(self) -> str:
        self.thread.start()
        return self.url

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.api.close()

    def proxied(self, target: str) -> tuple[int, str, bytes]:
        """(status, content type, body) of ``target`` (path and query) on the driver's UI."""
        parts = urlsplit(target)
        path = f"/api/v1/namespaces/{self.namespace}/pods/{self.pod}:{self.port}/proxy{parts.path}"
        try:
            response = self.api.request(
                "GET",
                path,
                query=parse_qsl(parts.query, keep_blank_values=True),
                stream=True,
                what=f"Spark UI of {self.pod}",
                retry=False,
            )
            body = b"".join(response.stream(CHUNK))
        except errors.KubectlSparkError as exc:
            status = getattr(exc, "status", 0) or 502
            return status, "text/plain; charset=utf-8", f"{exc.message}\n".encode()
        kind = response.headers.get("Content-Type", "application/octet-stream")
        return response.status, kind, body


def _handler(forward: UiForward) -> Any:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._answer(body=True)

        def do_HEAD(self) -> None:
            self._answer(body=False)

        def _answer(self, *, body: bool) -> None:
            status, kind, content = forward.proxied(self.path)
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            if body:
                self.wfile.write(content)

        def log_message(self, *_args: Any) -> None:
            return None  # the TUI owns the terminal

    return Handler
