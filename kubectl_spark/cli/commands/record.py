"""``kubectl spark record``: watch and keep every attempt's and executor's last state locally.

Runs until Ctrl-C or SIGTERM (a terminal, tmux, or a systemd user unit: see the README). What it
keeps lets ``ls``, ``describe``, ``history`` and the TUI explain losses whose pods and Events the
cluster has since forgotten.
"""

from __future__ import annotations

import signal
import sys
import threading
from typing import Any

import typer

from kubectl_spark.cli import common
from kubectl_spark.cli import globals as cli_globals
from kubectl_spark.errors import Forbidden


def run(
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Say nothing but errors."),
) -> None:
    """Watch Spark pods and their Events and keep them in the local history store."""
    from kubectl_spark.history.store import HistoryStore
    from kubectl_spark.kube import snapshot
    from kubectl_spark.kube.client import connect, history_scope
    from kubectl_spark.kube.live import LiveCluster
    from kubectl_spark.kube.logtails import LogKeeper
    from kubectl_spark.kube.recording import Recorder

    g = cli_globals.current()
    conn = common.connection()
    with connect(conn) as api:
        namespace = None if g.all_namespaces else api.namespace
        if namespace:
            snapshot.check_namespace(api, namespace)
        scope = history_scope(api)
    path = common.history_path()
    stop = threading.Event()
    wake = threading.Event()

    def stopping(*_: Any) -> None:
        stop.set()
        wake.set()

    previous = signal.signal(signal.SIGTERM, stopping)
    with HistoryStore(path) as store, connect(conn) as api:
        recorder = Recorder(store, scope)
        keeper = LogKeeper(api, store, scope)
        live = LiveCluster(lambda: connect(conn), namespace)
        live.on_change = wake.set
        live.start()
        if not quiet:
            where = f"namespace {namespace}" if namespace else "all namespaces"
            print(f"recording {scope.context} ({where}) into {path}; Ctrl-C stops", file=sys.stderr)
        try:
            while not stop.is_set():
                wake.wait(1.0)
                wake.clear()
                if live.state == "forbidden":
                    raise Forbidden(live.error, status=403)
                changes, seen = live.take_changes()
                pods = recorder.write(changes, seen)
                # At once: Spark deletes a lost executor's pod, and its log, within a second.
                said_forbidden = keeper.forbidden
                keeper.keep(pods, listed=changes is None)
                if keeper.forbidden and not said_forbidden:
                    print(
                        "cannot read pods' logs (forbidden: needs get on pods/log): the last "
                        "lines of stopped containers are not kept",
                        file=sys.stderr,
                    )
        except KeyboardInterrupt:
            pass
        finally:
            live.stop()
            recorder.write(*live.take_changes())  # what arrived since the last batch
            signal.signal(signal.SIGTERM, previous)
    if not quiet:
        print(
            f"recorded {recorder.pods_written} pod and {recorder.events_written} event states, "
            f"and the last lines of {keeper.kept} stopped container(s)",
            file=sys.stderr,
        )
