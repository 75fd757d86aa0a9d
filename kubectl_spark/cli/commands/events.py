"""``kubectl spark events <app>``: the Events of all the app's pods, its Job and SparkApplication."""

from __future__ import annotations

import sys

from kubectl_spark.app.events import app_events
from kubectl_spark.cli import common, render
from kubectl_spark.cli.commands.table_options import AppRef, NoHeaders, TableOutput


def run(app_ref: AppRef, output: TableOutput = "", no_headers: NoHeaders = False) -> None:
    """Show the Events of an application's pods, Job and SparkApplication, oldest first."""
    chosen = render.check_output(output, ("table", "json", "yaml"))
    # Events only: Spark's executor list (a request per live driver) would change nothing here.
    with common.one_app(app_ref, spark_api=False) as (loaded, app):
        events = app_events(loaded.snapshot, app, loaded.snapshot.now)
        if render.is_document(chosen):
            doc = {
                "apiVersion": "kubectl-spark/v1",
                "kind": "SparkAppEventList",
                "namespace": app.namespace,
                "name": app.name,
                "items": [{k: v for k, v in e.items() if k != "age"} for e in events],
            }
            sys.stdout.write(render.document(doc, chosen))
        elif not events:
            sys.stderr.write(f"No events found for {app.name}.\n")
        else:
            sys.stdout.write(
                render.table(
                    ("LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"),
                    [(e["age"], e["type"], e["reason"], e["object"], e["message"]) for e in events],
                    no_headers=no_headers,
                )
            )
