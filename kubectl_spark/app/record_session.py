"""One ``kubectl spark record``'s life: follow the cluster, keep it while leading, serve it.

In a cluster (``--in-cluster --leader-elect``, as ``kubectl spark recorder`` deploys it), two
replicas run: both watch, one records. The other is a hot standby: what it watched since it
started (pods deleted meanwhile included) is written the moment it takes the Lease over, so a
leader that dies loses nothing to the gap. With a port, what was kept is served
(``app/recorder_http.py``), each caller authenticated and authorised by the API server.
"""

from __future__ import annotations

import signal
import ssl
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubectl_spark.app.follow import Follow
from kubectl_spark.app.metrics import RecorderMetrics
from kubectl_spark.app.recorder_http import RecorderServer
from kubectl_spark.core.incremental import LiveAnalysis
from kubectl_spark.core.recorder_manifests import NAME
from kubectl_spark.errors import Forbidden, KubectlSparkError, UsageError
from kubectl_spark.kube.client import Api, Connection, connect, history_scope
from kubectl_spark.kube.leader import LeaseElector
from kubectl_spark.kube.snapshot import check_namespace
from kubectl_spark.localstore import Scope

LEASE = NAME  # the Lease is named as the recorder's Deployment


@dataclass(frozen=True)
class Leading:
    """``--leader-elect``: record only while holding the Lease ``LEASE`` in the own namespace."""

    identity: str
    lease_seconds: int


@dataclass(frozen=True)
class Serving:
    """``--port``: where, and with which certificate (("", "") for a self-signed one)."""

    port: int
    address: str
    tls_files: tuple[str, str]


class RecordSession:
    """Watch; record while leading; count for the metrics; serve what was kept."""

    def __init__(
        self,
        connection: Connection,
        path: Path,
        *,
        all_namespaces: bool,
        quiet: bool,
    ) -> None:
        with connect(connection) as api:
            self.namespace = None if all_namespaces else api.namespace
            if self.namespace:
                check_namespace(api, self.namespace)
            self.scope: Scope = history_scope(api)
            self.own_namespace = api.namespace
        self.connection, self.path, self.quiet = connection, path, quiet
        self.stop = threading.Event()
        self.wake = threading.Event()
        self.elector: LeaseElector | None = None
        self.me = ""
        self.metrics: RecorderMetrics | None = None
        self.server: RecorderServer | None = None
        self.deciding_api: Api | None = None
        self.tracker = LiveAnalysis()  # the metrics' answers, kept up to date while serving
        self.leading = True
        self.asked = 0.0

    def say(self, text: str) -> None:
        if not self.quiet:
            print(text, file=sys.stderr, flush=True)

    def lead(self, leading: Leading) -> None:
        """Record only while holding the Lease (renewed every third of its duration)."""
        self.me = leading.identity
        self.elector = LeaseElector(
            lambda: connect(self.connection),
            self.own_namespace,
            LEASE,
            leading.identity,
            lease_seconds=leading.lease_seconds,
            renew_seconds=leading.lease_seconds / 3,
        )

    def serve(self, serving: Serving) -> None:
        """Serve the port; its callers are who the API server says (app/recorder_http.py)."""
        from kubectl_spark.app.recorder_http import Access
        from kubectl_spark.app.recorder_tls import serving_context
        from kubectl_spark.kube.delegation import Delegation, FrontProxyTrust, read_trust

        self.metrics = RecorderMetrics()
        self.deciding_api = connect(self.connection)  # the request threads' one connection
        try:
            trust = read_trust(self.deciding_api)
        except KubectlSparkError as exc:
            trust = FrontProxyTrust("")
            self.say(f"warning: callers through the API server are refused: {exc.message}")
        namespace = self.own_namespace
        names = [f"{NAME}.{namespace}.svc", f"{NAME}.{namespace}", NAME, "localhost"]
        cert_file, key_file = serving.tls_files
        try:
            tls = serving_context(trust, names, cert_file, key_file)
        except (OSError, ssl.SSLError) as exc:
            raise UsageError(f"cannot load --tls-cert-file {cert_file}: {exc}") from exc
        access = Access(tls, trust, Delegation(self.deciding_api))
        address, port = serving.address, serving.port
        try:
            self.server = RecorderServer(self.path, self.scope, self.metrics, port, address, access)
        except OSError as exc:
            raise UsageError(f"cannot serve on {address} port {port}: {exc.strerror}") from exc
        except (OverflowError, UnicodeError, ValueError) as exc:  # not an address at all
            raise UsageError(f'invalid --address "{address[:80]}": {exc}') from exc

    def run(self) -> None:
        """Until Ctrl-C or SIGTERM; what arrived since the last batch is written on the way out."""

        def stopping(*_: Any) -> None:
            self.stop.set()
            self.wake.set()

        previous = signal.signal(signal.SIGTERM, stopping)
        self.leading = self.elector is None
        follow = Follow(self.connection, self.namespace)
        follow.keep_into(self.path, self.scope, logs_in_background=False)
        keeping = follow.keeping
        assert keeping is not None
        try:
            follow.start(self.wake.set)
            where = f"namespace {self.namespace}" if self.namespace else "all namespaces"
            self.say(f"recording {self.scope.context} ({where}) into {self.path}; Ctrl-C stops")
            try:
                while not self.stop.is_set():
                    self.wake.wait(1.0)
                    self.wake.clear()
                    self._step(follow)
            except KeyboardInterrupt:
                pass
            finally:
                follow.stop(wait=5.0)  # no thread left reading TLS as the process exits
                if self.leading:
                    keeping.writer.write(*follow.take_changes())  # since the last batch
                if self.elector is not None:
                    self.elector.release()
                signal.signal(signal.SIGTERM, previous)
        finally:
            follow.close()
        self.say(
            f"recorded {keeping.writer.pods_written} pod and "
            f"{keeping.writer.events_written} event states, "
            f"and the last lines of {keeping.logs_kept} stopped container(s)"
        )

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
        if self.deciding_api is not None:
            self.deciding_api.close()

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

    def _step(self, follow: Follow) -> None:
        if follow.state == "forbidden":
            raise Forbidden(follow.error, status=403)
        taken_over = self._lead()
        changes, seen = follow.take_changes()
        # On a takeover, everything watched so far (deleted pods' last states too).
        batch = None if taken_over else changes
        if self.metrics is not None:
            if self.leading:
                self.metrics.update(self.tracker.update(seen, batch))
            self.metrics.health(
                leading=self.leading,
                store_bytes=_size(self.path),
                last_event_age=None
                if follow.last_event is None
                else time.monotonic() - follow.last_event,
                lists=follow.lists,
            )
        if not self.leading:
            return  # watching: the snapshot keeps what a takeover writes
        keeping = follow.keeping
        assert keeping is not None
        said_forbidden = keeping.logs_forbidden
        # Its stopped containers' lines at once: Spark deletes a lost executor's pod, and its
        # log, within a second.
        follow.keep(batch, seen)
        if keeping.logs_forbidden and not said_forbidden:
            self.say(
                "cannot read pods' logs (forbidden: needs get on pods/log): the last "
                "lines of stopped containers are not kept"
            )


def _size(path: Path) -> int:
    try:
        return int(path.stat().st_size)
    except OSError:
        return 0


__all__ = ["LEASE", "Leading", "RecordSession", "Serving"]
