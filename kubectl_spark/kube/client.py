"""Connecting to a cluster from a kubeconfig, and turning client errors into ours.

Only this package imports ``kubernetes``. Responses are read raw (``_preload_content=False``)
and parsed with orjson: the client's model classes are an order of magnitude slower.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import orjson
from kubernetes import config as k8s_config
from kubernetes.client.exceptions import ApiException
from kubernetes.config.config_exception import ConfigException
from urllib3.exceptions import HTTPError as Urllib3Error

from kubectl_spark import errors


@dataclass(frozen=True)
class Connection:
    """Where to connect: kubeconfig path(s) and the chosen context (None: current-context)."""

    kubeconfig: str | None = None
    context: str | None = None
    request_timeout: float | None = None


def api_client(conn: Connection) -> Any:
    try:
        return k8s_config.new_client_from_config(config_file=conn.kubeconfig, context=conn.context)
    except (ConfigException, OSError, TypeError, ValueError) as exc:
        raise errors.ConfigError(f"cannot load kubeconfig: {exc}") from exc


def translate(exc: ApiException, what: str) -> errors.ApiRequestError:
    """Turn an ApiException into our error, with the server's own message."""
    message = exc.reason or "error"
    reason = ""
    try:
        body = orjson.loads(exc.body) if exc.body else {}
        message = body.get("message") or message
        reason = body.get("reason") or ""
    except (orjson.JSONDecodeError, TypeError):
        pass
    status = int(exc.status or 0)
    cls: type[errors.ApiRequestError] = {
        401: errors.Unauthorized,
        403: errors.Forbidden,
        404: errors.NotFound,
        409: errors.Conflict,
        410: errors.Gone,
    }.get(status, errors.ServerError if status >= 500 else errors.ApiRequestError)
    if status == 401:
        message = "the server rejected the credentials in the kubeconfig (401 Unauthorized)"
    return cls(f"{what}: {message}", status=status, reason=reason)


@contextmanager
def translated(what: str) -> Iterator[None]:
    try:
        yield
    except ApiException as exc:
        if exc.status == 0 or exc.status is None:
            raise errors.ClusterUnreachable(
                f"{what}: cannot reach the API server: {exc.reason}"
            ) from exc
        raise translate(exc, what) from exc
    except (Urllib3Error, OSError) as exc:
        raise errors.ClusterUnreachable(f"{what}: cannot reach the API server: {exc}") from exc


def get_json(conn: Connection, path: str) -> Any:
    """GET a path of the API (e.g. ``/version``, ``/api/v1/namespaces``) as parsed JSON."""
    api = api_client(conn)
    with translated(f"GET {path}"):
        response = api.call_api(
            path,
            "GET",
            auth_settings=["BearerToken"],
            _preload_content=False,
            _request_timeout=conn.request_timeout,
            header_params={"Accept": "application/json"},
        )
        raw = response[0] if isinstance(response, tuple) else response
        return orjson.loads(raw.data)
