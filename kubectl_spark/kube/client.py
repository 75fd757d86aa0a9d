"""Connecting to a cluster, reading raw JSON, and turning client errors into ours.

Only this package imports ``kubernetes``. Responses are read raw (``_preload_content=False``)
and parsed with orjson: the client's model classes are an order of magnitude slower.
"""

from __future__ import annotations

import builtins
import dataclasses
import logging
import os
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any

import urllib3
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config
from kubernetes.client.exceptions import ApiException
from kubernetes.config.config_exception import ConfigException

from kubectl_spark import errors
from kubectl_spark.memory import collector_paused

from . import answers, credentials, lazy_kubernetes, paging, trace
from .apierrors import translate, translated
from .config import Resolved, Selection, load
from .impersonation import impersonate


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
    # Whether a credential plugin may talk to the user on the terminal (not under the TUI).
    interactive: bool = True
    in_cluster: bool = False  # the pod's service account (``record --in-cluster``)
    served_for: int | None = None  # the client process a warm worker answers for (-v says)

    def selection(self) -> Selection:
        """What the kubeconfig loader applies: the fields both have, by name."""
        return Selection(**{f.name: getattr(self, f.name) for f in dataclasses.fields(Selection)})


READ_ATTEMPTS = 5
# Without --request-timeout a request may wait for its answer as long as it takes (kubectl's
# too), but not for a connection: client-go gives the TLS handshake 10 s
# (k8s.io/client-go/transport/cache.go, TLSHandshakeTimeout) and kubectl then stops. urllib3
# bounds the connect and the handshake together by its connect timeout: 10 s for both here.
CONNECT_SECONDS = 10.0
# At most at once in a reading command: the pods' next page, the optional lists beside it
# (snapshot.READERS) and the drivers' Spark UIs (sparkapi.MAX_PARALLEL), with room to spare.
POOL_CONNECTIONS = 16
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
    # When set (time.monotonic()), every request of the command shares it: a one-shot read
    # command ends within --request-timeout, however many requests and pages it takes.
    deadline: float | None = None
    # What was set aside while reading (an object too deeply nested, a malformed watch line):
    # kept, and passed to ``on_note`` when a front end wants to show it as it comes.
    notes: builtins.list[str] = field(default_factory=list)
    on_note: Callable[[str], None] | None = field(default=None, repr=False)
    _closed: bool = field(default=False, repr=False)
    # The watch answers being read now: ``cut_streams`` ends them from another thread.
    _streams: set[Any] = field(default_factory=set, repr=False)

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

    def start_deadline(self) -> None:
        """From now on, the command's requests share one --request-timeout (none without it)."""
        self.deadline = time.monotonic() + self.timeout if self.timeout else None

    def lift_deadline(self) -> None:
        """Each request its own --request-timeout again (an action's writes and waits)."""
        self.deadline = None

    def note(self, text: str) -> None:
        self.notes.append(text)
        if self.on_note is not None:
            self.on_note(text)

    def cut_streams(self) -> None:
        """End every watch this client is reading (from another thread): its read returns.

        A process must not exit while a thread still reads a TLS stream: OpenSSL's cleanup at
        exit then runs under it (a "double free or corruption" abort was seen once). A watch is
        a long read (up to its timeoutSeconds), so stopping waits for none: it cuts them.
        """
        for response in list(self._streams):
            answers.cut(response)

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
        idempotent: bool = False,
        decode: Callable[[bytes], Any] | None = None,
    ) -> Any:
        """One request; JSON answers are parsed, ``stream=True`` returns the response.

        ``decode`` reads a successful answer's bytes its own faster way; where it returns None,
        the answer is parsed as any other.

        The product's one HTTP policy. Reads (GET, and ``idempotent`` POSTs such as access
        reviews and dry runs, which store nothing) are retried on 429, 5xx and network errors,
        with backoff and jitter, honouring Retry-After, all within one budget: --request-timeout,
        ``timeout`` when shorter, and the command's deadline (``deadline``) when one is set. The
        budget bounds the answer's body too, as kubectl's does (a server trickling bytes is cut
        off). Writes are sent exactly once, by this layer and every layer under it (urllib3's own
        retries are off, see ``connect``): a write whose answer never came raises OutcomeUnknown,
        and an action re-reads the object to learn whether it took effect. ``retry=False`` for
        answers that are not transient (a pod proxy's "connection refused").
        """
        what = what or f"{method} {path}"
        if method != "GET" and not idempotent:
            return self._write(method, path, query, body, content_type, what, timeout)
        budget = self._budget(timeout, what)
        end = time.monotonic() + budget if budget is not None else None
        attempts = READ_ATTEMPTS if retry else 1
        for attempt in range(1, attempts + 1):
            left = None if end is None else end - time.monotonic()
            try:
                return self._once(
                    method, path, query, body, content_type, stream, what, left, decode
                )
            except errors.DeadlineExceeded:
                raise
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
                late = end is not None and time.monotonic() + delay > end
                if attempt == attempts or late:
                    if attempts > 1:
                        exc.message += (
                            f" (gave up after {attempt} attempt{'s' if attempt > 1 else ''})"
                        )
                    raise
                time.sleep(delay)
        raise AssertionError("unreachable")

    def _write(
        self,
        method: str,
        path: str,
        query: list[tuple[str, Any]] | None,
        body: Any,
        content_type: str,
        what: str,
        timeout: float | None,
    ) -> Any:
        """A write, sent once; an answer that never came makes its outcome unknown."""
        budget = self._budget(timeout, what)
        try:
            return self._once(method, path, query, body, content_type, False, what, budget)
        except errors.ClusterUnreachable as exc:
            if exc.unsent:
                raise  # no connection was made: nothing reached the server
            raise errors.OutcomeUnknown(
                f"{exc.message}; the write was sent once and may or may not have been applied"
            ) from exc

    def _budget(self, timeout: float | None, what: str) -> float | None:
        """Seconds this request may take: --request-timeout, ``timeout``, the command's deadline."""
        budget = _shorter(self.timeout, timeout)
        if self.deadline is None:
            return budget
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise errors.DeadlineExceeded(
                f"{what}: not sent: the command's --request-timeout "
                f"({answers.seconds_text(self.timeout)}) has run out"
            )
        return left if budget is None else min(budget, left)

    def _once(
        self,
        method: str,
        path: str,
        query: list[tuple[str, Any]] | None,
        body: Any,
        content_type: str,
        stream: bool,
        what: str,
        budget: float | None,
        decode: Callable[[bytes], Any] | None = None,
    ) -> Any:
        started = time.monotonic()
        try:
            with translated(what):
                # A stream has no deadline: a watch or a followed log ends when its server does.
                raw = self._send(
                    method, path, query or [], body, content_type, None if stream else budget, what
                )
                if stream:
                    return raw
                data = answers.read_body(raw, None if budget is None else started + budget)
        except errors.ClusterUnreachable as exc:
            spent = (
                budget is not None and time.monotonic() - started >= budget - answers.TIMER_SLACK
            )
            if spent and not exc.unsent:
                raise errors.DeadlineExceeded(
                    f"{what}: no answer within {answers.seconds_text(budget)} (--request-timeout)"
                ) from exc
            raise
        if data is None:
            raise errors.DeadlineExceeded(
                f"{what}: no whole answer within {answers.seconds_text(budget)} (--request-timeout)"
            )
        if not data:
            return None
        decoded = decode(data) if decode is not None else None
        return decoded if decoded is not None else answers.parse(data)

    def _send(
        self,
        method: str,
        path: str,
        query: list[tuple[str, Any]],
        body: Any,
        content_type: str,
        request_timeout: float | None,
        what: str,
    ) -> Any:
        """The client's raw response (headers read, body not); with -v=6 its line is printed.

        Every attempt is one line, so a test (or a person) can count what was sent.
        """
        start = time.monotonic()
        status: int | None = None  # none: no answer came
        bounded = request_timeout is not None
        try:
            response = self.client.call_api(
                path,
                method,
                query_params=query,
                body=body,
                header_params={"Accept": "application/json", "Content-Type": content_type},
                auth_settings=["BearerToken"],
                _preload_content=False,
                _request_timeout=request_timeout if bounded else (CONNECT_SECONDS, None),
            )
        except ApiException as exc:
            status = exc.status or None
            raise
        except (urllib3.exceptions.TimeoutError, urllib3.exceptions.MaxRetryError) as exc:
            if bounded or not _timed_out(exc):
                raise
            # With no read timeout set, only the connect or the TLS handshake can time out:
            # nothing was sent, and asking again would wait as long again (kubectl stops too).
            raise errors.ClusterUnreachable(
                f"{what}: cannot reach the API server: no connection within "
                f"{answers.seconds_text(CONNECT_SECONDS)} (the TCP connect or the TLS "
                "handshake timed out)",
                lasting=True,
                unsent=True,
            ) from exc
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
        self,
        path: str,
        query: builtins.list[tuple[str, Any]],
        *,
        what: str = "",
        opened: Callable[[], None] | None = None,
    ) -> Iterator[builtins.list[dict[str, Any]]]:
        """The events of one watch request, parsed, in the batches they arrived in.

        A burst is handled once; the generator ends when the server ends the watch. A
        connection lost mid-stream raises ClusterUnreachable (list again: the server may have
        restarted); an ERROR event is yielded as is (410: list again). ``opened`` is called
        once the server has answered the request. The request is not retried here: whether to
        resume or list again is the caller's to decide.
        """
        response = self.request("GET", path, query=query, stream=True, what=what, retry=False)
        self._streams.add(response)
        if opened is not None:
            opened()  # the server answered: whatever failed before is over
        free_form = answers.free_form(path)
        buffer = b""
        try:
            with translated(what or f"watch {path}"):
                for chunk in response.stream(65536):
                    buffer += chunk
                    *lines, buffer = buffer.split(b"\n")
                    batch = [
                        self._event(line, what or path, free_form) for line in lines if line.strip()
                    ]
                    events = [e for e in batch if e is not None]
                    if events:
                        yield events
        finally:
            self._streams.discard(response)
            response.release_conn()

    def _event(self, line: bytes, what: str, free_form: bool) -> dict[str, Any] | None:
        """One watch line as an event, or None (with a note) for a line that is not one.

        One bad line must not end the watch: the rest of the stream is still the cluster's.
        """
        event = answers.parse(line)
        if not isinstance(event, dict) or not isinstance(event.get("object"), dict):
            self.note(f"{what}: skipped a watch line that is not an event ({len(line)} bytes)")
            return None
        if event.get("type") in ("ERROR", "BOOKMARK"):
            return event
        found = event["object"]
        problem = answers.unusable(found, deep=free_form)
        if problem:
            self.note(f"{what}: skipped {answers.named(found)} in a watch: {problem}")
            return None
        return event

    def list(
        self,
        path: str,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int = 500,
        what: str = "",
        keep: Callable[[dict[str, Any]], Any] | None = None,
        keep_page: Callable[[bytes], dict[str, Any] | None] | None = None,
        after_first_page: Callable[[], None] | None = None,
        each_page: Callable[[list[Any]], None] | None = None,
        server_behind: Callable[[], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> tuple[list[Any], str]:
        """A paged LIST over one consistent snapshot; return (items, resourceVersion).

        ``keep`` turns each item into what the caller holds, page by page, so a large list is
        never in memory whole. ``keep_page``, the same for a whole page at once from its bytes
        (``core.slim.pod_page``), is tried first; a page it cannot read, or with an item that
        is not usable, is parsed and kept item by item as before (and always with
        ``KUBECTL_SPARK_EAGER_KUBERNETES``, the fast paths off). ``after_first_page`` is called
        once the first page has come (again after a restart); ``each_page`` with each page's
        items as kept (again after a restart: the same items may come twice);
        ``server_behind`` after a page the list waited for longer than it took to keep the one
        before (``paging.Listing.server_behind``), both timed by ``clock``.
        """
        listing = paging.Listing(
            path,
            label_selector,
            field_selector,
            limit,
            what or path,
            keep,
            None if os.environ.get(lazy_kubernetes.EAGER) else keep_page,
            after_first_page,
            each_page,
            server_behind,
            clock,
        )
        for restart in range(LIST_RESTARTS + 1):
            try:
                with collector_paused():  # pages of JSON: no cycles for a collection to find
                    return listing.read(self)
            except errors.Gone:
                # A continue token expired (410): the pages read so far belong to a snapshot
                # that is gone; start over rather than mix two snapshots.
                if restart == LIST_RESTARTS:
                    raise
        raise AssertionError("unreachable")


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


def _timed_out(exc: BaseException) -> bool:
    """A timeout (not a refusal: urllib3's NewConnectionError is a ConnectTimeoutError too)."""
    reason = (
        getattr(exc, "reason", None) if isinstance(exc, urllib3.exceptions.MaxRetryError) else exc
    )
    return isinstance(reason, urllib3.exceptions.TimeoutError) and not isinstance(
        reason, urllib3.exceptions.NewConnectionError
    )


def connect(conn: Connection) -> Api:
    resolved = load(conn.selection())
    if conn.verbosity >= trace.REQUESTS:
        if conn.served_for is not None:
            trace.line("warm", f"served by the warm process for process {conn.served_for}")
        for path in resolved.files:
            trace.line("config.py", f"Config loaded from file:  {path}")
    user = resolved.user_entry
    user_name = str((resolved.config.get("users") or [{}])[0].get("name") or "")
    credentials.check_plugin(user, user_name)
    captured = _Captured()
    root = logging.getLogger()
    root.addHandler(captured)
    configuration = type.__call__(k8s_client.Configuration)  # the class's call copies a default
    # urllib3 retries PUT and DELETE on a read timeout by default (Retry(3)): a write the
    # server applied but answered late would be sent again. Our one policy (Api.request)
    # retries reads only; nothing under it retries anything.
    configuration.retries = urllib3.Retry(total=0, redirect=False)
    # Connections kept for reuse: the client's default, five per CPU, is fewer than a reading
    # command may have open at once on a small machine; urllib3 closes each one over as its
    # answer ends, and the next request opens another (a TLS handshake).
    configuration.connection_pool_maxsize = max(
        configuration.connection_pool_maxsize or 0, POOL_CONNECTIONS
    )
    socks = resolved.proxy_url.startswith("socks5://")
    if resolved.proxy_url and not socks:
        # kubectl sends through the cluster's proxy-url whatever NO_PROXY says (client-go
        # tools/clientcmd/client_config.go: http.ProxyURL).
        configuration.proxy = resolved.proxy_url
        configuration.no_proxy = None
    try:
        with credentials.plugin_quiet(user, interactive=conn.interactive):
            client = k8s_config.new_client_from_config_dict(
                resolved.config, context=resolved.context, client_configuration=configuration
            )
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
    credentials.check_tls_material(client.configuration, user, user_name)
    if socks:
        _through_socks(client, resolved.proxy_url)
    acting_as = impersonate(client, conn, resolved)
    if client.configuration.verify_ssl is False:
        # Asked for (flag or kubeconfig): kubectl does not warn on every request either.
        urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
    return Api(client, resolved, conn.request_timeout, acting_as, conn.verbosity)


def _through_socks(client: Any, proxy_url: str) -> None:
    """Send every request through a SOCKS5 proxy, as kubectl does for ``socks5://``.

    The kubernetes client builds only HTTP proxies; urllib3's own SOCKS manager takes the pool
    settings (TLS material, sizes) the client gave its plain one. kubectl's dialer
    (golang.org/x/net/proxy) hands the API server's host name to the proxy, which resolves it:
    urllib3 calls that ``socks5h``.
    """
    from urllib3.contrib.socks import SOCKSProxyManager

    rest = client.rest_client
    plain = rest.pool_manager
    rest.pool_manager = SOCKSProxyManager(
        "socks5h://" + proxy_url.removeprefix("socks5://"), **plain.connection_pool_kw
    )
    plain.clear()


def history_scope(api: Api) -> Any:
    """Which cluster and context the history store files an object under.

    The cluster is the server's URL, so two clusters never mix even when their kubeconfig
    names collide.
    """
    from kubectl_spark.localstore import Scope

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
