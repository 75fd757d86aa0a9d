"""``kubectl spark describe <app>``: attempts, executors, loss reasons with evidence, alerts."""

from __future__ import annotations

import sys

import typer

from kubectl_spark.app.describe import schedule_text, text
from kubectl_spark.app.events import app_events
from kubectl_spark.app.find import find_app, runs_of_schedule
from kubectl_spark.app.summary import app_json
from kubectl_spark.cli import common, render


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
    spark_ui: str = typer.Option(
        "",
        "--spark-ui",
        metavar="URL",
        help="The UI of a driver outside the cluster (Spark's client mode), asked as a running "
        "driver for its executor list, e.g. http://laptop:4040.",
    ),
) -> None:
    """Show one application: attempts, executors, loss reasons with evidence, alerts, events."""
    chosen = render.check_output(output, ("table", "json", "yaml"))
    common.check_spark_ui(spark_ui)
    with common.view(spark_ui=spark_ui or None) as loaded:
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
