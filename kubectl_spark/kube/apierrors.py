"""The client's exceptions as kubectl spark's errors: one line each, saying what was being done and what to try."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from http.client import RemoteDisconnected

import orjson
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import ConnectTimeoutError
from urllib3.exceptions import HTTPError as Urllib3Error

from kubectl_spark import errors

PLAIN_HTTP_TO_TLS = "Client sent an HTTP request to an HTTPS server."


def _body_text(exc: ApiException) -> str:
    body = exc.body
    if isinstance(body, bytes):
        return body[:200].decode("utf-8", "replace")
    return body[:200] if isinstance(body, str) else ""


def translate(exc: ApiException, what: str) -> errors.ApiRequestError:
    """Turn an ApiException into our error, with the server's own message."""
    message = exc.reason or "error"
    reason = ""
    try:
        body = orjson.loads(exc.body) if exc.body else {}
        if isinstance(body, dict):
            message = body.get("message") or message
            reason = body.get("reason") or ""
    except (orjson.JSONDecodeError, TypeError):
        pass
    status = int(exc.status or 0)
    if status == 400 and PLAIN_HTTP_TO_TLS in _body_text(exc):
        # Go's TLS server (kube-apiserver's) answers plain HTTP so, on its TLS port.
        return errors.ApiRequestError(
            f"{what}: the server speaks HTTPS there (it answered 400 Bad Request: "
            f"{PLAIN_HTTP_TO_TLS}): is its URL https://…?",
            status=status,
        )
    cls: type[errors.ApiRequestError] = {
        401: errors.Unauthorized,
        403: errors.Forbidden,
        404: errors.NotFound,
        409: errors.Conflict,
        410: errors.Gone,
    }.get(status, errors.ServerError if status >= 500 else errors.ApiRequestError)
    if status == 401:
        message = "the server rejected the credentials in the kubeconfig (401 Unauthorized)"
    after = (exc.headers or {}).get("Retry-After") if hasattr(exc, "headers") else None
    return cls(
        f"{what}: {message}",
        status=status,
        reason=reason,
        retry_after=float(after) if after and str(after).isdecimal() else None,
    )


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
        why, lasting = _short(exc)
        raise errors.ClusterUnreachable(
            f"{what}: cannot reach the API server: {why}",
            lasting=lasting,
            unsent=lasting or _before_sending(exc),
        ) from exc


def _before_sending(exc: BaseException) -> bool:
    """Whether the request never left: no connection was made (refused, unresolved, timed out).

    urllib3's NewConnectionError and NameResolutionError are ConnectTimeoutErrors; every other
    failure (a read timed out, the connection closed mid-answer) may follow a request the
    server received, and for a write that means its outcome is unknown.
    """
    return any(isinstance(e, ConnectTimeoutError) for e in _chain(exc))


def _short(exc: BaseException) -> tuple[str, bool]:
    """What went wrong in a few words, and whether it lasts (retrying would not help)."""
    text = str(exc)
    if "Connection refused" in text:
        return "connection refused", True
    if "timed out" in text.lower():
        return "timed out", False
    unresolved = re.search(r"Failed to resolve '([^']+)'", text)
    if unresolved:
        return f"no such host {unresolved.group(1)}", False  # a resolver may answer next time
    if "CERTIFICATE_VERIFY_FAILED" in text:
        return "the server's certificate is not trusted (certificate verify failed)", True
    if "WRONG_VERSION_NUMBER" in text or "UNKNOWN_PROTOCOL" in text:
        # A TLS hello answered in plain text: the address serves HTTP.
        return "the server does not speak TLS (HTTPS) there: is its URL http://…?", True
    inner = _innermost(exc)
    if isinstance(inner, (RemoteDisconnected, ConnectionResetError)):
        # What a TLS port that does not answer plain HTTP does to it, and a proxy that drops us.
        hint = ": is its URL https://…?" if "HTTPConnectionPool" in text else ""
        return f"the server closed the connection without answering{hint}", False
    said = " ".join(str(inner).split())
    said = said if len(said) <= 160 else said[:160].rsplit(" ", 1)[0] + " …"
    return (f"{type(inner).__name__}: {said}" if said else type(inner).__name__), False


def _innermost(exc: BaseException) -> BaseException:
    """The error under urllib3's wrappers (MaxRetryError's reason, ProtocolError's last arg)."""
    return _chain(exc)[-1]


def _chain(exc: BaseException) -> list[BaseException]:
    """The error and those under it, outermost first."""
    chain = [exc]
    seen: set[int] = set()
    while id(exc) not in seen:
        seen.add(id(exc))
        reason = getattr(exc, "reason", None)
        if isinstance(reason, BaseException):
            exc = reason
        elif exc.args and isinstance(exc.args[-1], BaseException):
            exc = exc.args[-1]
        elif isinstance(exc.__cause__, BaseException):
            exc = exc.__cause__
        else:
            break
        chain.append(exc)
    return chain
