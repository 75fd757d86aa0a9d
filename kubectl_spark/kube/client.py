"""Connecting to a cluster, reading raw JSON, and turning client errors into ours.

Only this package imports ``kubernetes``. Responses are read raw (``_preload_content=False``)
and parsed with orjson: the client's model classes are an order of magnitude slower.
"""

from __future__ import annotations

import builtins
import dataclasses
import logging
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any

import orjson
import urllib3
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config
from kubernetes.client.exceptions import ApiException
from kubernetes.config.config_exception import ConfigException
from urllib3 import HTTPHeaderDict

from kubectl_spark import errors
from kubectl_spark.memory import collector_paused

from . import trace
from .apierrors import translate, translated
from .config import Resolved, Selection, load


@dataclass(frozen=True)
class Connection:
    """Where to connect: kubeconfig path(s), kubectl's overrides, and the request timeout."""

    kubeconfig: str | None = None
    context: str | None = None
    cluster: str | None = None
    user: str | None = None
    namespace: str | None = None
    request_timeout: float | None = None
    server: str | None = None
    token: str | None = None
    insecure_skip_tls_verify: bool = False
    impersonate: str | None = None
    impersonate_groups: tuple[str, ...] = ()
    impersonate_uid: str | None = None
    verbosity: int = 0  # -v: at trace.REQUESTS every request is printed

    def selection(self) -> Selection:
        """What the kubeconfig loader applies: the fields both have, by name."""
        return Selection(**{f.name: getattr(self, f.name) for f in dataclasses.fields(Selection)})


READ_ATTEMPTS = 5
RETRIED = frozenset({429, 500, 502, 503, 504})
LIST_RESTARTS = 3
# A Date header is to the second: a smaller difference from this machine's clock is its rounding.
SKEW_NOTICED = timedelta(seconds=2)


@dataclass
class Api:
    """A connected client: the raw ApiClient and what the kubeconfig resolved to."""

    client: Any
    resolved: Resolved
    timeout: float | None
    acting_as: str = ""  # the user impersonated (--as, or the kubeconfig's), if any
    verbosity: int = 0
    # The server's clock less this machine's, from the last answer's Date header (zero when
    # they agree to the second).
    skew: timedelta = timedelta(0)
    _closed: bool = field(default=False, repr=False)

    @property
    def namespace(self) -> str:
        return self.resolved.namespace

    def now(self) -> datetime:
        """The time by the cluster's clock, which its timestamps and kubectl's AGE are read against.

        kube-apiserver prints AGE for ``kubectl get`` by its own clock, so a laptop's skewed
        clock (or the demo's clock, still catching up) would otherwise age every pod differently
        from kubectl.
        """
        return datetime.now(UTC) + self.skew

    def _learn_clock(self, date: str | None) -> None:
        try:
            server = parsedate_to_datetime(date) if date else None
        except (TypeError, ValueError):
            return  # an unreadable Date says nothing of the server's clock
        if server is None or server.tzinfo is None:
            return
        skew = server - datetime.now(UTC)
        self.skew = skew if abs(skew) >= SKEW_NOTICED else timedelta(0)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.client.close()

    def __enter__(self) -> Api:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        query: list[tuple[str, Any]] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        stream: bool = False,
        what: str = "",
        timeout: float | None = None,
        retry: bool = True,
    ) -> Any:
        """One request; JSON answers are parsed, ``stream=True`` returns the response.

        Reads (GET) are retried on 429, 5xx and network errors, with backoff and jitter,
        honouring Retry-After, within --request-timeout; the last error says how many attempts
        were made. Writes are never retried: one may have been applied, and a plan re-reads
        the cluster rather than guessing. ``timeout`` caps this request below --request-timeout;
        ``retry=False`` for answers that are not transient (a pod proxy's "connection refused").
        """
        if method != "GET" or not retry:
            return self._once(method, path, query, body, content_type, stream, what, timeout)
        budget = _shorter(self.timeout, timeout)
        deadline = time.monotonic() + budget if budget else None
        for attempt in range(1, READ_ATTEMPTS + 1):
            try:
                return self._once(method, path, query, body, content_type, stream, what, timeout)
            except (errors.ServerError, errors.ApiRequestError, errors.ClusterUnreachable) as exc:
                status = getattr(exc, "status", 0)
                if isinstance(exc, errors.ClusterUnreachable):
                    if exc.lasting:
                        raise  # nothing listens, or it is not who it should be (kubectl too)
                elif status not in RETRIED:
                    raise
                delay = getattr(exc, "retry_after", None) or min(
                    0.2 * 2 ** (attempt - 1), 3.0
                ) * random.uniform(0.5, 1.5)
                late = deadline is not None and time.monotonic() + delay > deadline
                if attempt == READ_ATTEMPTS or late:
                    exc.message += f" (gave up after {attempt} attempt{'s' if attempt > 1 else ''})"
                    raise
                time.sleep(delay)
        raise AssertionError("unreachable")

    def _once(
        self,
        method: str,
        path: str,
        query: list[tuple[str, Any]] | None,
        body: Any,
        content_type: str,
        stream: bool,
        what: str,
        timeout: float | None,
    ) -> Any:
        with translated(what or f"{method} {path}"):
            raw = self._send(
                method,
                path,
                query or [],
                body,
                content_type,
                None if stream else _shorter(self.timeout, timeout),  # a stream has no deadline
            )
            if stream:
                return raw
            data = raw.data
            if not data:
                return None
            try:
                return orjson.loads(data)
            except orjson.JSONDecodeError:
                return data.decode("utf-8", "replace")

    def _send(
        self,
        method: str,
        path: str,
        query: list[tuple[str, Any]],
        body: Any,
        content_type: str,
        request_timeout: float | None,
    ) -> Any:
        """The client's raw response (headers read, body not); with -v=6 its line is printed."""
        start = time.monotonic()
        status: int | None = None  # none: no answer came
        try:
            response = self.client.call_api(
                path,
                method,
                query_params=query,
                body=body,
                header_params={"Accept": "application/json", "Content-Type": content_type},
                auth_settings=["BearerToken"],
                _preload_content=False,
                _request_timeout=request_timeout,
            )
        except ApiException as exc:
            status = exc.status or None
            raise
        else:
            raw = response[0] if isinstance(response, tuple) else response
            status = raw.status
            self._learn_clock(raw.headers.get("Date") if raw.headers is not None else None)
            return raw
        finally:
            if self.verbosity >= trace.REQUESTS:
                target = trace.url(str(self.client.configuration.host), path, query)
                trace.request(method, target, status, time.monotonic() - start)

    def watch(
        self, path: str, query: builtins.list[tuple[str, Any]], *, what: str = ""
    ) -> Iterator[builtins.list[dict[str, Any]]]:
        """The events of one watch request, parsed, in the batches they arrived in.

        A burst is handled once; the generator ends when the server ends the watch. A connection lost mid-stream raises ClusterUnreachable (resume from the last
        resourceVersion); an ERROR event is yielded as is (410: list again).
        """
        response = self.request("GET", path, query=query, stream=True, what=what)
        buffer = b""
        try:
            with translated(what or f"watch {path}"):
                for chunk in response.stream(65536):
                    buffer += chunk
                    *lines, buffer = buffer.split(b"\n")
                    batch = [orjson.loads(line) for line in lines if line.strip()]
                    if batch:
                        yield [e for e in batch if isinstance(e, dict)]
        finally:
            response.release_conn()

    def list(
        self,
        path: str,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int = 500,
        what: str = "",
        keep: Callable[[dict[str, Any]], Any] | None = None,
    ) -> tuple[list[Any], str]:
        """A paged LIST over one consistent snapshot; return (items, resourceVersion).

        ``keep`` turns each item into what the caller holds, page by page, so a large list is
        never in memory whole.
        """
        for restart in range(LIST_RESTARTS + 1):
            try:
                with collector_paused():  # pages of JSON: no cycles for a collection to find
                    return self._list_once(path, label_selector, field_selector, limit, what, keep)
            except errors.Gone:
                # A continue token expired (410): the pages read so far belong to a snapshot
                # that is gone; start over rather than mix two snapshots.
                if restart == LIST_RESTARTS:
                    raise
        raise AssertionError("unreachable")

    def _list_once(
        self,
        path: str,
        label_selector: str | None,
        field_selector: str | None,
        limit: int,
        what: str,
        keep: Callable[[dict[str, Any]], Any] | None,
    ) -> tuple[builtins.list[Any], str]:
        items: builtins.list[Any] = []
        token = ""
        rv = ""
        while True:
            query: builtins.list[tuple[str, Any]] = [("limit", limit)]
            if label_selector:
                query.append(("labelSelector", label_selector))
            if field_selector:
                query.append(("fieldSelector", field_selector))
            if token:
                query.append(("continue", token))
            doc = self.request("GET", path, query=query, what=what)
            if not isinstance(doc, dict):
                raise errors.ServerError(
                    f"{what or path}: the server's answer is not a list", status=0
                )
            page = doc.get("items") or []
            items.extend(keep(i) if keep else i for i in page if isinstance(i, dict))
            meta = doc.get("metadata") or {}
            rv = rv or str(meta.get("resourceVersion") or "")
            token = str(meta.get("continue") or "")
            if not token:
                return items, rv


def _shorter(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


class _Captured(logging.Handler):
    """Keeps what the kubernetes client logs while it loads the kubeconfig.

    It logs a failing exec credential plugin and carries on without credentials (a puzzling
    401 later); kept, the failure is reported as what it is.
    """

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def connect(conn: Connection) -> Api:
    resolved = load(conn.selection())
    if conn.verbosity >= trace.REQUESTS:
        for path in resolved.files:
            trace.line("config.py", f"Config loaded from file:  {path}")
    captured = _Captured()
    root = logging.getLogger()
    root.addHandler(captured)
    try:
        client = k8s_config.new_client_from_config_dict(resolved.config, context=resolved.context)
    except (ConfigException, OSError, TypeError, ValueError, KeyError) as exc:
        raise errors.ConfigError(
            f"cannot use the kubeconfig context {resolved.context!r}: {exc}"
        ) from exc
    finally:
        root.removeHandler(captured)
    failed = [m for m in captured.messages if "exec" in m.lower()]
    if failed:
        detail = " ".join(failed[0].split())[:300]
        raise errors.ConfigError(
            f"the kubeconfig's exec credential plugin failed (context {resolved.context!r}): "
            f"{detail}"
        )
    acting_as = _impersonate(client, conn, resolved)
    if client.configuration.verify_ssl is False:
        # Asked for (flag or kubeconfig): kubectl does not warn on every request either.
        urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
    return Api(client, resolved, conn.request_timeout, acting_as, conn.verbosity)


IMPERSONATE_USER = "Impersonate-User"
IMPERSONATE_GROUP = "Impersonate-Group"
IMPERSONATE_UID = "Impersonate-Uid"


def _impersonate(client: Any, conn: Connection, resolved: Resolved) -> str:
    """Act as --as/--as-group/--as-uid, or as the kubeconfig user's ``as`` fields, as kubectl does.

    Each flag, when given, wins over its kubeconfig field. The server checks that the
    authenticated user may impersonate; a group is one ``Impersonate-Group`` header each.
    Returns the user acted as ("" for none).
    """
    entry = resolved.user_entry
    user = conn.impersonate or _text(entry.get("as"))
    groups = conn.impersonate_groups or tuple(
        str(g) for g in entry.get("as-groups") or () if isinstance(g, str)
    )
    uid = conn.impersonate_uid or _text(entry.get("as-uid"))
    if not user:
        if groups or uid:
            raise errors.UsageError(
                "--as-group and --as-uid need a user to impersonate: pass --as "
                "(or set `as` in the kubeconfig's user)"
            )
        return ""
    client.set_default_header(IMPERSONATE_USER, user)
    if uid:
        client.set_default_header(IMPERSONATE_UID, uid)
    if groups:
        rest = client.rest_client
        rest.pool_manager = _RepeatedHeader(rest.pool_manager, IMPERSONATE_GROUP, groups)
    return user


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


class _RepeatedHeader:
    """The client's urllib3 pool, sending one header line per value of a header.

    The kubernetes client keeps headers in a plain dict, one value per name, but kube-apiserver
    reads each ``Impersonate-Group`` line as one group (a comma-joined line would be one group
    named "a,b"). urllib3 sends every value of an ``HTTPHeaderDict``.
    """

    def __init__(self, pool: Any, name: str, values: tuple[str, ...]) -> None:
        self._pool = pool
        self._name = name
        self._values = values

    def request(self, method: str, url: str, *args: Any, headers: Any = None, **kw: Any) -> Any:
        merged = HTTPHeaderDict(headers or {})
        merged.discard(self._name)
        for value in self._values:
            merged.add(self._name, value)
        return self._pool.request(method, url, *args, headers=merged, **kw)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._pool, attr)


def history_scope(api: Api) -> Any:
    """Which cluster and context the history store files an object under.

    The cluster is the server's URL, so two clusters never mix even when their kubeconfig
    names collide.
    """
    from kubectl_spark.history.store import Scope

    return Scope(str(api.client.configuration.host), api.resolved.context)


def api_client(conn: Connection) -> Any:
    return connect(conn).client


def get_json(conn: Connection, path: str) -> Any:
    """GET a path of the API (e.g. ``/version``) as parsed JSON."""
    with connect(conn) as api:
        return api.request("GET", path)


__all__ = [
    "Api",
    "Connection",
    "api_client",
    "connect",
    "get_json",
    "k8s_client",
    "translate",
    "translated",
]
