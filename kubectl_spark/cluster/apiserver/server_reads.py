"""Reads served: lists (as Tables for kubectl), watches (as Tables too), and patches."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import orjson
from aiohttp import web

from . import patching, tables
from .errors import (
    ApiError,
    bad_request,
    unsupported_media_type,
)
from .kinds import field_getters
from .selectors import parse_field_selector, parse_label_selector
from .serving import (
    JSON,
    Route,
    _json,
    _list_item,
    truthy,
)
from .storedata import Stored

if TYPE_CHECKING:
    from kubectl_spark.knowledge.clock import Clock

    from .faults import Faults
    from .serving import ServerConfig
    from .store import Store


async def _end(response: web.StreamResponse) -> None:
    with contextlib.suppress(ConnectionResetError, RuntimeError):
        if isinstance(response, web.WebSocketResponse):
            await response.close()
        else:
            await response.write_eof()


def _websocket_origin(request: web.Request) -> None:
    """A WebSocket handshake without an Origin is refused with a bare 403, as kube-apiserver's is.

    Its WebSocket handler (golang.org/x/net/websocket ``Handler``) checks the origin and takes
    a missing one for an error ("null origin"); fabric8 sends one.
    """
    if _upgrading(request) and not request.headers.get("Origin"):
        raise web.HTTPForbidden(text="")


def _upgrading(request: web.Request) -> bool:
    return request.headers.get("Upgrade", "").lower() == "websocket"


async def _watch_response(request: web.Request) -> web.StreamResponse:
    """A chunked stream of JSON lines, or a WebSocket where the client asks to upgrade.

    kube-apiserver serves both (k8s.io/apiserver pkg/endpoints/handlers/watch.go: ``wsstream.
    IsWebSocketRequest`` → ``HandleWS``, one message per event, text frames for JSON). Spark's
    fabric8 client (7.x, Vert.x) watches over a WebSocket only; answered a chunked 200 instead,
    its ``waitUntilReady`` waited for good.
    """
    if _upgrading(request):
        socket = web.WebSocketResponse(autoping=True)
        await socket.prepare(request)
        return socket
    response = web.StreamResponse(
        status=200, headers={"Content-Type": JSON, "Cache-Control": "no-cache, private"}
    )
    response.enable_chunked_encoding()
    await response.prepare(request)
    return response


async def _send(response: web.StreamResponse, lines: list[bytes]) -> None:
    if isinstance(response, web.WebSocketResponse):
        for line in lines:
            await response.send_str(line.decode("utf-8").rstrip("\n"))
    else:
        await response.write(b"".join(lines))


class CollectionReads:
    """Lists and watches of a resource, as JSON or as the Tables kubectl asks for."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        config: ServerConfig,
        faults: Faults,
        streams: set[web.StreamResponse],
        stopping: asyncio.Event,
    ) -> None:
        self.store = store
        self.clock = clock
        self.config = config
        self.faults = faults
        self.streams = streams  # the server's open streams (these very objects): closed at stop
        self.stopping = stopping

    def table(
        self,
        plural: str,
        objects: list[dict[str, Any]],
        version: str,
        query: dict[str, str],
        list_meta: dict[str, Any],
        *,
        columns: bool = True,
    ) -> dict[str, Any]:
        return tables.table(
            plural,
            objects,
            self.clock.now(),
            version=version,
            include_object=query.get("includeObject") or None,
            list_meta=list_meta,
            columns=columns,
        )

    def list(self, route: Route, query: dict[str, str], as_table: str | None) -> web.Response:
        rt = route.rt
        labels = parse_label_selector(query.get("labelSelector"))
        fields = parse_field_selector(
            query.get("fieldSelector"), field_getters(self.store.storage(rt).rt)
        )
        limit_raw = query.get("limit")
        try:
            limit = int(limit_raw) if limit_raw else None
        except ValueError as exc:
            raise bad_request(f"invalid limit: {limit_raw!r}") from exc
        if limit is not None and limit <= 0:
            limit = None
        result = self.store.list_objects(
            rt,
            route.namespace,
            labels,
            fields,
            limit=limit,
            continue_token=query.get("continue") or None,
            resource_version=query.get("resourceVersion"),
            resource_version_match=query.get("resourceVersionMatch") or None,
        )
        meta: dict[str, Any] = {"resourceVersion": str(result.rv)}
        if result.continue_token:
            meta["continue"] = result.continue_token
        if result.remaining is not None:
            meta["remainingItemCount"] = result.remaining
        if as_table:
            objects = [i.obj if isinstance(i, Stored) else i for i in result.items]
            return _json(self.table(rt.resource, objects, as_table, query, meta))
        head = orjson.dumps(
            {"kind": f"{rt.kind}List", "apiVersion": rt.api_version, "metadata": meta}
        )
        items = b",".join(_list_item(i, builtin=rt.builtin) for i in result.items)
        body = head[:-1] + b',"items":[' + items + b"]}"
        return web.Response(body=body, content_type=JSON)

    async def watch(
        self, request: web.Request, route: Route, query: dict[str, str], as_table: str | None
    ) -> web.StreamResponse:
        rt = route.rt
        labels = parse_label_selector(query.get("labelSelector"))
        fields = parse_field_selector(
            query.get("fieldSelector"), field_getters(self.store.storage(rt).rt)
        )
        send_initial = truthy(query.get("sendInitialEvents"))
        if send_initial and query.get("resourceVersionMatch") != "NotOlderThan":
            raise ApiError(
                422,
                "Invalid",
                'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless resourceVersionMatch is set to "NotOlderThan"',
            )
        timeout_raw = query.get("timeoutSeconds")
        try:
            timeout = float(timeout_raw) if timeout_raw else self.config.min_request_timeout
        except ValueError as exc:
            raise bad_request(f"invalid timeoutSeconds: {timeout_raw!r}") from exc
        _websocket_origin(request)
        watcher = self.store.watch(
            rt,
            route.namespace,
            labels,
            fields,
            query.get("resourceVersion"),
            send_initial_events=send_initial,
            allow_bookmarks=truthy(query.get("allowWatchBookmarks")),
        )
        response = await _watch_response(request)
        self.streams.add(response)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.faults.watch_seconds(timeout)
        last_bookmark = loop.time()
        first = True  # a Table watch sends the column definitions with its first event only
        try:
            while not self.stopping.is_set():
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                try:
                    line = await asyncio.wait_for(watcher.queue.get(), timeout=min(remaining, 0.5))
                except TimeoutError:
                    transport = request.transport
                    if transport is None or transport.is_closing():
                        break
                    if (
                        watcher.allow_bookmarks
                        and loop.time() - last_bookmark >= self.config.bookmark_interval
                        # An event may have come while the timed-out get was being cancelled: a
                        # bookmark at the store's version must never overtake it (a client would
                        # resume past it). kube-apiserver's bookmarks follow what was delivered.
                        and watcher.queue.empty()
                    ):
                        bookmark = watcher.bookmark_line(self.store.rv)
                        if as_table:
                            bookmark = self.table_line(
                                rt.resource, bookmark, as_table, query, first=False
                            )
                        await _send(response, [bookmark])
                        last_bookmark = loop.time()
                    continue
                if line is None:
                    break
                chunk = [line]
                size = len(line)
                ended = False
                while size < 256 * 1024 and not watcher.queue.empty():
                    more = watcher.queue.get_nowait()
                    if more is None:
                        ended = True
                        break
                    chunk.append(more)
                    size += len(more)
                if as_table:
                    chunk = [
                        self.table_line(rt.resource, line, as_table, query, first=i == 0 and first)
                        for i, line in enumerate(chunk)
                    ]
                    first = False
                await _send(response, chunk)
                if ended:
                    break
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            self.store.unwatch(watcher)
            self.streams.discard(response)
        await _end(response)
        return response

    def table_line(
        self, plural: str, line: bytes, version: str, query: dict[str, str], *, first: bool
    ) -> bytes:
        """A watch event whose object is a one-row Table (an ERROR's Status stays as it is)."""
        event = orjson.loads(line)
        obj = event.get("object") or {}
        if event.get("type") == "ERROR":
            return line
        meta = {"resourceVersion": obj.get("metadata", {}).get("resourceVersion", "")}
        rows = [] if event.get("type") == "BOOKMARK" else [obj]
        event["object"] = self.table(plural, rows, version, query, meta, columns=first)
        return orjson.dumps(event) + b"\n"


class PatchEndpoint:
    """PATCH in its four content types (JSON, merge, strategic merge, server-side apply)."""

    def __init__(self, store: Store, read_body: Callable[[web.Request], Awaitable[Any]]) -> None:
        self.store = store
        self.read_body = read_body

    async def serve(
        self, request: web.Request, route: Route, query: dict[str, str], dry_run: bool
    ) -> web.Response:
        rt = route.rt
        content_type = request.headers.get("Content-Type", "").split(";")[0].strip()
        accepted = [patching.JSON, patching.MERGE, patching.APPLY]
        if rt.builtin:
            accepted.insert(2, patching.STRATEGIC)
        if content_type not in accepted:
            raise unsupported_media_type(accepted)
        body = await self.read_body(request)
        if content_type == patching.APPLY:
            if not query.get("fieldManager"):
                raise ApiError(
                    422,
                    "Invalid",
                    'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
                )
            if self.store.lookup(rt, route.namespace, route.name) is None:
                if not isinstance(body, dict):
                    raise bad_request("apply patch must be an object")
                body.setdefault("metadata", {})["name"] = route.name
                return _json(self.store.create(rt, route.namespace, body, dry_run=dry_run), 201)
        elif "force" in query:
            raise ApiError(
                422,
                "Invalid",
                'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch',
            )

        def apply(current: dict[str, Any]) -> Any:
            if content_type == patching.JSON:
                return patching.json_patch(current, body)
            if content_type == patching.STRATEGIC:
                return patching.strategic_merge_patch(current, body)
            return patching.merge_patch(current, body)

        return _json(
            self.store.writes.patch(
                rt,
                route.namespace,
                route.name,
                apply,
                subresource=route.subresource or None,
                dry_run=dry_run,
            )
        )
