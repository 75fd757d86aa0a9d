"""The service proxy: ``/api/v1/namespaces/<ns>/services/[<scheme>:]<name>[:<port>]/proxy/<path>``.

As kube-apiserver resolves it (pkg/registry/core/service/storage/storage.go,
``ResourceLocation``): a port given by number is mapped to the Service's port of that number
(503 when it has none); the Endpoints object of the Service's name is read (404 when there is
none, 503 when it has no subsets); an address is taken from a subset that has a port of that
name, and only if its ``targetRef`` is a pod of the namespace whose IPs include the address
(``isValidAddress``). The request then goes, as it came, to ``<scheme>://<ip>:<port>/<path>``
over real HTTP: on this machine an address is one a process listens on (a host network pod's
is its node's InternalIP, see sim/kubelet_status.py).
"""

from __future__ import annotations

import ssl
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import aiohttp
from aiohttp import web

from .errors import ApiError, bad_request, not_found
from .serving import Route

if TYPE_CHECKING:
    from .resources import Registry
    from .store import Store

TIMEOUT = aiohttp.ClientTimeout(total=30)
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding"}


def _unavailable(message: str) -> ApiError:
    return ApiError(503, "ServiceUnavailable", message)


def split_scheme_name_port(text: str) -> tuple[str, str, str] | None:
    """As apimachinery's ``SplitSchemeNamePort``: "name", "name:port" or "scheme:name:port"."""
    parts = text.split(":")
    if len(parts) == 1:
        scheme, name, port = "", parts[0], ""
    elif len(parts) == 2:
        scheme, name, port = "", parts[0], parts[1]
    elif len(parts) == 3:
        scheme, name, port = parts
    else:
        return None
    if not name or scheme not in ("", "http", "https"):
        return None
    return scheme or "http", name, port


class ServiceProxy:
    """Resolves a Service to one of its endpoints' addresses and forwards requests there."""

    def __init__(self, store: Store, registry: Registry) -> None:
        self.store = store
        self.registry = registry

    def location(self, namespace: str, text: str) -> tuple[str, str, int]:
        """(scheme, address, port) of ``text`` ("[scheme:]name[:port]") in ``namespace``."""
        split = split_scheme_name_port(text)
        if split is None:
            raise bad_request(f'invalid service request "{text}"')
        scheme, name, port = split
        services_type = self.registry.lookup("", "v1", "services")
        assert services_type is not None
        if port.isdecimal():  # the Service is read only to name a port given by number
            service = self.store.get(services_type, namespace, name)
            named = [
                str(p.get("name") or "")
                for p in (service.get("spec") or {}).get("ports") or []
                if str(p.get("port")) == port
            ]
            if not named:
                raise _unavailable(f'no service port {port} found for service "{name}"')
            port = named[0]
        endpoints_type = self.registry.lookup("", "v1", "endpoints")
        pods_type = self.registry.lookup("", "v1", "pods")
        assert endpoints_type is not None
        assert pods_type is not None
        found = self.store.lookup(endpoints_type, namespace, name)
        if found is None:
            raise not_found("endpoints", "", name)
        subsets = found.obj.get("subsets") or []
        if not subsets:
            raise _unavailable(f'no endpoints available for service "{name}"')
        for subset in subsets:
            for ep_port in subset.get("ports") or []:
                if str(ep_port.get("name") or "") != port:
                    continue
                for address in subset.get("addresses") or []:
                    ref = address.get("targetRef") or {}
                    if ref.get("namespace") != namespace:
                        continue
                    pod = self.store.lookup(pods_type, namespace, str(ref.get("name") or ""))
                    if pod is None:
                        continue
                    status = pod.obj.get("status") or {}
                    ips = {i.get("ip") for i in status.get("podIPs") or []} | {status.get("podIP")}
                    if address.get("ip") in ips:
                        return scheme, str(address["ip"]), int(ep_port.get("port") or 0)
        raise _unavailable(f'no endpoints available for service "{text}"')

    async def serve(self, request: web.Request, route: Route) -> web.StreamResponse:
        scheme, ip, port = self.location(route.namespace, route.name)
        host = f"[{ip}]" if ":" in ip else ip
        url = f"{scheme}://{host}:{port}/{route.rest}"
        headers = [
            (k, v)
            for k, v in request.headers.items()
            if k.lower() not in HOP_BY_HOP and k.lower() not in ("authorization", "host")
        ]
        return await forward(request, url, headers)


async def forward(
    request: web.Request,
    url: str,
    headers: list[tuple[str, str]],
    *,
    tls: ssl.SSLContext | bool = True,
) -> web.Response:
    """``request`` sent on to ``url`` with ``headers``, and its answer returned as it came."""
    body = await request.read() if request.can_read_body else None
    try:
        async with (
            aiohttp.ClientSession(timeout=TIMEOUT) as session,
            session.request(
                request.method,
                url,
                params=request.query,
                data=body,
                headers=headers,
                ssl=tls,
                allow_redirects=False,
            ) as answer,  # fmt: skip
        ):
            content = await answer.read()
            kept = {k: v for k, v in answer.headers.items() if k.lower() not in HOP_BY_HOP}
            return web.Response(status=answer.status, body=content, headers=kept)
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        where = urlsplit(url).netloc
        raise _unavailable(f"error trying to reach service: dial tcp {where}: {exc}") from exc
