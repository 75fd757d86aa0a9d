"""The HTTP front of the emulator: kube-apiserver's REST paths, verbs and wire formats.

Requests are parsed here and handed to the :class:`Store`; responses are JSON (never
protobuf), which every client accepts. Discovery is served in the legacy per-group-version form:
kubectl and client-go ask for aggregated discovery first and fall back when the answer's
Content-Type is plain ``application/json`` (measured with kubectl 1.32).
"""

from __future__ import annotations

import asyncio
import functools
from datetime import UTC
from email.utils import format_datetime
from typing import Any

import orjson
import yaml
from aiohttp import web

from kubectl_spark.knowledge.clock import Clock
from kubectl_spark.knowledge.podlogs import LogStore

from . import admission, fieldvalidation, openapi, patching, protobuf, reviews, tables, tokens
from .aggregation import Aggregator
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
    expired,
    forbidden,
    method_not_supported,
    success_status,
    unauthorized,
)
from .faults import Faults
from .impersonation import impersonated
from .kinds import field_getters
from .podexec import PodExec
from .resources import Registry
from .selectors import parse_field_selector, parse_label_selector
from .server_reads import CollectionReads, PatchEndpoint
from .server_subresources import Admin, Evictions, LogEndpoint, PodProxy, bind
from .service_proxy import ServiceProxy
from .serving import (
    ANONYMOUS_PATHS,
    JSON,
    VERSION_INFO,
    ProxyHandler,
    Route,
    ServerConfig,
    _error,
    _json,
    _no_resource,
    _warned,
    truthy,
)
from .store import Store
from .storedata import DeleteOptions


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
        self.aggregator: Aggregator | None = None  # set where the emulator serves TLS
        # The subresources' collaborators; each holds what it reads (these very objects).
        self.evictions = Evictions(store, registry)
        self.pod_logs = LogEndpoint(
            store, registry, self.logs, clock, self.unreachable_nodes, self.stopping
        )
        self.pod_proxy = PodProxy(store, self.proxy_handlers, self.unreachable_nodes)
        self.pod_exec = PodExec(store, registry, self.unreachable_nodes)
        self.service_proxy = ServiceProxy(store, registry)
        self.reads = CollectionReads(
            store, clock, config, self.faults, self._streams, self.stopping
        )
        self.patches = PatchEndpoint(store, self._body)
        self.admin = Admin(
            config,
            store,
            self.audit,
            self.faults,
            self.pod_logs,
            self.unreachable_nodes,
            self._set_policy,
            functools.partial(self._body, allow_empty=True),
        )

    def _set_policy(self, policy: Policy) -> None:
        self.policy = policy

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
        who = self.token_identity(token.strip()) if scheme.lower() == "bearer" else None
        if who is not None:
            return who
        raise unauthorized()

    def token_identity(self, token: str) -> Identity | None:
        """Who a bearer token is: a request's, or a TokenReview's (aggregation.py)."""
        if token in self.config.tokens:
            return Identity(self.config.tokens[token])
        bound = self.config.bound_tokens.get(token)
        return tokens.identity(self.store, self.clock, bound) if bound else None

    def service_endpoint(self, namespace: str, name: str, port: str) -> tuple[str, int]:
        """An address and port of a Service's endpoints, as the service proxy resolves them."""
        _, ip, number = self.service_proxy.location(namespace, f"https:{name}:{port}")
        return ip, number

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
            return await self.admin.serve(request, user, parts[2:] if len(parts) > 1 else [])
        if head == "api":
            if len(parts) == 1:
                return _json(self.registry.api_versions(self.config.server_address))
            if parts[1] != "v1":
                raise _no_resource()
            if len(parts) == 2:
                return _json(self.registry.resource_list("", "v1"))
            return await self._resource(request, user, "", "v1", parts[2:])
        if head == "apis":
            return await self._apis(request, user, parts)
        raise _no_resource()

    async def _apis(
        self, request: web.Request, user: Identity, parts: list[str]
    ) -> web.StreamResponse:
        if len(parts) == 1:
            return _json(self.registry.api_group_list())
        if len(parts) == 2:
            group_doc = self.registry.api_group(parts[1])
            if group_doc is None:
                raise _no_resource()
            return _json(group_doc)
        proxied = await self._aggregated(request, user, parts)
        if proxied is not None:
            return proxied
        if len(parts) == 3:
            doc = self.registry.resource_list(parts[1], parts[2])
            if doc is None:
                raise _no_resource()
            return _json(doc)
        return await self._resource(request, user, parts[1], parts[2], parts[3:])

    async def _aggregated(
        self, request: web.Request, user: Identity, parts: list[str]
    ) -> web.StreamResponse | None:
        """``/apis/<group>/<version>/...`` served by an APIService's Service; None: not one."""
        if self.aggregator is None or len(parts) < 3:
            return None
        # A dictionary lookup on every /apis request; the registry is asked only on a hit.
        spec = Aggregator.registered(self, parts[1], parts[2])
        if spec is None or self.registry.resource_list(parts[1], parts[2]) is not None:
            return None
        return await self.aggregator.proxy(self, request, user, spec, parts[3:])

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
        # Admission (admission.py) reads who asks from here: the store's writes see no request.
        asking = admission.requester.set(user)
        try:
            self._authorize(user, verb, route)
            if route.subresource == "exec" and verb == "get":
                # A WebSocket's upgrade is a GET: create is asked too (podexec.py says why)
                self._authorize(user, "create", route)
            response = await self._perform(request, route, verb, query, dry_run, user)
        except ApiError as err:
            self.audit.record(attrs, err.code, dry_run=dry_run)
            raise
        finally:
            admission.requester.reset(asking)
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
            return await self.pod_logs.serve(request, route, query)
        if sub == "exec":
            return await self.pod_exec.serve(request, route)
        if sub == "proxy" and rt.plural == "services":
            return await self.service_proxy.serve(request, route)
        if sub == "proxy":
            return await self.pod_proxy.serve(route, query)
        as_table = tables.requested(request.headers.get("Accept"))
        if as_table and query.get("includeObject", "") not in ("", "None", "Metadata", "Object"):
            raise bad_request(f"invalid includeObject: {query['includeObject']!r}")
        if verb == "get":
            if query.get("resourceVersion", "0") not in ("", "0"):
                store.check_fresh(query["resourceVersion"])
            obj = store.get(rt, ns, name)
            if as_table:
                meta = {"resourceVersion": obj.get("metadata", {}).get("resourceVersion", "")}
                return _json(self.reads.table(rt.resource, [obj], as_table, query, meta))
            return _json(obj)
        if verb == "list":
            return self.reads.list(route, query, as_table)
        if verb == "watch":
            return await self.reads.watch(request, route, query, as_table)
        if verb in ("create", "update", "patch"):
            return await self._write(request, route, verb, query, dry_run, user)
        if verb in ("delete", "deletecollection"):
            return await self._delete(request, route, verb, query, dry_run)
        raise method_not_supported(rt.plural, route.group, verb)

    async def _write(
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
        if verb == "create":
            body = await self._body(request)
            if sub == "binding":
                return _json(bind(self.store, route, body), 201)
            if sub == "eviction":
                return _json(self.evictions.evict(route, body), 201)
            if rt.plural == "selfsubjectaccessreviews":
                return _json(reviews.self_review(self.policy, body, user), 201)
            if rt.plural == "subjectaccessreviews":
                admins = self.config.admin_users
                return _json(reviews.access_review(self.policy, admins, body), 201)
            if rt.plural == "tokenreviews":
                return _json(reviews.token_review(self.token_identity, body), 201)
            if sub == "token":
                token, bound, answer = tokens.issue(store, self.clock, ns, name, body)
                if not dry_run:
                    self.config.bound_tokens[token] = bound
                return _json(answer, 201)
            warnings = fieldvalidation.check(
                query.get("fieldValidation"), rt.kind, rt.api_version, body
            )
            return _warned(_json(store.create(rt, ns, body, dry_run=dry_run), 201), warnings)
        if verb == "update":
            body = await self._body(request)
            warnings = fieldvalidation.check(
                query.get("fieldValidation"), rt.kind, rt.api_version, body
            )
            updated = store.writes.update(
                rt, ns, name, body, subresource=sub or None, dry_run=dry_run
            )
            return _warned(_json(updated), warnings)
        return await self.patches.serve(request, route, query, dry_run)

    async def _delete(
        self,
        request: web.Request,
        route: Route,
        verb: str,
        query: dict[str, str],
        dry_run: bool,
    ) -> web.StreamResponse:
        rt, ns, name = route.rt, route.namespace, route.name
        store = self.store
        opts = DeleteOptions.from_body(await self._body(request, allow_empty=True), query)
        opts.dry_run = opts.dry_run or dry_run
        if verb == "delete":
            obj, gone = store.delete(rt, ns, name, opts)
            if gone and rt.plural != "pods":
                details = {"name": name, "kind": rt.plural, "uid": obj["metadata"]["uid"]}
                if rt.group:
                    details["group"] = rt.group
                return _json(success_status(details))
            return _json(obj)
        if verb == "deletecollection":
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

    # ----------------------------------------------------------------------------- watch

    # ----------------------------------------------------------------------------- patch

    # ------------------------------------------------------------------------ subresources

    # ------------------------------------------------------------------------------- logs

    # ------------------------------------------------------------------------------ proxy

    # ------------------------------------------------------------------------------ admin

    async def close_streams(self) -> None:
        self.stopping.set()
        self.store.close_watches()
