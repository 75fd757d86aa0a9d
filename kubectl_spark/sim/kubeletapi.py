"""The simulated kubelets' HTTPS endpoint, for an API server to read logs from and exec through.

A real kube-apiserver answers ``pods/<name>/log`` by asking the kubelet of the pod's node
(``https://<InternalIP>:<daemonEndpoints.kubeletEndpoint.Port>/containerLogs/<ns>/<pod>/<c>``,
pkg/kubelet/server/server.go) and passing its answer on; a non-200 answer's body becomes the
message of the Status it returns. Each simulated node gets its own port on 127.0.0.1, closed
while the node is down or cut off, so that the API server's request fails as it would.

``/exec/<ns>/<pod>/<c>`` (the kubelet's own path) runs a command in a container, for a kubelet
that has containers to run it in (``exec_into``: the OS kubelet's processes). It speaks the
WebSocket remote-command protocol v5.channel.k8s.io (KEP-3396: a byte of stream id before each
message, 255 to close a stream, the exit as a Status on stream 3), which the project's emulator
relays as is. A real kubelet is asked in SPDY (the API server translates a client's WebSocket,
client-go tools/remotecommand); no SPDY is spoken here, so exec works through the emulator
only.

Without TLS client verification: kube-apiserver, started without
``--kubelet-certificate-authority``, does not verify the kubelet's certificate either.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import ssl
import threading
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

import trustme
from aiohttp import WSMsgType, web

from kubectl_spark.knowledge.clock import Clock
from kubectl_spark.knowledge.podlogs import ContainerLog, LogQuery, LogStore

FOLLOW_POLL_SECONDS = 0.2
FOLLOW_MAX_SECONDS = 600.0
# The remote-command protocol's streams (k8s.io/apimachinery pkg/util/remotecommand/constants.go)
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255
PROTOCOL = "v5.channel.k8s.io"


class Execution(Protocol):
    """A command started in a container: its output, as file descriptors the loop can watch."""

    outputs: dict[int, int]  # stream id (STDOUT, STDERR) → a readable descriptor

    def write(self, data: bytes) -> None: ...
    def close_input(self) -> None: ...
    def resize(self, width: int, height: int) -> None: ...
    def wait(self) -> int: ...
    def end(self) -> None: ...


# (namespace, pod, container, command, tty) → the command running, or None: no such container runs
ExecInto = Callable[[str, str, str, list[str], bool], Execution | None]


def _exit_status(code: int) -> dict[str, Any]:
    """What a kubelet writes on the error stream as an exec ends (v4 and later: a Status)."""
    if code == 0:
        return {"metadata": {}, "status": "Success"}
    return {
        "metadata": {},
        "status": "Failure",
        "message": f"command terminated with non-zero exit code: exit status {code}",
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]},
    }


def _true(value: str | None) -> bool:
    return value in ("1", "true", "True")


class KubeletApi:
    """Logs of every simulated container, and one listening port per reachable node.

    The endpoint runs on an event loop of its own thread; the kubelets call in from theirs.
    """

    def __init__(self, clock: Clock, exec_into: ExecInto | None = None) -> None:
        self.clock = clock
        self.exec_into = exec_into
        self.logs = LogStore()
        self.uids: dict[tuple[str, str], str] = {}  # (namespace, pod) → the uid last written
        self.ports: dict[str, int] = {}
        self._sites: dict[str, web.SockSite] = {}
        self._lock = threading.Lock()  # the logs, written by the kubelets, read by the loop
        # open and close (the loop never takes it: the loop's handlers take only ``_lock``)
        self._nodes_lock = threading.Lock()
        ca = trustme.CA(organization_name="kubectl-spark simulated kubelets")
        cert = ca.issue_cert("127.0.0.1", "localhost")
        self._ssl = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        cert.configure_cert(self._ssl)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None

    def _run(self, work: Coroutine[Any, Any, Any]) -> Any:
        """``work`` on the endpoint's loop (started at the first node), waited for."""
        if self._loop is None:
            loop = asyncio.new_event_loop()

            def serve() -> None:
                loop.run_forever()
                loop.close()

            self._thread = threading.Thread(target=serve, daemon=True, name="kubelets")
            self._thread.start()
            self._loop = loop
            app = web.Application()
            app.router.add_get("/containerLogs/{namespace}/{pod}/{container}", self._serve_logs)
            app.router.add_get("/exec/{namespace}/{pod}/{container}", self._serve_exec)
            # An exec still open when the kubelets stop is cut after a second, not a minute
            self._runner = web.AppRunner(
                app, access_log=None, handle_signals=False, shutdown_timeout=1.0
            )
            asyncio.run_coroutine_threadsafe(self._runner.setup(), loop).result()
        return asyncio.run_coroutine_threadsafe(work, self._loop).result()

    # ------------------------------------------------------------------------------- nodes
    def open(self, node: str) -> int:
        """Listen for ``node`` (on the port it had before, so the Node object stays right)."""
        with self._nodes_lock:
            if node in self._sites:
                return self.ports[node]
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(("127.0.0.1", self.ports.get(node, 0)))
            self.ports[node] = int(listener.getsockname()[1])

            async def start() -> web.SockSite:
                assert self._runner is not None
                site = web.SockSite(self._runner, listener, ssl_context=self._ssl)
                await site.start()
                return site

            self._sites[node] = self._run(start())
            return self.ports[node]

    def close(self, node: str) -> None:
        """The node is down or cut off: the API server's requests find nobody listening."""
        with self._nodes_lock:
            site = self._sites.pop(node, None)
        if site is not None:
            self._run(site.stop())

    def reachable(self, nodes: set[str]) -> None:
        for node in list(self._sites):
            if node not in nodes:
                self.close(node)
        for node in nodes:
            if node in self.ports:
                self.open(node)

    def stop(self) -> None:
        for node in list(self._sites):
            self.close(node)
        loop, runner = self._loop, self._runner
        if loop is not None and runner is not None:
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(_shut(runner), loop).result(timeout=10)
            loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._loop, self._runner, self._thread = None, None, None

    # -------------------------------------------------------------------------------- logs
    def append(self, namespace: str, pod: str, uid: str, container: str, text: str) -> None:
        with self._lock:
            self.uids[(namespace, pod)] = uid
            self.logs.append(uid, container, text, self.clock.now())

    def rotate(self, namespace: str, pod: str, uid: str, container: str) -> None:
        with self._lock:
            self.uids[(namespace, pod)] = uid
            self.logs.rotate(uid, container)

    async def _serve_logs(self, request: web.Request) -> web.StreamResponse:
        namespace, pod = request.match_info["namespace"], request.match_info["pod"]
        container = request.match_info["container"]
        query = {k: request.query.getall(k)[-1] for k in request.query}
        uid = self.uids.get((namespace, pod))
        entry = self.logs.get(uid, container) if uid else None
        previous = query.get("previous") == "true"
        if previous:
            if entry is None or entry.previous is None:
                return _text(
                    400, f'previous terminated container "{container}" in pod "{pod}" not found'
                )
            log = entry.previous
        else:
            if entry is None:
                return _text(
                    400,
                    f'container "{container}" in pod "{pod}" is waiting to start: ContainerCreating',
                )
            log = entry.current
        try:
            wanted = LogQuery.parse(query, self.clock.now(), lambda v: v == "true")
        except ValueError as exc:
            return _text(400, f"invalid log options: {exc}")
        with self._lock:
            data = wanted.body(log)
            seen = len(log.lines)
        if query.get("follow") != "true" or previous:
            return web.Response(body=data, content_type="text/plain", charset="utf-8")
        response = web.StreamResponse(status=200)
        response.content_type, response.charset = "text/plain", "utf-8"
        response.enable_chunked_encoding()
        await response.prepare(request)
        current = entry
        with contextlib.suppress(ConnectionResetError, asyncio.CancelledError):
            await self._follow(
                response, data, log, seen, wanted.timestamps, lambda: current.current is not log
            )
        with contextlib.suppress(ConnectionResetError, RuntimeError):
            await response.write_eof()
        return response

    async def _follow(
        self,
        response: web.StreamResponse,
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
        loop = asyncio.get_running_loop()
        deadline = loop.time() + FOLLOW_MAX_SECONDS
        if first:
            await response.write(first)
        while loop.time() < deadline:
            await asyncio.sleep(FOLLOW_POLL_SECONDS)
            with self._lock:
                more = log.text(timestamps=stamps, start=seen)
                seen = len(log.lines)
            if more:
                await response.write(more.encode("utf-8", "surrogateescape"))
            if over():
                break

    # -------------------------------------------------------------------------------- exec
    async def _serve_exec(self, request: web.Request) -> web.StreamResponse:
        """A command in a running container, its streams over one WebSocket."""
        namespace, pod = request.match_info["namespace"], request.match_info["pod"]
        container = request.match_info["container"]
        command = request.query.getall("command", [])
        tty = _true(request.query.get("tty"))
        if not command:
            return _text(400, "you must specify at least one command for the container")
        ws = web.WebSocketResponse(protocols=(PROTOCOL,), autoping=True)
        if not ws.can_prepare(request).ok:
            return _text(400, "Upgrade request required")
        loop = asyncio.get_running_loop()
        started = (
            await loop.run_in_executor(
                None, self.exec_into, namespace, pod, container, command, tty
            )
            if self.exec_into is not None
            else None
        )
        if started is None:
            # pkg/kubelet/server/server.go: a container the runtime does not know
            return _text(404, f'container not found ("{container}")')
        try:
            await ws.prepare(request)
            await _stream(ws, started)
        finally:
            started.end()  # also when the upgrade itself fails: nothing of it outlives the request
        return ws


async def _shut(runner: web.AppRunner) -> None:
    """Every connection ended, so that no socket is left for the garbage collector.

    A TLS close_notify exchange could outlive the loop (the emulator's server ends the same
    way, cluster/apiserver/embedded.py), so the connections are aborted after the cleanup.
    """
    server = runner.server
    transports = [h.transport for h in server.connections if h.transport] if server else []
    await runner.cleanup()
    for transport in transports:
        transport.abort()
    await asyncio.sleep(0.05)  # the aborts' callbacks run before the loop stops


async def _stream(ws: web.WebSocketResponse, running: Execution) -> None:
    """Both ways at once, as a terminal needs: output out, input, resizes and closes in.

    The exit goes last, on stream 3, once every output has ended: a client takes that Status
    as the end of the command.
    """
    loop = asyncio.get_running_loop()
    out: asyncio.Queue[bytes | None] = asyncio.Queue()
    open_outputs = set(running.outputs)

    def readable(stream: int, fd: int) -> None:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: a terminal's last process has gone
            data = b""
        if data:
            out.put_nowait(bytes([stream]) + data)
            return
        loop.remove_reader(fd)
        open_outputs.discard(stream)
        if not open_outputs:
            out.put_nowait(None)

    for stream, fd in running.outputs.items():
        loop.add_reader(fd, readable, stream, fd)

    async def receive() -> None:
        async for message in ws:
            if message.type != WSMsgType.BINARY or not message.data:
                continue
            stream, data = message.data[0], message.data[1:]
            if stream == STDIN:
                await loop.run_in_executor(None, running.write, data)
            elif stream == RESIZE:
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    size = json.loads(data)
                    running.resize(int(size["Width"]), int(size["Height"]))
            elif stream == CLOSE and data[:1] == bytes([STDIN]):
                running.close_input()

    receiving = asyncio.ensure_future(receive())
    try:
        while (chunk := await out.get()) is not None:
            await ws.send_bytes(chunk)
        code = await loop.run_in_executor(None, running.wait)
        await ws.send_bytes(bytes([ERROR]) + json.dumps(_exit_status(code)).encode())
        await ws.close()
    except ConnectionResetError:
        pass
    finally:
        for fd in running.outputs.values():
            loop.remove_reader(fd)
        receiving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await receiving


def _text(status: int, body: str) -> web.Response:
    return web.Response(
        status=status,
        body=body.encode("utf-8", "surrogateescape"),
        content_type="text/plain",
        charset="utf-8",
    )
