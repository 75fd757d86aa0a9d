"""``kubectl spark describe <app>``: attempts, executors, loss reasons with evidence, alerts."""

from __future__ import annotations

import sys

import typer

from kubectl_spark.app.describe import schedule_text, text
from kubectl_spark.app.events import app_events
from kubectl_spark.app.find import find_app
from kubectl_spark.app.summary import app_json
from kubectl_spark.cli import common, render
from kubectl_spark.core.model import Analysis, App


def run(
    app_ref: str = typer.Argument(
        ...,
        metavar="APP",
        help="Application name, app id, driver pod name, or a ScheduledSparkApplication (its runs).",
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
    loaded = common.load()
    try:
        runs = runs_of_schedule(loaded.analysis, app_ref)
        if runs:  # a ScheduledSparkApplication named so: its runs
            if render.is_document(chosen):
                doc = {
                    "kind": "ScheduledSparkApplication",
                    "name": app_ref,
                    "namespace": runs[0].namespace,
                    "runs": [app_json(a) for a in runs],
                }
                sys.stdout.write(render.document(doc, chosen))
            else:
                sys.stdout.write(schedule_text(app_ref, runs, loaded.snapshot.now))
            return
        app = find_app(loaded.analysis, app_ref)
        if render.is_document(chosen):
            sys.stdout.write(render.document(app_json(app), chosen))
        else:
            now = loaded.snapshot.now
            sys.stdout.write(text(app, now, app_events(loaded.snapshot, app, now)))
    finally:
        loaded.close()


def runs_of_schedule(analysis: Analysis, reference: str) -> list[App]:
    """The runs of a ScheduledSparkApplication named ``reference``, when no application is.

    An application's own name wins: a schedule and one of its runs never share one (runs are
    ``<schedule>-<time>``), but an unrelated application may be named like a schedule.
    """
    if any(reference in (a.name, a.app_id) for a in analysis.apps):
        return []
    return [a for a in analysis.apps if a.schedule == reference]
