"""A Spark History Server for the simulator's finished applications: the same REST shape.

``GET /api/v1/applications`` and ``GET /api/v1/applications/<app id>/allexecutors``
(Spark's ``monitoring.md``, the ``/api/v1`` REST API the History Server and a live driver's UI
both serve): each driver's status store (``sparkrest.SparkUI``) as it was when the driver
stopped (or is now), kept by the simulator's Spark (``SparkDrivers.uis``). Served on 127.0.0.1 for the
tests and the demo (or on every address, behind a Service, for the tests that find it by its
label); nothing else runs it.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

import orjson

if TYPE_CHECKING:
    from .spark import SparkDrivers


class HistoryServer:
    def __init__(self, drivers: SparkDrivers) -> None:
        self.drivers = drivers
        self.server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        port = self.server.server_address[1]
        return f"http://127.0.0.1:{port}"

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.server_address[1])

    def start(self, address: str = "127.0.0.1", port: int = 0) -> HistoryServer:
        """Serve on ``address`` (every address, "0.0.0.0", for a Service's endpoint)."""
        drivers = self.drivers

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                status, kind, body = 404, "text/plain", b"Not Found"
                if path == "/api/v1/applications":
                    status, kind, body = 200, "application/json", _applications(drivers)
                else:
                    parts = [p for p in path.split("/") if p]
                    if len(parts) >= 4 and parts[:3] == ["api", "v1", "applications"]:
                        ui = drivers.uis.get(parts[3])
                        if ui is not None:
                            status, kind, body = ui.answer(path)
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: object) -> None:
                pass

        self.server = ThreadingHTTPServer((address, port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def _applications(drivers: SparkDrivers) -> bytes:
    """``/api/v1/applications``: every application it has a log of."""
    return orjson.dumps(
        [
            {"id": ui.app_id, "name": ui.app_name,
             "attempts": [{"startTime": ui.start_time, "completed": True}]}
            for ui in drivers.uis.values()
        ]
    )  # fmt: skip
