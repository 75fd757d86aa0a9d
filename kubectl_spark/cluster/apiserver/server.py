"""The HTTP front of the emulator: kube-apiserver's REST paths, verbs and wire formats.

Requests are parsed here and handed to the :class:`Store`; responses are JSON (never
protobuf), which every client accepts. Discovery is served in the legacy per-group-version form:
kubectl and client-go ask for aggregated discovery first and fall back when the answer's
Content-Type is plain ``application/json`` (measured with kubectl 1.32).
"""

from __future__ import annotations

import asyncio
import contextlib
import platform
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC
from email.utils import format_datetime
from typing import Any

import orjson
import yaml
from aiohttp import web

from kubectl_spark.cluster.podlogs import LogQuery, LogStore, PodLogs
from kubectl_spark.knowledge.clock import Clock

from . import fieldvalidation, openapi, patching, protobuf, tables
from .authz import (
    ANONYMOUS,
    UNAUTHENTICATED,
    Attributes,
    AuditLog,
    Identity,
    Policy,
    forbidden_message,
)
from .errors import (
    ApiError,
    bad_request,
    conflict,
    expired,
    forbidden,
    method_not_supported,
    not_found,
    success_status,
    unauthorized,
    unsupported_media_type,
)
from .faults import FaultProfile, Faults
from .impersonation import impersonated
from .kinds import field_getters
from .resources import Registry, ResourceType
from .selectors import parse_field_selector, parse_label_selector, selector_from_match
from .store import DeleteOptions, Store, Stored, without_type_meta

ANONYMOUS_PATHS = ("/version", "/healthz", "/livez", "/readyz")
JSON = "application/json"
VERSION_INFO = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.0-kubectl-spark-emulator",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z",
    "goVersion": "go1.23.0",
    "compiler": "gc",
    "platform": f"{platform.system().lower()}/{platform.machine()}",
}

# A handler the simulator registers for (namespace, pod, port): it plays the process listening
# in the pod, reached through pods/<name>:<port>/proxy/<path>.
# None: nothing listens (the process is not running).
ProxyHandler = Callable[[str, dict[str, str]], Awaitable[tuple[int, str, bytes] | None]]


def truthy(value: str | None) -> bool:
    """Apimachinery's query boolean: anything but 0/false is true, a bare ``?watch`` too."""
    return value is not None and value.strip().lower() not in ("0", "false")


def _list_item(item: Stored | dict[str, Any], *, builtin: bool) -> bytes:
    """An item as kube-apiserver lists it: a built-in kind's without apiVersion and kind."""
    if isinstance(item, Stored):
        return item.list_raw if builtin else item.raw
    return orjson.dumps(without_type_meta(item) if builtin else item)


def _json(body: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(body), status=status, content_type=JSON)


def _warned(response: web.Response, warnings: list[str]) -> web.Response:
    """Warning headers, one per message, as kube-apiserver sends them (kubectl prints each)."""
    for warning in warnings:
        response.headers.add("Warning", warning)
    return response


def _error(err: ApiError) -> web.Response:
    return _json(err.status(), err.code)


@dataclass
class Route:
    group: str
    version: str
    rt: ResourceType
    namespace: str
    name: str
    subresource: str
    rest: str  # what follows a proxy subresource
    legacy_watch: bool


@dataclass
class ServerConfig:
    tokens: dict[str, str] = field(default_factory=dict)  # token → user name
    admin_users: frozenset[str] = frozenset()
    require_auth: bool = True
    min_request_timeout: float = 1800.0
    bookmark_interval: float = 60.0
    server_address: str = "127.0.0.1:0"


class ApiServer:
    def __init__(
        self,
        store: Store,
        registry: Registry,
        clock: Clock,
        config: ServerConfig,
        policy: Policy | None = None,
    ) -> None:
        self.store = store
        self.registry = registry
        self.clock = clock
        self.config = config
        self.policy = policy or Policy()
        self.audit = AuditLog()
        self.logs = LogStore()
        self.proxy_handlers: dict[tuple[str, str, int], ProxyHandler] = {}
        self.faults = Faults()
        self.unreachable_nodes: set[str] = set()
        self._streams: set[web.StreamResponse] = set()
        self.stopping = asyncio.Event()

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self.handle)
        app.on_response_prepare.append(self._stamp_date)
        return app

    async def _stamp_date(self, _request: web.Request, response: web.StreamResponse) -> None:
        """Every answer's Date by the emulator's clock, the one its timestamps are stamped with.

        kube-apiserver's Date and its objects' times come from one clock too, and clients read
        ages against it.
        """
        response.headers["Date"] = format_datetime(self.clock.now().astimezone(UTC), usegmt=True)

    # ------------------------------------------------------------------------------ entry
    async def handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        if path in ANONYMOUS_PATHS or any(path.startswith(p + "/") for p in ANONYMOUS_PATHS[1:]):
            if path == "/version":
                return _json(VERSION_INFO)
            return web.Response(text="ok", content_type="text/plain")
        try:
            user = self._authenticate(request)
            user = impersonated(request.headers, user, self.policy.allows) or user
            if self.faults.active and not self.faults.spares(request.headers.get("User-Agent", "")):
                injected = await self._fault(request)
                if injected is not None:
                    return injected
            return await self._dispatch(request, user)
        except ApiError as err:
            return _error(err)

    async def _fault(self, request: web.Request) -> web.StreamResponse | None:
        """Misbehave as the fault profile says (see faults.py); None: serve it after all."""
        query = dict(request.query)
        kind = self.faults.before(request.method, query)
        if kind == "expired-continue":
            raise expired(
                "The provided continue parameter is too old to display a consistent list result. "
                "You can start a new list without the continue parameter."
            )
        if kind == "watch-gone":
            response = web.StreamResponse(status=200, headers={"Content-Type": JSON})
            await response.prepare(request)
            gone = ApiError(410, "Expired", "too old resource version").status()
            await response.write(orjson.dumps({"type": "ERROR", "object": gone}) + b"\n")
            await response.write_eof()
            return response
        if kind == "throttle":
            response = _json(
                ApiError(
                    429, "TooManyRequests", "Too many requests, please try again later."
                ).status(),
                429,
            )
            response.headers["Retry-After"] = str(self.faults.profile.retry_after)
            return response
        if kind == "error":
            code = 503 if self.faults.random.random() < 0.5 else 500
            reason = "ServiceUnavailable" if code == 503 else "InternalError"
            return _error(ApiError(code, reason, "injected fault: the server is having a bad day"))
        if kind == "slow":
            await asyncio.sleep(self.faults.profile.slow_seconds)
        if kind == "drop":
            response = web.StreamResponse(status=200, headers={"Content-Type": JSON})
            response.enable_chunked_encoding()
            await response.prepare(request)
            await response.write(b'{"kind":"List","apiVersion":"v1","items":[{"metadata":')
            if request.transport is not None:
                request.transport.close()  # mid-body, as a dying proxy does
            return response
        return None

    def _authenticate(self, request: web.Request) -> Identity:
        if not self.config.require_auth:
            return Identity(ANONYMOUS, frozenset({UNAUTHENTICATED}))
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() == "bearer" and token.strip() in self.config.tokens:
            return Identity(self.config.tokens[token.strip()])
        raise unauthorized()

    async def _dispatch(self, request: web.Request, user: Identity) -> web.StreamResponse:
        parts = [p for p in request.path.split("/") if p]
        if not parts:
            return _json(
                {"paths": ["/api", "/api/v1", "/apis", "/healthz", "/livez", "/readyz", "/version"]}
            )
        head = parts[0]
        if head == "openapi" and parts[1:2] == ["v3"]:
            doc = openapi.at(self.registry, parts[2:])
            if doc is None:
                raise _no_resource()
            return _json(doc)
        if head == "x-emulator":
            return await self._admin(request, user, parts[2:] if len(parts) > 1 else [])
        if head == "api":
            if len(parts) == 1:
                return _json(self.registry.api_versions(self.config.server_address))
            if parts[1] != "v1":
                raise _no_resource()
            if len(parts) == 2:
                return _json(self.registry.resource_list("", "v1"))
            return await self._resource(request, user, "", "v1", parts[2:])
        if head == "apis":
            if len(parts) == 1:
                return _json(self.registry.api_group_list())
            if len(parts) == 2:
                group_doc = self.registry.api_group(parts[1])
                if group_doc is None:
                    raise _no_resource()
                return _json(group_doc)
            if len(parts) == 3:
                doc = self.registry.resource_list(parts[1], parts[2])
                if doc is None:
                    raise _no_resource()
                return _json(doc)
            return await self._resource(request, user, parts[1], parts[2], parts[3:])
        raise _no_resource()

    # ---------------------------------------------------------------------------- routing
    def _route(self, group: str, version: str, rest: list[str]) -> Route:
        legacy_watch = False
        if rest and rest[0] == "watch":
            legacy_watch = True
            rest = rest[1:]
        namespace = ""
        if len(rest) >= 3 and rest[0] == "namespaces" and rest[2] not in ("status", "finalize"):
            namespace, rest = rest[1], rest[2:]
        if not rest:
            raise _no_resource()
        rt = self.registry.lookup(group, version, rest[0])
        if rt is None:
            raise _no_resource()
        if namespace and not rt.namespaced:
            raise _no_resource()
        name = rest[1] if len(rest) > 1 else ""
        subresource = rest[2] if len(rest) > 2 else ""
        extra = "/".join(rest[3:])
        if subresource and (rt.subresource(subresource) is None):
            raise _no_resource()
        if len(rest) > 3 and subresource != "proxy":
            raise _no_resource()
        if rt.namespaced and name and not namespace:
            raise _no_resource()
        return Route(group, version, rt, namespace, name, subresource, extra, legacy_watch)

    def _authorize(self, user: Identity, verb: str, route: Route) -> Attributes:
        attrs = Attributes.of(
            user, verb, route.group, route.rt.plural, route.subresource, route.namespace, route.name
        )
        if not self.policy.allows(attrs):
            raise forbidden(route.rt.plural, route.group, route.name, forbidden_message(attrs))
        return attrs

    async def _resource(
        self, request: web.Request, user: Identity, group: str, version: str, rest: list[str]
    ) -> web.StreamResponse:
        route = self._route(group, version, rest)
        query = dict(request.query)
        method = request.method
        watch = route.legacy_watch or ("watch" in query and truthy(query["watch"]))
        if method == "GET":
            verb = "get" if route.name else "watch" if watch else "list"
        elif method == "POST":
            verb = "create"
        elif method == "PUT":
            verb = "update"
        elif method == "PATCH":
            verb = "patch"
        elif method == "DELETE":
            verb = "delete" if route.name else "deletecollection"
        else:
            raise method_not_supported(route.rt.plural, group, method)
        if route.subresource == "proxy":
            verb = {
                "GET": "get",
                "POST": "create",
                "PUT": "update",
                "PATCH": "patch",
                "DELETE": "delete",
            }[method]
        sub = route.rt.subresource(route.subresource) if route.subresource else None
        allowed = sub.verbs if sub is not None else route.rt.verbs
        if verb not in allowed:
            raise method_not_supported(route.rt.plural, group, verb)
        dry_run = query.get("dryRun") == "All"
        if "dryRun" in query and query["dryRun"] not in ("All", ""):
            raise bad_request(f"Invalid dryRun value: {query['dryRun']!r}, supported values: All")
        attrs = Attributes.of(
            user, verb, group, route.rt.plural, route.subresource, route.namespace, route.name
        )
        try:
            self._authorize(user, verb, route)
            response = await self._perform(request, route, verb, query, dry_run, user)
        except ApiError as err:
            self.audit.record(attrs, err.code, dry_run=dry_run)
            raise
        self.audit.record(attrs, response.status, dry_run=dry_run)
        return response

    async def _perform(
        self,
        request: web.Request,
        route: Route,
        verb: str,
        query: dict[str, str],
        dry_run: bool,
        user: Identity,
    ) -> web.StreamResponse:
        rt, ns, name, sub = route.rt, route.namespace, route.name, route.subresource
        store = self.store
        if sub == "log":
            return await self._logs(request, route, query)
        if sub == "proxy":
            return await self._proxy(route, query)
        as_table = tables.requested(request.headers.get("Accept"))
        if as_table and query.get("includeObject", "") not in ("", "None", "Metadata", "Object"):
            raise bad_request(f"invalid includeObject: {query['includeObject']!r}")
        if verb == "get":
            obj = store.get(rt, ns, name)
            if as_table:
                meta = {"resourceVersion": obj.get("metadata", {}).get("resourceVersion", "")}
                return _json(self._table(rt.plural, [obj], as_table, query, meta))
            return _json(obj)
        if verb == "list":
            return self._list(route, query, as_table)
        if verb == "watch":
            return await self._watch(request, route, query, as_table)
        if verb == "create":
            body = await self._body(request)
            if sub == "binding":
                return _json(self._bind(route, body), 201)
            if sub == "eviction":
                return _json(self._evict(route, body), 201)
            if rt.plural == "selfsubjectaccessreviews":
                return _json(self._review(body, user), 201)
            warnings = fieldvalidation.check(
                query.get("fieldValidation"), rt.kind, rt.api_version, body
            )
            return _warned(_json(store.create(rt, ns, body, dry_run=dry_run), 201), warnings)
        if verb == "update":
            body = await self._body(request)
            warnings = fieldvalidation.check(
                query.get("fieldValidation"), rt.kind, rt.api_version, body
            )
            updated = store.update(rt, ns, name, body, subresource=sub or None, dry_run=dry_run)
            return _warned(_json(updated), warnings)
        if verb == "patch":
            return await self._patch(request, route, query, dry_run)
        if verb == "delete":
            body = await self._body(request, allow_empty=True)
            opts = DeleteOptions.from_body(body, query)
            opts.dry_run = opts.dry_run or dry_run
            obj, gone = store.delete(rt, ns, name, opts)
            if gone and rt.plural != "pods":
                details = {"name": name, "kind": rt.plural, "uid": obj["metadata"]["uid"]}
                if rt.group:
                    details["group"] = rt.group
                return _json(success_status(details))
            return _json(obj)
        if verb == "deletecollection":
            body = await self._body(request, allow_empty=True)
            opts = DeleteOptions.from_body(body, query)
            opts.dry_run = opts.dry_run or dry_run
            labels = parse_label_selector(query.get("labelSelector"))
            fields = parse_field_selector(
                query.get("fieldSelector"), field_getters(store.storage(rt).rt)
            )
            items = store.delete_collection(rt, ns, labels, fields, opts)
            return _json(
                {
                    "kind": f"{rt.kind}List",
                    "apiVersion": rt.api_version,
                    "metadata": {"resourceVersion": str(store.rv)},
                    "items": items,
                }
            )
        raise method_not_supported(rt.plural, route.group, verb)

    async def _body(self, request: web.Request, *, allow_empty: bool = False) -> Any:
        raw = await request.read()
        if not raw.strip():
            if allow_empty:
                return None
            raise bad_request("the body of the request was empty")
        content_type = request.headers.get("Content-Type", JSON).split(";")[0].strip()
        if content_type == protobuf.PROTOBUF:
            return protobuf.decode(raw)
        try:
            if content_type in ("application/yaml", patching.APPLY):
                return yaml.safe_load(raw)
            return orjson.loads(raw)
        except (orjson.JSONDecodeError, yaml.YAMLError) as exc:
            raise bad_request(f"couldn't get version/kind; json parse error: {exc}") from exc

    # ------------------------------------------------------------------------------ list
    def _table(
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

    def _list(self, route: Route, query: dict[str, str], as_table: str | None) -> web.Response:
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
            return _json(self._table(rt.plural, objects, as_table, query, meta))
        head = orjson.dumps(
            {"kind": f"{rt.kind}List", "apiVersion": rt.api_version, "metadata": meta}
        )
        items = b",".join(_list_item(i, builtin=rt.builtin) for i in result.items)
        body = head[:-1] + b',"items":[' + items + b"]}"
        return web.Response(body=body, content_type=JSON)

    # ----------------------------------------------------------------------------- watch
    async def _watch(
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
        watcher = self.store.watch(
            rt,
            route.namespace,
            labels,
            fields,
            query.get("resourceVersion"),
            send_initial_events=send_initial,
            allow_bookmarks=truthy(query.get("allowWatchBookmarks")),
        )
        response = web.StreamResponse(
            status=200, headers={"Content-Type": JSON, "Cache-Control": "no-cache, private"}
        )
        response.enable_chunked_encoding()
        await response.prepare(request)
        self._streams.add(response)
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
                    ):
                        bookmark = watcher.bookmark_line(self.store.rv)
                        if as_table:
                            bookmark = self._table_line(
                                rt.plural, bookmark, as_table, query, first=False
                            )
                        await response.write(bookmark)
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
                        self._table_line(rt.plural, line, as_table, query, first=i == 0 and first)
                        for i, line in enumerate(chunk)
                    ]
                    first = False
                await response.write(b"".join(chunk))
                if ended:
                    break
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            self.store.unwatch(watcher)
            self._streams.discard(response)
        with contextlib.suppress(ConnectionResetError, RuntimeError):
            await response.write_eof()
        return response

    def _table_line(
        self, plural: str, line: bytes, version: str, query: dict[str, str], *, first: bool
    ) -> bytes:
        """A watch event whose object is a one-row Table (an ERROR's Status stays as it is)."""
        event = orjson.loads(line)
        obj = event.get("object") or {}
        if event.get("type") == "ERROR":
            return line
        meta = {"resourceVersion": obj.get("metadata", {}).get("resourceVersion", "")}
        rows = [] if event.get("type") == "BOOKMARK" else [obj]
        event["object"] = self._table(plural, rows, version, query, meta, columns=first)
        return orjson.dumps(event) + b"\n"

    # ----------------------------------------------------------------------------- patch
    async def _patch(
        self, request: web.Request, route: Route, query: dict[str, str], dry_run: bool
    ) -> web.Response:
        rt = route.rt
        content_type = request.headers.get("Content-Type", "").split(";")[0].strip()
        accepted = [patching.JSON, patching.MERGE, patching.APPLY]
        if rt.builtin:
            accepted.insert(2, patching.STRATEGIC)
        if content_type not in accepted:
            raise unsupported_media_type(accepted)
        body = await self._body(request)
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
            self.store.patch(
                rt,
                route.namespace,
                route.name,
                apply,
                subresource=route.subresource or None,
                dry_run=dry_run,
            )
        )

    # ------------------------------------------------------------------------ subresources
    def _bind(self, route: Route, body: Any) -> dict[str, Any]:
        target = (body or {}).get("target") or {}
        node = target.get("name")
        if not node:
            raise ApiError(
                422, "Invalid", f'Binding "{route.name}" is invalid: target.name: Required value'
            )
        current = self.store.get(route.rt, route.namespace, route.name)
        if current["spec"].get("nodeName"):
            raise conflict(
                "pods/binding",
                "",
                route.name,
                f'pod {route.name} is already assigned to node "{current["spec"]["nodeName"]}"',
            )
        if current["metadata"].get("deletionTimestamp"):
            raise conflict(
                "pods/binding",
                "",
                route.name,
                f"pod {route.name} is being deleted, cannot be assigned to a host",
            )
        now = self.store._now()

        def bind(obj: dict[str, Any]) -> dict[str, Any]:
            obj["spec"]["nodeName"] = node
            conditions = [
                c
                for c in obj.setdefault("status", {}).get("conditions") or []
                if c.get("type") != "PodScheduled"
            ]
            conditions.append(
                {
                    "type": "PodScheduled",
                    "status": "True",
                    "lastProbeTime": None,
                    "lastTransitionTime": now,
                }
            )
            obj["status"]["conditions"] = conditions
            return obj

        self.store.force_write(route.rt, route.namespace, route.name, bind)
        return success_status(code=201)

    def _evict(self, route: Route, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict) or body.get("kind") not in (None, "Eviction"):
            raise bad_request("the body of the request must be an Eviction")
        meta = body.get("metadata") or {}
        if meta.get("name") and meta["name"] != route.name:
            raise bad_request("name in URL does not match name in Eviction object")
        current = self.store.get(route.rt, route.namespace, route.name)
        opts = DeleteOptions.from_body(body.get("deleteOptions"), {})
        phase = (current.get("status") or {}).get("phase")
        if not current["metadata"].get("deletionTimestamp") and phase not in (
            "Succeeded",
            "Failed",
            "Pending",
        ):
            self._check_disruption_budget(route.namespace, current)
        if not current["metadata"].get("deletionTimestamp") and phase not in (
            "Succeeded",
            "Failed",
        ):
            now = self.store._now()

            def mark(obj: dict[str, Any]) -> dict[str, Any]:
                status = obj.setdefault("status", {})
                conditions = [
                    c for c in status.get("conditions") or [] if c.get("type") != "DisruptionTarget"
                ]
                conditions.append(
                    {
                        "type": "DisruptionTarget",
                        "status": "True",
                        "lastProbeTime": None,
                        "lastTransitionTime": now,
                        "reason": "EvictionByEvictionAPI",
                        "message": "Eviction API: evicting",
                    }
                )
                status["conditions"] = conditions
                return obj

            self.store.force_write(
                route.rt, route.namespace, route.name, mark, subresource="status"
            )
        self.store.delete(route.rt, route.namespace, route.name, opts)
        return success_status(code=201)

    def _check_disruption_budget(self, namespace: str, pod: dict[str, Any]) -> None:
        """Refuse an eviction the pod's PodDisruptionBudget does not allow (429).

        As the eviction subresource does; terminal, pending and terminating pods skip it.
        """
        pdb_rt = self.registry.lookup("policy", "v1", "poddisruptionbudgets")
        if pdb_rt is None:
            return
        labels = pod["metadata"].get("labels") or {}
        budgets = [
            s.obj
            for s in self.store.storage(pdb_rt).objects.values()
            if s.obj["metadata"].get("namespace") == namespace
            and not selector_from_match((s.obj.get("spec") or {}).get("selector")).empty
            and selector_from_match((s.obj.get("spec") or {}).get("selector")).matches(labels)
        ]
        if len(budgets) > 1:
            raise ApiError(
                500,
                "InternalError",
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
            )
        if budgets and int((budgets[0].get("status") or {}).get("disruptionsAllowed") or 0) < 1:
            raise ApiError(
                429,
                "TooManyRequests",
                "Cannot evict pod as it would violate the pod's disruption budget.",
                {
                    "causes": [
                        {
                            "reason": "DisruptionBudget",
                            "message": f"The disruption budget {budgets[0]['metadata']['name']} needs "
                            f"{(budgets[0].get('status') or {}).get('desiredHealthy', 0)} healthy pods and has "
                            f"{(budgets[0].get('status') or {}).get('currentHealthy', 0)} currently",
                        }
                    ]
                },
            )

    def _review(self, body: Any, user: Identity) -> dict[str, Any]:
        spec = (body or {}).get("spec") or {}
        ra = spec.get("resourceAttributes")
        if not isinstance(ra, dict):
            raise ApiError(
                422,
                "Invalid",
                'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified',
            )
        attrs = Attributes.of(
            user,
            str(ra.get("verb", "")),
            str(ra.get("group", "")),
            str(ra.get("resource", "")),
            str(ra.get("subresource", "")),
            str(ra.get("namespace", "")),
            str(ra.get("name", "")),
        )
        allowed = self.policy.allows(attrs)
        # Like RBAC: a refusal carries no reason (kubectl auth can-i then prints a bare "no").
        status: dict[str, Any] = {"allowed": allowed}
        out = dict(body)
        out.setdefault("apiVersion", "authorization.k8s.io/v1")
        out.setdefault("kind", "SelfSubjectAccessReview")
        out.setdefault("metadata", {})
        out["status"] = status
        return out

    # ------------------------------------------------------------------------------- logs
    async def _logs(
        self, request: web.Request, route: Route, query: dict[str, str]
    ) -> web.StreamResponse:
        pod = self.store.get(route.rt, route.namespace, route.name)
        containers = [str(c.get("name")) for c in (pod.get("spec") or {}).get("containers") or []]
        container = query.get("container") or ""
        if not container:
            default = (pod["metadata"].get("annotations") or {}).get(
                "kubectl.kubernetes.io/default-container"
            )
            if len(containers) == 1:
                container = containers[0]
            elif isinstance(default, str) and default in containers:
                container = default
            else:
                raise bad_request(
                    f"a container name must be specified for pod {route.name}, choose one of: [{' '.join(containers)}]"
                )
        if container not in containers:
            raise bad_request(f"container {container} is not valid for pod {route.name}")
        node = (pod.get("spec") or {}).get("nodeName")
        if not node:
            # A pod no node took has no kubelet to ask: kube-apiserver's LogLocation returns no
            # location and the stream answers 204 with no body, previous or not
            # (pkg/registry/core/pod/strategy.go, handlers/responsewriters StreamObject).
            return web.Response(status=204)
        if node in self.unreachable_nodes:
            raise ApiError(
                500,
                "InternalError",
                f'Get "https://{node}:10250/containerLogs/{route.namespace}/{route.name}/{container}": '
                "dial tcp: i/o timeout",
            )
        previous = truthy(query.get("previous"))
        entry = self.logs.get(pod["metadata"]["uid"], container)
        statuses = {
            s.get("name"): s for s in (pod.get("status") or {}).get("containerStatuses") or []
        }
        cstatus = statuses.get(container) or {}
        if previous:
            if entry is None or entry.previous is None:
                raise bad_request(
                    f'previous terminated container "{container}" in pod "{route.name}" not found'
                )
            log = entry.previous
        else:
            waiting = (cstatus.get("state") or {}).get("waiting")
            if entry is None and (waiting or not cstatus):
                reason = (waiting or {}).get("reason") or "ContainerCreating"
                raise bad_request(
                    f'container "{container}" in pod "{route.name}" is waiting to start: {reason}'
                )
            if entry is None:
                entry = self.logs.logs.setdefault((pod["metadata"]["uid"], container), PodLogs())
            log = entry.current
        try:
            wanted = LogQuery.parse(query, self.clock.now(), truthy)
        except ValueError as exc:
            raise bad_request(f"invalid log options: {exc}") from exc
        body = wanted.body(log)
        if not truthy(query.get("follow")) or previous:
            return web.Response(body=body, content_type="text/plain")
        response = web.StreamResponse(status=200, headers={"Content-Type": "text/plain"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        await response.write(body)
        sent = len(log.lines)
        uid = pod["metadata"]["uid"]
        try:
            while not self.stopping.is_set():
                await asyncio.sleep(0.1)
                if len(log.lines) > sent:
                    await response.write(
                        log.text(start=sent, timestamps=wanted.timestamps).encode(
                            "utf-8", "surrogateescape"
                        )
                    )
                    sent = len(log.lines)
                found = self.store.by_uid_get(uid)
                if found is None:
                    break
                state = next(
                    (
                        s.get("state") or {}
                        for s in (found[1].obj.get("status") or {}).get("containerStatuses") or []
                        if s.get("name") == container
                    ),
                    {},
                )
                if state.get("terminated"):
                    break
                transport = request.transport
                if transport is None or transport.is_closing():
                    break
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        with contextlib.suppress(ConnectionResetError, RuntimeError):
            await response.write_eof()
        return response

    # ------------------------------------------------------------------------------ proxy
    async def _proxy(self, route: Route, query: dict[str, str]) -> web.StreamResponse:
        pod_name, _, port_text = route.name.partition(":")
        pod = self.store.get(route.rt, route.namespace, pod_name)
        port = int(port_text) if port_text.isdecimal() else 80
        if not port_text.isdecimal() and port_text:
            for container in (pod.get("spec") or {}).get("containers") or []:
                for p in container.get("ports") or []:
                    if p.get("name") == port_text:
                        port = int(p.get("containerPort", 80))
        handler = self.proxy_handlers.get((route.namespace, pod_name, port))
        node = (pod.get("spec") or {}).get("nodeName")
        running = (pod.get("status") or {}).get("phase") == "Running"
        answer = (
            await handler("/" + route.rest, query)
            if handler is not None and running and not (node and node in self.unreachable_nodes)
            else None
        )
        if answer is None:
            ip = (pod.get("status") or {}).get("podIP") or "<none>"
            raise ApiError(
                503,
                "ServiceUnavailable",
                f"error trying to reach service: dial tcp {ip}:{port}: connect: connection refused",
            )
        status, content_type, body = answer
        return web.Response(status=status, body=body, content_type=content_type)

    # ------------------------------------------------------------------------------ admin
    async def _admin(
        self, request: web.Request, user: Identity, parts: list[str]
    ) -> web.StreamResponse:
        """Emulator controls (logs, policy, GC, compaction) for the simulator and tests."""
        if self.config.require_auth and user.name not in self.config.admin_users:
            raise ApiError(403, "Forbidden", f'User "{user.name}" cannot use the emulator controls')
        what = "/".join(parts)
        method = request.method
        body = await self._body(request, allow_empty=True) if method in ("POST", "PUT") else None
        if what == "audit" and method == "GET":
            return _json({"items": list(self.audit.entries), "writes": self.audit.writes()})
        if what == "audit" and method == "DELETE":
            self.audit.entries.clear()
            return _json(success_status())
        if what == "authz" and method == "PUT":
            try:
                self.policy = Policy.from_dict(body or {})
            except (ValueError, TypeError, AttributeError) as exc:
                raise bad_request(f"invalid policy: {exc}") from exc
            return _json(success_status())
        if what == "logs" and method == "POST":
            return _json(self._admin_logs(body or {}))
        if what == "gc" and method == "PUT":
            self.store.set_gc_enabled(bool((body or {}).get("enabled", True)))
            return _json(success_status())
        if what == "compact" and method == "POST":
            self.store.compact()
            return _json(success_status())
        if what == "expire-continue-tokens" and method == "POST":
            self.store.expire_continue_tokens()
            return _json(success_status())
        if what == "faults" and method == "PUT":
            try:
                self.faults.set(FaultProfile.from_dict(body or {}))
            except (ValueError, TypeError) as exc:
                raise bad_request(f"invalid fault profile: {exc}") from exc
            return _json(success_status())
        if what == "faults" and method == "GET":
            return _json({"counts": dict(self.faults.counts)})
        if what == "unreachable-nodes" and method == "PUT":
            self.unreachable_nodes = set((body or {}).get("nodes") or [])
            return _json(success_status())
        raise not_found("x-emulator", "", what)

    def _admin_logs(self, body: dict[str, Any]) -> dict[str, Any]:
        rt = self.registry.lookup("", "v1", "pods")
        assert rt is not None
        pod = self.store.get(rt, str(body.get("namespace", "")), str(body.get("pod", "")))
        uid = pod["metadata"]["uid"]
        container = str(body.get("container") or (pod["spec"]["containers"][0]["name"]))
        if body.get("rotate"):
            self.logs.rotate(uid, container)
        if body.get("text"):
            self.logs.append(uid, container, str(body["text"]), self.clock.now())
        return success_status()

    async def close_streams(self) -> None:
        self.stopping.set()
        self.store.close_watches()


def _no_resource() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})
