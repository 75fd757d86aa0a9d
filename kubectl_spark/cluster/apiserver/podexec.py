"""``pods/exec``: a command in a running container, relayed to the kubelet of its node.

As kube-apiserver does (pkg/registry/core/pod/rest/subresources.go, ExecREST): the pod and
its container are checked here (strategy.go's streamLocation), the kubelet is found by its
Node's InternalIP and ``daemonEndpoints.kubeletEndpoint.Port``, and the streams are passed on
untouched. A client speaks the WebSocket remote-command protocol v5.channel.k8s.io (kubectl
1.30 and later by default, client-go tools/remotecommand/websocket.go); kube-apiserver
translates it to SPDY for the kubelet, while the emulator relays the WebSocket itself to the
simulated kubelets (sim/kubeletapi.py), which speak v5. A SPDY upgrade is refused.

A WebSocket upgrade is a GET, authorized for ``create`` as well as ``get`` (the feature gate
AuthorizePodWebsocketUpgradeCreatePermission, beta and on from 1.35: kubernetes/website,
feature-gates/AuthorizePodWebsocketUpgradeCreatePermission.md), which the server checks.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import aiohttp
from aiohttp import web

from . import admission
from .errors import ApiError, bad_request
from .server_subresources import chosen_container
from .serving import Route, truthy

if TYPE_CHECKING:
    from .resources import Registry
    from .store import Store

PROTOCOL = "v5.channel.k8s.io"
# The kubelet's query for the client's (pkg/kubelet/server/server.go, getExecRequestParams)
_STREAMS = {"stdin": "input", "stdout": "output", "stderr": "error", "tty": "tty"}
DIAL_SECONDS = 5.0


class PodExec:
    def __init__(self, store: Store, registry: Registry, unreachable_nodes: set[str]) -> None:
        self.store, self.registry = store, registry
        self.unreachable_nodes = unreachable_nodes  # the server's own set, changed in place

    async def serve(self, request: web.Request, route: Route) -> web.StreamResponse:
        pod = self.store.get(route.rt, route.namespace, route.name)
        query = {k: request.query.getall(k)[-1] for k in request.query}
        container = chosen_container(pod, route, query)
        commands = request.query.getall("command", [])
        if not commands:
            raise bad_request("you must provide at least one command")
        # A connection, admitted with operation CONNECT and the options as its object
        # (registry/core/pod/rest ExecREST is a Connecter): a fence's policy sees it.
        options = {
            "kind": "PodExecOptions",
            "apiVersion": "v1",
            "container": container,
            "command": commands,
            **{k: truthy(query.get(k)) for k in _STREAMS},
        }
        admission.admit(
            self.store,
            admission.Request(
                "CONNECT", route.rt, route.namespace, route.name, "exec", options, None
            ),
        )
        node = str((pod.get("spec") or {}).get("nodeName") or "")
        if not node:
            raise bad_request(f"pod {route.name} does not have a host assigned")
        address = self._kubelet(node)
        client = web.WebSocketResponse(protocols=(PROTOCOL,), autoping=True)
        if not client.can_prepare(request).ok:
            # SPDY: an older kubectl, one told KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false, or
            # kubectl's fallback after its WebSocket failed — which must then fail the same way,
            # so the kubelet is dialled first (it is told nothing).
            await _dial(address)
            raise bad_request("Upgrade request required: the emulator serves exec over WebSockets")
        wanted = [("command", c) for c in commands] + [
            (theirs, "1") for ours, theirs in _STREAMS.items() if truthy(query.get(ours))
        ]
        url = (
            f"https://{address}/exec/{route.namespace}/{route.name}/{container}?{urlencode(wanted)}"
        )
        timeout = aiohttp.ClientTimeout(sock_connect=DIAL_SECONDS)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            try:
                kubelet = await session.ws_connect(url, protocols=(PROTOCOL,), ssl=False)
            except aiohttp.WSServerHandshakeError as exc:
                # 404: what kubectl prints from a real cluster for a container that does not run
                said = f'container not found ("{container}")' if exc.status == 404 else exc.message
                raise ApiError(
                    500, "InternalError", f"unable to upgrade connection: {said}"
                ) from exc
            except (aiohttp.ClientError, TimeoutError) as exc:
                raise _dial_error(address, exc) from exc
            async with kubelet:
                await client.prepare(request)
                await _relay(client, kubelet)
        return client

    def _kubelet(self, node: str) -> str:
        """host:port of the node's kubelet, as its Node's status says (or the error to answer)."""
        if node in self.unreachable_nodes:
            raise ApiError(
                500, "InternalError", f"error dialing backend: dial tcp {node}:10250: i/o timeout"
            )
        nodes = self.registry.lookup("", "v1", "nodes")
        if nodes is None:
            raise ApiError(500, "InternalError", "no nodes resource")
        found: dict[str, Any] = self.store.get(nodes, "", node)
        status = found.get("status") or {}
        ip = next(
            (
                a.get("address")
                for a in status.get("addresses") or ()
                if a.get("type") == "InternalIP"
            ),
            node,
        )
        port = ((status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port")
        return f"{ip}:{port or 10250}"


def _dial_error(address: str, exc: BaseException) -> ApiError:
    return ApiError(500, "InternalError", f"error dialing backend: dial tcp {address}: {exc}")


async def _dial(address: str) -> None:
    """Whether the kubelet's port answers at all (the error kube-apiserver's dial gives)."""
    host, _, port = address.rpartition(":")
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)), DIAL_SECONDS)
    except (OSError, TimeoutError) as exc:
        raise _dial_error(address, exc) from exc
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()


async def _relay(client: web.WebSocketResponse, kubelet: aiohttp.ClientWebSocketResponse) -> None:
    """Each side's binary messages to the other, until either closes; then both close."""

    async def up() -> None:
        async for message in client:
            if message.type == aiohttp.WSMsgType.BINARY:
                await kubelet.send_bytes(message.data)

    async def down() -> None:
        async for message in kubelet:
            if message.type == aiohttp.WSMsgType.BINARY:
                await client.send_bytes(message.data)

    pumps = {asyncio.ensure_future(up()), asyncio.ensure_future(down())}
    try:
        await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for pump in pumps:
            pump.cancel()
        for pump in pumps:
            with contextlib.suppress(asyncio.CancelledError, ConnectionResetError):
                await pump
        with contextlib.suppress(ConnectionResetError):
            await client.close()
