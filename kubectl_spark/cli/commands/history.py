"""``kubectl spark history <app>``: the restart history as a timeline."""

from __future__ import annotations

import sys

import typer

from kubectl_spark.cli import common, render


def run(
    app_ref: str = typer.Argument(..., metavar="APP", help="Application name or app id."),
    output: str = typer.Option(
        "", "--output", "-o", help="Output format: json or yaml (default: a table)."
    ),
    no_headers: bool = typer.Option(
        False, "--no-headers", help="Do not print the table's header line."
    ),
) -> None:
    """Show what happened to an application, in time order: attempts, losses, restarts, actions."""
    chosen = render.check_output(output, ("table", "json", "yaml"))
    loaded = common.load()
    try:
        app = common.find_app(loaded.analysis, app_ref)
        if chosen in ("json", "yaml"):
            doc = {
                "apiVersion": "kubectl-spark/v1",
                "kind": "SparkAppHistory",
                "namespace": app.namespace,
                "name": app.name,
                "items": [h.to_json() for h in app.history],
            }
            sys.stdout.write(render.document(doc, chosen))
            return
        rows = [
            (
                h.time or "<unknown>",
                h.kind,
                str(h.attempt) if h.attempt else "-",
                h.executor or "-",
                h.message,
            )
            for h in app.history
        ]
        sys.stdout.write(
            render.table(
                ("TIME", "KIND", "ATTEMPT", "EXECUTOR", "MESSAGE"), rows, no_headers=no_headers
            )
        )
    finally:
        loaded.api.close()
