"""``kubectl spark record``: watch and keep every attempt's and executor's last state locally.

Runs until Ctrl-C or SIGTERM (a terminal, tmux, a systemd user unit, or a pod: see the README).
What it keeps lets ``ls``, ``describe``, ``history`` and the TUI explain losses whose pods and
Events the cluster has since forgotten.

In a cluster (``--in-cluster --leader-elect``, as ``kubectl spark recorder`` deploys it), two
replicas run: both watch, one records. The other is a hot standby: what it watched since it
started (pods deleted meanwhile included) is written the moment it takes the Lease over, so a
leader that dies loses nothing to the gap.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import socket
import ssl
import sys
import threading
import time
from typing import Any

import typer

from kubectl_spark.cli import common
from kubectl_spark.cli import globals as cli_globals
from kubectl_spark.errors import Forbidden, KubectlSparkError, UsageError

LEASE = "kubectl-spark-recorder"


def run(
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Say nothing but errors."),
    in_cluster: bool = typer.Option(
        False, "--in-cluster", help="Use the pod's service account, whatever kubeconfig there is."
    ),
    leader_elect: bool = typer.Option(
        False,
        "--leader-elect",
        help=f"Record only while holding the Lease {LEASE} in the recorder's namespace; "
        "watch meanwhile, and write what was watched on taking it over.",
    ),
    port: int = typer.Option(
        0,
        "--port",
        "--metrics-port",
        min=0,
        max=65535,
        help="Serve on this port (HTTPS): Prometheus metrics (/metrics), and what was kept, "
        "which the plugin reads as an aggregated API through the API server, each caller "
        "authenticated and authorised by it (docs/recorder.md); 0: none.",
    ),
    tls_cert_file: str = typer.Option(
        "",
        "--tls-cert-file",
        help="The serving certificate (PEM) for --port; default: a self-signed one made at start.",
    ),
    tls_private_key_file: str = typer.Option(
        "", "--tls-private-key-file", help="The key of --tls-cert-file (PEM)."
    ),
    address: str = typer.Option(
        "",
        "--address",
        help="The address to serve on (default: 127.0.0.1; with --in-cluster every address, "
        "as the Service's endpoint is the pod's IP).",
    ),
    lease_duration: int = typer.Option(
        15,
        "--lease-duration",
        min=3,
        max=300,
        help="Seconds the Lease holds without a renewal (client-go's default, 15); renewed "
        "every third of it.",
    ),
    identity: str = typer.Option(
        "",
        "--identity",
        help="This recorder's name in the Lease (default: $POD_NAME, else host and process id).",
    ),
) -> None:
    """Watch Spark pods and their Events and keep them in the local history store."""
    from kubectl_spark.kube import snapshot
    from kubectl_spark.kube.client import connect, history_scope

    g = cli_globals.current()
    conn = common.connection()
    if in_cluster:
        conn = dataclasses.replace(conn, in_cluster=True)
    with connect(conn) as api:
        namespace = None if g.all_namespaces else api.namespace
        if namespace:
            snapshot.check_namespace(api, namespace)
        scope = history_scope(api)
        own_namespace = api.namespace
    me = identity or os.environ.get("POD_NAME") or f"{socket.gethostname()}-{os.getpid()}"
    session = _Session(conn, namespace, scope, quiet=quiet)
    if leader_elect:
        from kubectl_spark.kube.leader import LeaseElector

        session.elector = LeaseElector(
            lambda: connect(conn),
            own_namespace,
            LEASE,
            me,
            lease_seconds=lease_duration,
            renew_seconds=lease_duration / 3,
        )
        session.me = me
    if tls_private_key_file and not tls_cert_file:
        raise UsageError("--tls-private-key-file needs --tls-cert-file")
    if port:
        session.serve(
            port,
            address or ("0.0.0.0" if in_cluster else "127.0.0.1"),  # noqa: S104
            (tls_cert_file, tls_private_key_file),
            own_namespace,
        )
    try:
        session.run()
    finally:
        if session.server is not None:
            session.server.close()
        if session.deciding_api is not None:
            session.deciding_api.close()


class _Session:
    """One recorder's life: watch; record while leading; count for the metrics."""

    def __init__(self, conn: Any, namespace: str | None, scope: Any, *, quiet: bool) -> None:
        self.conn, self.namespace, self.scope, self.quiet = conn, namespace, scope, quiet
        self.path = common.history_path()
        self.stop = threading.Event()
        self.wake = threading.Event()
        self.elector: Any = None
        self.me = ""
        self.metrics: Any = None
        self.server: Any = None
        self.deciding_api: Any = None
        self.tracker: Any = None
        self.leading = True
        self.asked = 0.0

    def say(self, text: str) -> None:
        if not self.quiet:
            print(text, file=sys.stderr, flush=True)

    def serve(self, port: int, address: str, tls_files: tuple[str, str], namespace: str) -> None:
        """Serve the port; its callers are who the API server says (app/recorder_http.py)."""
        from kubectl_spark.app.metrics import RecorderMetrics
        from kubectl_spark.app.recorder_http import Access, RecorderServer
        from kubectl_spark.app.recorder_tls import serving_context
        from kubectl_spark.core.incremental import LiveAnalysis
        from kubectl_spark.core.recorder_manifests import NAME
        from kubectl_spark.kube.client import connect
        from kubectl_spark.kube.delegation import Delegation, FrontProxyTrust, read_trust

        self.metrics = RecorderMetrics()
        self.tracker = LiveAnalysis()
        self.deciding_api = connect(self.conn)  # the request threads' one connection
        try:
            trust = read_trust(self.deciding_api)
        except KubectlSparkError as exc:
            trust = FrontProxyTrust("")
            self.say(f"warning: callers through the API server are refused: {exc.message}")
        names = [f"{NAME}.{namespace}.svc", f"{NAME}.{namespace}", NAME, "localhost"]
        cert_file, key_file = tls_files
        try:
            tls = serving_context(trust, names, cert_file, key_file)
        except (OSError, ssl.SSLError) as exc:
            raise UsageError(f"cannot load --tls-cert-file {cert_file}: {exc}") from exc
        access = Access(tls, trust, Delegation(self.deciding_api))
        try:
            self.server = RecorderServer(self.path, self.scope, self.metrics, port, address, access)
        except OSError as exc:
            raise UsageError(f"cannot serve on {address} port {port}: {exc.strerror}") from exc
        except (OverflowError, UnicodeError, ValueError) as exc:  # not an address at all
            raise UsageError(f'invalid --address "{address[:80]}": {exc}') from exc

    def run(self) -> None:
        from kubectl_spark.history.store import HistoryStore
        from kubectl_spark.kube.client import connect
        from kubectl_spark.kube.live import LiveCluster
        from kubectl_spark.kube.logtails import LogKeeper
        from kubectl_spark.kube.recording import Recorder

        def stopping(*_: Any) -> None:
            self.stop.set()
            self.wake.set()

        previous = signal.signal(signal.SIGTERM, stopping)
        self.leading = self.elector is None
        with HistoryStore(self.path) as store, connect(self.conn) as api:
            recorder = Recorder(store, self.scope)
            keeper = LogKeeper(api, store, self.scope)
            live = LiveCluster(lambda: connect(self.conn), self.namespace)
            live.on_change = self.wake.set
            live.start()
            where = f"namespace {self.namespace}" if self.namespace else "all namespaces"
            self.say(f"recording {self.scope.context} ({where}) into {self.path}; Ctrl-C stops")
            try:
                while not self.stop.is_set():
                    self.wake.wait(1.0)
                    self.wake.clear()
                    self._step(live, recorder, keeper)
            except KeyboardInterrupt:
                pass
            finally:
                live.stop(wait=5.0)  # no thread left reading TLS as the process exits
                if self.leading:
                    recorder.write(*live.take_changes())  # what arrived since the last batch
                if self.elector is not None:
                    self.elector.release()
                signal.signal(signal.SIGTERM, previous)
        self.say(
            f"recorded {recorder.pods_written} pod and {recorder.events_written} event states, "
            f"and the last lines of {keeper.kept} stopped container(s)"
        )

    def _lead(self) -> bool:
        """Renew or take the Lease when due; True when this round took it over."""
        elector = self.elector
        if elector is None:
            return False
        period = float(elector.renew_seconds) if self.leading else 2.0
        if elector.clock() - self.asked < period:
            return False
        self.asked = elector.clock()
        now_leading = elector.try_acquire_or_renew()
        if now_leading != self.leading:
            self.say(f"{self.me}: {'leading: recording' if now_leading else 'standing by'}")
        taken_over = now_leading and not self.leading
        self.leading = now_leading
        return taken_over

    def _step(self, live: Any, recorder: Any, keeper: Any) -> None:
        if live.state == "forbidden":
            raise Forbidden(live.error, status=403)
        taken_over = self._lead()
        changes, seen = live.take_changes()
        # On a takeover, everything watched so far (deleted pods' last states too).
        batch = None if taken_over else changes
        if self.metrics is not None:
            if self.leading:
                self.metrics.update(self.tracker.update(seen, batch))
            self.metrics.health(
                leading=self.leading,
                store_bytes=_size(self.path),
                last_event_age=None
                if live.last_event is None
                else time.monotonic() - live.last_event,
                lists=live.lists,
            )
        if not self.leading:
            return  # watching: the snapshot keeps what a takeover writes
        pods = recorder.write(batch, seen)
        # At once: Spark deletes a lost executor's pod, and its log, within a second.
        said_forbidden = keeper.forbidden
        keeper.keep(pods, listed=batch is None)
        if keeper.forbidden and not said_forbidden:
            self.say(
                "cannot read pods' logs (forbidden: needs get on pods/log): the last "
                "lines of stopped containers are not kept"
            )


def _size(path: Any) -> int:
    try:
        return int(path.stat().st_size)
    except OSError:
        return 0
