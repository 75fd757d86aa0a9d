"""``kubectl spark warm status|stop``: the warm server, seen and ended (kubectl_spark/warm)."""

from __future__ import annotations

import sys
import time
from typing import Annotated

import typer

from kubectl_spark.cli import render
from kubectl_spark.cli.commands.table_options import NoHeaders, TableOutput
from kubectl_spark.errors import UsageError
from kubectl_spark.warm import ENV, control

HEADERS = ("PID", "INSTALL", "STARTED", "SOCKET")
VERBS = ("status", "stop")


def run(
    verb: Annotated[str, typer.Argument(help="status: list the servers; stop: end them.")],
    output: TableOutput = "",
    no_headers: NoHeaders = False,
) -> None:
    """See or stop this user's warm servers (the background process that answers reads fast)."""
    if verb not in VERBS:
        raise UsageError(f"unknown warm verb {verb[:40]!r}: use status or stop")
    chosen = render.check_output(output, ("table", "json", "yaml"))
    found = control.servers() if verb == "status" else control.stop()
    if render.is_document(chosen):
        doc = {
            "apiVersion": "kubectl-spark/v1",
            "kind": "WarmServerList",
            "items": [s.to_json() for s in found],
        }
        sys.stdout.write(render.document(doc, chosen))
        return
    if verb == "stop":
        ended = [s for s in found if s.pid is not None]
        stale = len(found) - len(ended)
        sys.stdout.write(
            f"stopped {len(ended)} warm server(s)"
            + (f", removed {stale} stale socket(s)" if stale else "")
            + "\n"
        )
        return
    if not found:
        sys.stderr.write(
            f"No warm server running ({ENV}=off turns it off; the next reading command starts one).\n"
        )
        return
    import humanize

    rows = [
        (
            str(s.pid) if s.pid is not None else "-",
            "this" if s.current else "other",
            "-" if s.started is None else humanize.naturaltime(time.time() - s.started),
            s.socket if s.pid is not None else f"{s.socket} (not answering)",
        )
        for s in found
    ]
    sys.stdout.write(render.table(HEADERS, rows, no_headers=no_headers))
