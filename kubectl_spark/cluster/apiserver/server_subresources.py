"""Subresources: binding, eviction (with PodDisruptionBudgets), logs, the pod proxy, and the admin endpoints the simulator drives.

Each is a collaborator of ``ApiServer`` holding only what it reads (the store, the log store,
the nodes cut off …); the server routes a request to one of them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from aiohttp import web

from kubectl_spark.knowledge.clock import Clock
from kubectl_spark.knowledge.podlogs import LogQuery, LogStore, PodLogs

from . import admission
from .authz import (
    AuditLog,
    Identity,
    Policy,
)
from .errors import (
    ApiError,
    bad_request,
    conflict,
    not_found,
    success_status,
)
from .faults import FaultProfile, Faults
from .selectors import selector_from_match
from .serving import (
    Route,
    _json,
    truthy,
)
from .storedata import DeleteOptions

if TYPE_CHECKING:
    from .resources import Registry
    from .serving import ProxyHandler, ServerConfig
    from .store import Store


def bind(store: Store, route: Route, body: Any) -> dict[str, Any]:
    """``pods/binding``: the scheduler's word, on a pod no node has yet."""
    target = (body or {}).get("target") or {}
    node = target.get("name")
    if not node:
        raise ApiError(
            422, "Invalid", f'Binding "{route.name}" is invalid: target.name: Required value'
        )
    current = store.get(route.rt, route.namespace, route.name)
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
    now = store.now_text()

    def assign(obj: dict[str, Any]) -> dict[str, Any]:
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

    store.writes.force_write(route.rt, route.namespace, route.name, assign)
    return success_status(code=201)


class Evictions:
    """``pods/eviction``, refused where the pod's PodDisruptionBudget allows no disruption."""

    def __init__(self, store: Store, registry: Registry) -> None:
        self.store, self.registry = store, registry

    def evict(self, route: Route, body: Any) -> dict[str, Any]:
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
            now = self.store.now_text()

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

            self.store.writes.force_write(
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


def chosen_container(pod: dict[str, Any], route: Route, query: Mapping[str, str]) -> str:
    """The container asked for, or the one kubectl defaults to (the only one, or annotated).

    As kube-apiserver's streamLocation (pkg/registry/core/pod/strategy.go) for logs and exec.
    """
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
    return container


class LogEndpoint:
    """Containers' logs as the kubelet serves them through the API server.

    The log store is the simulator's (``write``, from the admin endpoint); a node cut off
    answers as an unreachable kubelet does.
    """

    def __init__(
        self,
        store: Store,
        registry: Registry,
        logs: LogStore,
        clock: Clock,
        unreachable_nodes: set[str],
        stopping: asyncio.Event,
    ) -> None:
        self.store, self.registry, self.logs, self.clock = store, registry, logs, clock
        self.unreachable_nodes = unreachable_nodes  # the server's own set, changed in place
        self.stopping = stopping

    async def serve(
        self, request: web.Request, route: Route, query: dict[str, str]
    ) -> web.StreamResponse:
        """``pods/log``: whole, or followed while the container's run lasts."""
        pod = self.store.get(route.rt, route.namespace, route.name)
        container = chosen_container(pod, route, query)
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
        log = self._kept_log(pod, route, container, previous=previous)
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
        with contextlib.suppress(ConnectionResetError, asyncio.CancelledError):
            await self._follow(request, response, pod["metadata"]["uid"], container, log, wanted)
        with contextlib.suppress(ConnectionResetError, RuntimeError):
            await response.write_eof()
        return response

    def _kept_log(
        self, pod: dict[str, Any], route: Route, container: str, *, previous: bool
    ) -> Any:
        """The container's current (or previous) log, or the error the kubelet would answer."""
        entry = self.logs.get(pod["metadata"]["uid"], container)
        if previous:
            if entry is None or entry.previous is None:
                raise bad_request(
                    f'previous terminated container "{container}" in pod "{route.name}" not found'
                )
            return entry.previous
        statuses = {
            s.get("name"): s for s in (pod.get("status") or {}).get("containerStatuses") or []
        }
        cstatus = statuses.get(container) or {}
        waiting = (cstatus.get("state") or {}).get("waiting")
        if entry is None and (waiting or not cstatus):
            reason = (waiting or {}).get("reason") or "ContainerCreating"
            raise bad_request(
                f'container "{container}" in pod "{route.name}" is waiting to start: {reason}'
            )
        if entry is None:
            entry = self.logs.logs.setdefault((pod["metadata"]["uid"], container), PodLogs())
        return entry.current

    async def _follow(
        self,
        request: web.Request,
        response: web.StreamResponse,
        uid: str,
        container: str,
        log: Any,
        wanted: LogQuery,
    ) -> None:
        """Write new lines as they come, until the container stops or the client goes."""
        sent = len(log.lines)
        while not self.stopping.is_set():
            await asyncio.sleep(0.1)
            if len(log.lines) > sent:
                text = log.text(start=sent, timestamps=wanted.timestamps)
                await response.write(text.encode("utf-8", "surrogateescape"))
                sent = len(log.lines)
            found = self.store.by_uid_get(uid)
            if found is None:
                break
            statuses = (found[1].obj.get("status") or {}).get("containerStatuses") or []
            state = next((s.get("state") or {} for s in statuses if s.get("name") == container), {})
            # The run followed is over once the container does not run: terminated, or waiting
            # to run again (a restart's back-off). The kubelet's follow ends the same way
            # (pkg/kubelet/kuberuntime/logs/logs.go, waitLogs: at the log's end, a container
            # whose runtime state is not CONTAINER_RUNNING ends the stream).
            if "running" not in state:
                break
            transport = request.transport
            if transport is None or transport.is_closing():
                break

    def write(self, body: dict[str, Any]) -> dict[str, Any]:
        """The simulator's lines (or a rotation: a container that ran again) for one pod."""
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


class PodProxy:
    """``pods/proxy``: a simulated pod's HTTP answer (a Spark driver's REST API), if it runs."""

    def __init__(
        self,
        store: Store,
        handlers: dict[tuple[str, str, int], ProxyHandler],
        unreachable_nodes: set[str],
    ) -> None:
        self.store, self.handlers, self.unreachable_nodes = store, handlers, unreachable_nodes

    async def serve(self, route: Route, query: dict[str, str]) -> web.StreamResponse:
        pod_name, _, port_text = route.name.partition(":")
        pod = self.store.get(route.rt, route.namespace, pod_name)
        # A connection is admitted as kube-apiserver admits it (registry/core/pod/rest ProxyREST is
        # a Connecter; the connect handler runs admission with operation CONNECT, the options as
        # the object): a fence's policy refuses the fenced driver's proxy requests too.
        options = {"kind": "PodProxyOptions", "apiVersion": "v1", "path": "/" + route.rest}
        admission.admit(
            self.store,
            admission.Request(
                "CONNECT", route.rt, route.namespace, pod_name, "proxy", options, None
            ),
        )
        port = int(port_text) if port_text.isdecimal() else 80
        if not port_text.isdecimal() and port_text:
            for container in (pod.get("spec") or {}).get("containers") or []:
                for p in container.get("ports") or []:
                    if p.get("name") == port_text:
                        port = int(p.get("containerPort", 80))
        handler = self.handlers.get((route.namespace, pod_name, port))
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


class Admin:
    """The emulator's controls (``/x-emulator/…``): what the simulator and the tests drive."""

    def __init__(
        self,
        config: ServerConfig,
        store: Store,
        audit: AuditLog,
        faults: Faults,
        logs: LogEndpoint,
        unreachable_nodes: set[str],
        set_policy: Callable[[Policy], None],
        read_body: Callable[[web.Request], Awaitable[Any]],
    ) -> None:
        self.config, self.store, self.audit, self.faults = config, store, audit, faults
        self.logs, self.unreachable_nodes = logs, unreachable_nodes
        self.set_policy, self.read_body = set_policy, read_body

    async def serve(
        self, request: web.Request, user: Identity, parts: list[str]
    ) -> web.StreamResponse:
        """Emulator controls (logs, policy, GC, compaction) for the simulator and tests."""
        if self.config.require_auth and user.name not in self.config.admin_users:
            raise ApiError(403, "Forbidden", f'User "{user.name}" cannot use the emulator controls')
        what = "/".join(parts)
        method = request.method
        body = await self.read_body(request) if method in ("POST", "PUT") else None
        if what == "audit" and method == "GET":
            return _json({"items": list(self.audit.entries), "writes": self.audit.writes()})
        if what == "audit" and method == "DELETE":
            self.audit.entries.clear()
            return _json(success_status())
        if what == "authz" and method == "PUT":
            try:
                self.set_policy(Policy.from_dict(body or {}))
            except (ValueError, TypeError, AttributeError) as exc:
                raise bad_request(f"invalid policy: {exc}") from exc
            return _json(success_status())
        if what == "logs" and method == "POST":
            return _json(self.logs.write(body or {}))
        if what == "gc" and method == "PUT":
            self.store.gc.set_enabled(bool((body or {}).get("enabled", True)))
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
            self.unreachable_nodes.clear()  # in place: the logs and the proxy hold this set
            self.unreachable_nodes.update((body or {}).get("nodes") or [])
            return _json(success_status())
        raise not_found("x-emulator", "", what)
