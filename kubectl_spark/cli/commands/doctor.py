"""``kubectl spark doctor APP``: which of SPARK-23980's hazards an application has."""

from __future__ import annotations

import sys

from kubectl_spark.app.act import raw_named, raw_pod
from kubectl_spark.cli import common, render
from kubectl_spark.cli.commands.table_options import AppRef, NoHeaders, TableOutput
from kubectl_spark.core.doctor import diagnose

HEADERS = ("HAZARD", "STATE", "WHY", "FIX")


def run(app_ref: AppRef, output: TableOutput = "", no_headers: NoHeaders = False) -> None:
    """List the restartable-driver hazards an application has, and how each is closed."""
    chosen = render.check_output(output, ("table", "json", "yaml"))
    with common.one_app(app_ref, spark_api=False) as (loaded, app):
        snapshot = loaded.snapshot
        last = next((a for a in reversed(app.attempts) if a.uid), None)
        found = diagnose(
            app,
            job=raw_named(snapshot.jobs, app.owner) if app.source == "job" else None,
            driver=raw_pod(snapshot, last.uid) if last else None,
            pvcs=tuple(snapshot.pvcs),
        )
        if render.is_document(chosen):
            doc = {
                "apiVersion": "kubectl-spark/v1",
                "kind": "SparkAppDoctor",
                "namespace": app.namespace,
                "name": app.name,
                "source": app.source,
                "items": [h.to_json() for h in found],
            }
            sys.stdout.write(render.document(doc, chosen))
            return
        rows = [(h.code, h.state, h.why, h.fix or "-") for h in found]
        sys.stdout.write(render.table(HEADERS, rows, no_headers=no_headers))
