"""``kubectl spark history <app>``: the restart history as a timeline."""

from __future__ import annotations

import sys
from typing import Any

from kubectl_spark.cli import common, render
from kubectl_spark.cli.commands.table_options import AppRef, NoHeaders, TableOutput
from kubectl_spark.core.model import App

HEADERS = ("TIME", "KIND", "ATTEMPT", "EXECUTOR", "MESSAGE")


def rows(app: App) -> list[tuple[str, str, str, str, str]]:
    return [
        (
            h.time or "<unknown>",
            h.kind,
            str(h.attempt) if h.attempt else "-",
            h.executor or "-",
            h.message,
        )
        for h in app.history
    ]


def document(app: App) -> dict[str, Any]:
    return {
        "apiVersion": "kubectl-spark/v1",
        "kind": "SparkAppHistory",
        "namespace": app.namespace,
        "name": app.name,
        "items": [h.to_json() for h in app.history],
    }


def run(app_ref: AppRef, output: TableOutput = "", no_headers: NoHeaders = False) -> None:
    """Show what happened to an application, in time order: attempts, losses, restarts, actions."""
    chosen = render.check_output(output, ("table", "json", "yaml"))
    with common.one_app(app_ref) as (_, app):
        if render.is_document(chosen):
            sys.stdout.write(render.document(document(app), chosen))
        else:
            sys.stdout.write(render.table(HEADERS, rows(app), no_headers=no_headers))
