"""``kubectl spark events <app>``: the Events of all the app's pods, its Job and SparkApplication."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from kubectl_spark.app.events import app_events
from kubectl_spark.cli import common, render
from kubectl_spark.cli.commands.table_options import AppRef, NoHeaders, TableOutput
from kubectl_spark.errors import UsageError
from kubectl_spark.knowledge.names import shown

EVENT_TYPES = ("Normal", "Warning")


def run(
    app_ref: AppRef,
    output: TableOutput = "",
    no_headers: NoHeaders = False,
    types: Annotated[
        str,
        typer.Option(
            "--types",
            help="Only these types, comma-separated (Normal, Warning), as kubectl events.",
        ),
    ] = "",
    for_object: Annotated[
        str,
        typer.Option(
            "--for",
            help="Only the Events of this object (KIND/NAME: pod/NAME, job/NAME), as kubectl events.",
        ),
    ] = "",
) -> None:
    """Show the Events of an application's pods, Job and SparkApplication, oldest first."""
    chosen = render.check_output(output, ("table", "json", "yaml"))
    wanted = _types(types)
    about = _object(for_object)
    # Events only: Spark's executor list (a request per live driver) would change nothing here.
    with common.one_app(app_ref, spark_api=False) as (loaded, app):
        events = [
            e
            for e in app_events(loaded.snapshot, app, loaded.snapshot.now)
            if (not wanted or e["type"] in wanted) and (not about or e["object"] == about)
        ]
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


def _types(text: str) -> set[str]:
    """Kubectl events' --types: known types only, any case (``events.go`` compares them folded)."""
    chosen = set()
    for part in (p.strip() for p in text.split(",") if p.strip()):
        match = next((t for t in EVENT_TYPES if t.lower() == part.lower()), None)
        if match is None:
            raise UsageError(f"valid --types are Normal, Warning (not {shown(part)!r})")
        chosen.add(match)
    return chosen


def _object(text: str) -> str:
    """--for KIND/NAME as the OBJECT column writes it (``pod/NAME``)."""
    if not text:
        return ""
    kind, slash, name = text.partition("/")
    if not slash or not kind or not name:
        raise UsageError(f"--for takes KIND/NAME, such as pod/NAME (not {shown(text)!r})")
    return f"{kind.lower().removesuffix('s')}/{name}"
