"""``kubectl spark describe <app>``: attempts, executors, loss reasons with evidence, alerts."""

from __future__ import annotations

import sys

import typer

from kubectl_spark.app.describe import text
from kubectl_spark.app.events import app_events
from kubectl_spark.app.summary import app_json
from kubectl_spark.cli import common, render


def run(
    app_ref: str = typer.Argument(
        ..., metavar="APP", help="Application name, app id or driver pod name."
    ),
    output: str = typer.Option(
        "",
        "--output",
        "-o",
        help="Output format: json, yaml, jsonpath=… or custom-columns=… (default: text).",
    ),
) -> None:
    """Show one application: attempts, executors, loss reasons with evidence, alerts, events."""
    chosen = render.check_output(output, ("table", "json", "yaml"))
    with common.one_app(app_ref) as (loaded, app):
        if render.is_document(chosen):
            sys.stdout.write(render.document(app_json(app), chosen))
        else:
            now = loaded.snapshot.now
            sys.stdout.write(text(app, now, app_events(loaded.snapshot, app, now)))
