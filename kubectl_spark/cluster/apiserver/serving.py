"""What every request handler uses: routes, JSON answers, errors, the server's configuration."""

from __future__ import annotations

import platform
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from .errors import (
    ApiError,
)
from .resources import ResourceType
from .storedata import Stored, without_type_meta
from .tokens import BoundToken

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
    bound_tokens: dict[str, BoundToken] = field(default_factory=dict)  # TokenRequest's tokens
    admin_users: frozenset[str] = frozenset()
    require_auth: bool = True
    min_request_timeout: float = 1800.0
    bookmark_interval: float = 60.0
    server_address: str = "127.0.0.1:0"


def _no_resource() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})
