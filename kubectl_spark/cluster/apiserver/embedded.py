"""Run the emulator: in a background thread (tests, the demo) or in the foreground (``--serve``).

It serves HTTPS with a CA and server certificate made at start (``trustme``) and writes a
kubeconfig with the CA data and a bearer token: measured with kubectl 1.32, a plain ``http://``
server never receives kubectl's Authorization header, so TLS is what makes token auth work with
the real kubectl. A plain-HTTP, no-auth mode exists for debugging only.
"""

from __future__ import annotations

import asyncio
import base64
import os
import secrets
import signal
import socket
import ssl
import sys
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import orjson
import trustme
import yaml
from aiohttp import web

from kubectl_spark.knowledge.clock import Clock, SystemClock

from .aggregation import Aggregator, publish_trust
from .authz import Policy
from .faults import PROFILES, FaultProfile
from .resources import Registry
from .server import ApiServer
from .serving import ServerConfig
from .sniff import SniffingListener
from .store import Store

T = TypeVar("T")
ADMIN_USER = "kubectl-spark-admin"
CONTEXT_NAME = "kubectl-spark-emulator"


@dataclass
class EmulatorOptions:
    host: str = "127.0.0.1"
    port: int = 0
    tls: bool = True
    spark_operator_crd: bool = True
    # The Apache operator's CRD versions served (an older release serves v1beta1 alone)
    apache_versions: tuple[str, ...] = ("v1", "v1beta1")
    clock: Clock = field(default_factory=SystemClock)
    history_size: int = 20000
    event_ttl_seconds: float = 3600.0
    bookmark_interval: float = 60.0
    min_request_timeout: float = 1800.0
    policy: Policy | None = None
    namespace: str = "default"
    faults: str = "none"  # a profile name from faults.PROFILES
    # More names and addresses its serving certificate holds, beside loopback and the
    # ``kubernetes`` Service's in-cluster names (pods that reach it as kubernetes.default.svc).
    cert_names: tuple[str, ...] = ()


def kubeconfig_document(
    url: str,
    ca_pem: bytes,
    user: str,
    token: str | None,
    namespace: str,
    context: str = CONTEXT_NAME,
) -> dict[str, Any]:
    """A kubeconfig with one cluster, user and context.

    The emulator's, or in the tests a real control plane's: written alike, so that nothing
    downstream tells them apart.
    """
    cluster: dict[str, Any] = {"server": url}
    if ca_pem:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": context, "cluster": cluster}],
        "users": [{"name": user, "user": {"token": token} if token else {}}],
        "contexts": [
            {
                "name": context,
                "context": {"cluster": context, "user": user, "namespace": namespace},
            }
        ],
        "current-context": context,
        "preferences": {},
    }


def write_kubeconfig_file(path: str | os.PathLike[str], document: dict[str, Any]) -> Path:
    """Write atomically with mode 0600: a reader never sees a half-written file."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".kubeconfig-")
    with os.fdopen(fd, "w") as handle:
        yaml.safe_dump(document, handle, sort_keys=False)
    Path(tmp).chmod(0o600)
    Path(tmp).replace(target)
    return target


class EmbeddedApiServer:
    """An emulator instance with its own event loop; thread-safe handles for tests and tools."""

    def __init__(self, options: EmulatorOptions | None = None) -> None:
        self.options = options or EmulatorOptions()
        self.registry = Registry.default(
            spark_operator_crd=self.options.spark_operator_crd,
            apache_versions=self.options.apache_versions,
        )
        self.store = Store(
            self.registry,
            self.options.clock,
            history_size=self.options.history_size,
            event_ttl_seconds=self.options.event_ttl_seconds,
        )
        self.token = secrets.token_urlsafe(32)
        self.config = ServerConfig(
            tokens={self.token: ADMIN_USER},
            admin_users=frozenset({ADMIN_USER}),
            require_auth=self.options.tls,
            bookmark_interval=self.options.bookmark_interval,
            min_request_timeout=self.options.min_request_timeout,
        )
        self.api = ApiServer(
            self.store, self.registry, self.options.clock, self.config, self.options.policy
        )
        self.api.faults.set(PROFILES[self.options.faults])
        self._ca: trustme.CA | None = None
        self._ssl: ssl.SSLContext | None = None
        if self.options.tls:
            self._ca = trustme.CA(organization_name="kubectl-spark emulator")
            cert = self._ca.issue_cert(
                "127.0.0.1",
                "localhost",
                "::1",
                "kubernetes",
                "kubernetes.default",
                "kubernetes.default.svc",
                "kubernetes.default.svc.cluster.local",
                *self.options.cert_names,
            )
            self.store.publish_root_ca(self._ca.cert_pem.bytes().decode())
            self.api.aggregator = Aggregator()
            publish_trust(self.api, self.api.aggregator)
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            cert.configure_cert(ctx)
            ctx.set_alpn_protocols(["http/1.1"])
            self._ssl = ctx
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._listener: SniffingListener | None = None
        self._stopped: asyncio.Event | None = None

    # ------------------------------------------------------------------------- addresses
    @property
    def url(self) -> str:
        scheme = "https" if self.options.tls else "http"
        return f"{scheme}://{self.options.host}:{self.port}"

    @property
    def ca_pem(self) -> bytes:
        return self._ca.cert_pem.bytes() if self._ca is not None else b""

    def write_ca(self, path: str | os.PathLike[str]) -> Path:
        target = Path(path)
        target.write_bytes(self.ca_pem)
        return target

    def add_user(self, name: str) -> str:
        """Create a user with its own token (for permission tests); return the token."""
        token = secrets.token_urlsafe(32)
        self.config.tokens[token] = name
        return token

    def kubeconfig(
        self, *, user: str = ADMIN_USER, token: str | None = None, namespace: str | None = None
    ) -> dict[str, Any]:
        return kubeconfig_document(
            self.url,
            self.ca_pem if self._ca is not None else b"",
            user,
            (token or self.token) if self.options.tls else None,
            namespace or self.options.namespace,
        )

    def write_kubeconfig(self, path: str | os.PathLike[str], **kwargs: Any) -> Path:
        return write_kubeconfig_file(path, self.kubeconfig(**kwargs))

    # ---------------------------------------------------------------------------- running
    async def _start_site(self) -> None:
        self._runner = web.AppRunner(
            self.api.app(), handle_signals=False, access_log=None, shutdown_timeout=1.0
        )
        await self._runner.setup()
        if self._ssl is not None and sys.platform != "win32":  # peeking needs add_reader
            sock = socket.create_server(
                (self.options.host, self.options.port),
                family=socket.AF_INET6 if ":" in self.options.host else socket.AF_INET,
                backlog=512,
            )
            server = self._runner.server
            assert server is not None  # set up above
            self._listener = SniffingListener(sock, server, self._ssl)
            self._listener.start()
            self.port = int(sock.getsockname()[1])
        else:
            site = web.TCPSite(
                self._runner,
                self.options.host,
                self.options.port,
                ssl_context=self._ssl,
                backlog=512,
            )
            await site.start()
            self.port = int(self._runner.addresses[0][1])
        self.config.server_address = f"{self.options.host}:{self.port}"

    async def _shutdown(self) -> None:
        if self._listener is not None:
            await self._listener.close()
            self._listener = None
        await self.api.close_streams()
        transports = []
        if self._runner is not None:
            server = self._runner.server
            if server is not None:
                transports = [h.transport for h in server.connections if h.transport is not None]
            await self._runner.cleanup()
            self._runner = None
        for transport in transports:
            transport.abort()  # a TLS close_notify exchange could outlive the loop
        # Let closing transports finish and end what is still running, so that no socket is
        # left for the garbage collector (a ResourceWarning in the tests).
        current = asyncio.current_task()
        pending = [t for t in asyncio.all_tasks() if t is not current]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        for _ in range(3):
            await asyncio.sleep(0.01)

    def start(self) -> EmbeddedApiServer:
        """Start serving in a background thread; return once the port accepts requests."""
        ready: Future[None] = Future()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            self._stopped = asyncio.Event()
            try:
                loop.run_until_complete(self._start_site())
            except BaseException as exc:  # noqa: BLE001 - handed to the starting thread
                ready.set_exception(exc)
                loop.close()
                return
            ready.set_result(None)
            loop.run_until_complete(self._stopped.wait())
            loop.run_until_complete(self._shutdown())
            loop.close()

        self._thread = threading.Thread(target=run, name="kube-emulator", daemon=True)
        self._thread.start()
        ready.result(timeout=30)
        return self

    def stop(self) -> None:
        loop, stopped = self._loop, self._stopped
        if loop is None or stopped is None or self._thread is None:
            return
        loop.call_soon_threadsafe(stopped.set)
        self._thread.join(timeout=15)
        self._thread = None
        self._loop = None

    def __enter__(self) -> EmbeddedApiServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run ``fn`` on the server's loop (where the store lives) and return its result."""
        if self._loop is None:
            return fn(*args, **kwargs)

        async def invoke() -> T:
            return fn(*args, **kwargs)

        return asyncio.run_coroutine_threadsafe(invoke(), self._loop).result(timeout=60)

    def serve_forever(
        self,
        on_ready: Callable[[EmbeddedApiServer], None] | None = None,
        on_stop: Callable[[], None] | None = None,
    ) -> None:
        """Serve in the foreground until SIGINT or SIGTERM, then shut down cleanly.

        ``on_stop`` runs (in a worker thread) after the signal and before the server closes,
        so that clients of ours, such as the simulator, stop while the server still answers.
        """

        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._stopped = asyncio.Event()
            await self._start_site()
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._loop.add_signal_handler(sig, self._stopped.set)
            if on_ready is not None:
                on_ready(self)
            await self._stopped.wait()
            if on_stop is not None:
                await asyncio.to_thread(on_stop)
            await self._shutdown()

        asyncio.run(main())
        self._loop = None

    # ----------------------------------------------------------------- conveniences for tests
    def set_policy(self, policy: Policy | dict[str, Any]) -> None:
        chosen = policy if isinstance(policy, Policy) else Policy.from_dict(policy)

        def apply() -> None:
            self.api.policy = chosen

        self.call(apply)

    def set_faults(self, profile: FaultProfile | dict[str, Any] | str) -> None:
        """Switch the fault layer: a profile, its settings, or a name from faults.PROFILES."""
        chosen = (
            PROFILES[profile]
            if isinstance(profile, str)
            else profile
            if isinstance(profile, FaultProfile)
            else FaultProfile.from_dict(profile)
        )
        self.call(self.api.faults.set, chosen)

    def fault_counts(self) -> dict[str, int]:
        return dict(self.call(lambda: dict(self.api.faults.counts)))

    def register_proxy(
        self,
        namespace: str,
        pod: str,
        port: int,
        answer: Callable[[str], tuple[int, str, bytes] | None],
    ) -> None:
        """Make ``answer(path)`` the process behind pods/<pod>:<port>/proxy (None: not listening).

        It runs on the emulator's loop: it must be quick and must not call the API.
        """

        async def handler(path: str, query: dict[str, str]) -> tuple[int, str, bytes] | None:
            del query
            return answer(path)

        def apply() -> None:
            self.api.proxy_handlers[(namespace, pod, port)] = handler

        self.call(apply)

    def audit_writes(self) -> list[dict[str, Any]]:
        return self.call(self.api.audit.writes)

    def audit_entries(self) -> list[dict[str, Any]]:
        """Every request the policy judged, oldest first (dry runs and refusals included)."""
        return self.call(lambda: list(self.api.audit.entries))

    def clear_audit(self) -> None:
        self.call(self.api.audit.entries.clear)

    def append_log(
        self, namespace: str, pod: str, container: str, text: str, *, rotate: bool = False
    ) -> None:
        self.call(
            self.api.pod_logs.write,
            {
                "namespace": namespace,
                "pod": pod,
                "container": container,
                "text": text,
                "rotate": rotate,
            },
        )

    def compact(self) -> None:
        self.call(self.store.compact)

    def expire_continue_tokens(self) -> None:
        self.call(self.store.expire_continue_tokens)

    def served(self) -> list[dict[str, Any]]:
        """What this emulator serves: one row per resource, for the demo's listing."""
        return [
            {
                "apiVersion": rt.api_version,
                "resource": rt.plural,
                "kind": rt.kind,
                "namespaced": rt.namespaced,
                "subresources": [s.name for s in rt.subresources],
            }
            for rt in self.registry.types
        ]

    def dump(self) -> bytes:
        return orjson.dumps(self.served())
