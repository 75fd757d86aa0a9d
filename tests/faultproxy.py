"""A fault-injecting HTTP proxy in front of a test bed's API server (emulator or real).

The API server behind it does the real work (a write is applied, a list is served); the proxy
then misbehaves the ways an adversarial run found hurtful: it answers a write late after it was
applied, trickles a body one byte at a time, sends a ``continue`` token for ever, puts garbage
lines into a watch, nests an object deeper than a JSON parser's default limit, or answers 200
with a Status. Every request that reaches it is counted, so a test can say "this write was sent
once". It listens on plain HTTP and passes the client's bearer token upstream.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import weakref
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import ClientSession, ClientTimeout, TCPConnector, web

from kubectl_spark.cluster.apiserver.embedded import (
    ADMIN_USER,
    kubeconfig_document,
    write_kubeconfig_file,
)
from tests.loopserver import Listener, LoopServer, handed_over

HOP_HEADERS = {"host", "content-length", "transfer-encoding", "connection", "content-encoding"}


@dataclass
class Fault:
    """One misbehaviour, for requests whose method is ``method`` (any if empty) and whose path
    contains ``path``."""

    # late | swallow | trickle | endless-continue | watch-garbage | deep-item | status-200 |
    # items-not-list | uidless-item | scalar-item
    kind: str
    method: str = ""
    path: str = ""
    seconds: float = 0.0  # late: the wait after the upstream answered; trickle: between bytes;
    # swallow: the wait before answering 504 without passing the request on
    depth: int = 1100  # deep-item: nesting levels

    def matches(self, method: str, path: str) -> bool:
        return (not self.method or self.method == method) and self.path in path


@dataclass
class FaultProxy(LoopServer):
    upstream: str
    faults: list[Fault] = field(default_factory=list)
    seen: Counter[tuple[str, str]] = field(default_factory=Counter)
    port: int = 0
    tls: ssl.SSLContext | None = None  # serve HTTPS (kubectl sends no token over plain HTTP)

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def __post_init__(self) -> None:
        self.down = False  # cut(): every connection dropped, new ones closed at once
        self.most_open = 0  # the most requests being answered at once
        self._open: set[Any] = set()  # the transports of requests being answered
        self._open_loop()
        self._runner: web.ServerRunner | None = None
        self._server: _Connections | None = None
        self._listener: Listener | None = None
        self._session: ClientSession | None = None

    def cut(self) -> None:
        """An outage: every connection is dropped (watches, and idle kept-alive ones too), what
        comes is closed unanswered."""

        def drop() -> None:
            self.down = True
            for transport in list(self._server.every if self._server is not None else ()):
                transport.close()

        self._loop.call_soon_threadsafe(drop)

    def restore(self) -> None:
        self.down = False

    def count(self, method: str, path_part: str = "") -> int:
        return sum(n for (m, p), n in self.seen.items() if m == method and path_part in p)

    async def _close(self) -> None:
        """Stop taking connections, then drop every one, whatever it was doing.

        A client still busy as a test ends (a command's prefetch on a daemon thread) may be
        connecting as the proxy stops, or be owed an answer it no longer reads (a transport
        closing, not closed, until its data is sent). The listener takes no more first
        (``handed_over``), those taken reach their handlers, then it closes and every
        connection is aborted, so no socket outlives the loop.
        """
        self.down = True  # a request that still comes is closed unanswered
        await handed_over(self._listener)
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()
        for transport in list(self._server.every if self._server is not None else ()):
            transport.abort()  # its socket closed on the loop's next turn, unsent data dropped

    # ---------------------------------------------------------------- serving
    async def _start(self) -> None:
        self._session = ClientSession(
            # No keep-alive: every upstream connection ends with its request, none is left open.
            # No verification either: the upstream is a bed on 127.0.0.1, and a test may swap
            # it for another (a server restarted without its state).
            connector=TCPConnector(ssl=False, force_close=True),
            timeout=ClientTimeout(total=None),
            auto_decompress=True,
        )
        self._server = _Connections(self._handle, access_log=None)
        self._runner = web.ServerRunner(self._server, handle_signals=False, shutdown_timeout=0.5)
        await self._runner.setup()
        self._listener = Listener()
        self.port = self._listener.port
        await web.SockSite(self._runner, self._listener, ssl_context=self.tls).start()

    def _fault(self, method: str, path: str, *kinds: str) -> Fault | None:
        return next((f for f in self.faults if f.kind in kinds and f.matches(method, path)), None)

    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        transport = request.transport
        if self.down or transport is None:
            if transport is not None:
                transport.close()
            return web.Response(status=503)  # never sent: the connection is gone
        self._open.add(transport)
        self.most_open = max(self.most_open, len(self._open))
        try:
            return await self._answer(request)
        finally:
            self._open.discard(transport)

    async def _answer(self, request: web.BaseRequest) -> web.StreamResponse:
        method, path = request.method, request.path
        self.seen[(method, path)] += 1
        swallow = self._fault(method, path, "swallow")
        if swallow is not None:
            await asyncio.sleep(swallow.seconds)  # never passed on: the write is lost
            return web.Response(status=504, text="swallowed")
        query = list(request.query.items())
        endless = self._fault(method, path, "endless-continue")
        if endless is not None:
            query = [(k, v) for k, v in query if k != "continue"]
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_HEADERS}
        assert self._session is not None
        body = await request.content.read()  # any size: the upstream decides
        watching = request.query.get("watch") in ("1", "true")
        async with self._session.request(
            method, self.upstream + path, params=query, data=body or None, headers=headers
        ) as upstream:
            out_headers = {
                k: v for k, v in upstream.headers.items() if k.lower() not in HOP_HEADERS
            }
            if watching:
                return await self._watch(request, upstream, out_headers, method, path)
            data = await upstream.read()
            status = upstream.status
        data, status = self._rewrite(method, path, data, status)
        late = self._fault(method, path, "late")
        if late is not None:
            await asyncio.sleep(late.seconds)  # applied upstream; the answer comes late
        trickle = self._fault(method, path, "trickle")
        if trickle is None:
            return web.Response(body=data, status=status, headers=out_headers)
        response = web.StreamResponse(status=status, headers=out_headers)
        response.content_length = len(data)
        await response.prepare(request)
        try:
            for i in range(len(data)):
                await response.write(data[i : i + 1])
                await asyncio.sleep(trickle.seconds)
        except (ConnectionError, RuntimeError):
            pass  # the client gave up: what a deadline is for
        return response

    def _rewrite(self, method: str, path: str, data: bytes, status: int) -> tuple[bytes, int]:
        fault = self._fault(
            method,
            path,
            "endless-continue",
            "deep-item",
            "status-200",
            "items-not-list",
            "uidless-item",
            "scalar-item",
        )
        if fault is None or status != 200:
            return data, status
        doc = json.loads(data)
        if fault.kind == "status-200":
            doc = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "odd"}
        elif fault.kind == "items-not-list":
            doc["items"] = {"not": "a list"}
        elif fault.kind == "uidless-item" and doc.get("items"):
            odd = json.loads(json.dumps(doc["items"][0]))
            odd["metadata"]["name"] = "no-uid"
            del odd["metadata"]["uid"]
            doc["items"].append(odd)
        elif fault.kind == "scalar-item" and doc.get("items"):
            doc["items"].append("not an object")
        elif fault.kind == "endless-continue":
            doc.setdefault("metadata", {})["continue"] = f"again-{self.count(method, path)}"
        elif fault.kind == "deep-item" and doc.get("items"):
            deep = json.loads(json.dumps(doc["items"][0]))
            deep["metadata"]["name"] = "deep-one"
            deep["metadata"]["uid"] = "00000000-0000-0000-0000-00000000deep"
            deep.setdefault("spec", {})["deep"] = "DEEP"
            doc["items"].append(deep)
            text = json.dumps(doc).replace(
                '"DEEP"', '{"a":' * fault.depth + "1" + "}" * fault.depth
            )
            return text.encode(), status
        return json.dumps(doc).encode(), status

    async def _watch(
        self,
        request: web.BaseRequest,
        upstream: Any,
        headers: dict[str, str],
        method: str,
        path: str,
    ) -> web.StreamResponse:
        response = web.StreamResponse(status=upstream.status, headers=headers)
        await response.prepare(request)
        garbage = self._fault(method, path, "watch-garbage")
        try:
            if garbage is not None:
                await response.write(b"this is not json\n")
                odd = {"type": "ADDED", "object": {"kind": "Pod", "metadata": {"name": "no-uid"}}}
                await response.write(json.dumps(odd).encode() + b"\n")
            async for chunk in upstream.content.iter_any():
                await response.write(chunk)
        except (ConnectionError, RuntimeError, asyncio.CancelledError):
            pass
        return response


class _Connections(web.Server):
    """aiohttp's low-level server, keeping every connection's transport for the proxy's close."""

    def __init__(self, handler: Any, **kwargs: Any) -> None:
        super().__init__(handler, **kwargs)
        self.every: weakref.WeakSet[asyncio.Transport] = weakref.WeakSet()

    def connection_made(self, handler: Any, transport: asyncio.Transport) -> None:
        super().connection_made(handler, transport)
        self.every.add(transport)


def through(proxy: FaultProxy, token: str, path: Path) -> Path:
    """A kubeconfig that reaches the bed through the proxy (plain HTTP, the bed's token)."""
    return write_kubeconfig_file(
        path, kubeconfig_document(proxy.url, b"", ADMIN_USER, token, "default")
    )
