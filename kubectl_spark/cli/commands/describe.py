"""``kubectl spark describe <app>``: attempts, executors, loss reasons with evidence, alerts."""

from __future__ import annotations

import sys
from datetime import datetime

import typer

from kubectl_spark.cli import common, render
from kubectl_spark.cli.terminal import continued, escape
from kubectl_spark.core.model import App, Reason
from kubectl_spark.knowledge.times import age, parse

FAULT = {
    "app": "the application's fault",
    "cluster": "the cluster's fault",
    "driver": "the driver's own decision",
    "user": "a user's action",
    "unknown": "cause unknown",
}


def _reason_lines(reason: Reason, indent: str, *, waiting: bool = False) -> list[str]:
    """A loss reason, or (``waiting``) why nothing lost has started: no failure rule to tell."""
    counted = "counts as a failure" if reason.counts_as_failure else "does not count as a failure"
    more = indent + " " * 11
    fault = FAULT.get(reason.category, reason.category)
    lines = [
        f"{indent}{'Waiting:' if waiting else 'Reason:':<11}{reason.code} — {continued(reason.message, more)}",
        f"{more}{fault}" if waiting else f"{more}{fault}; {counted} (Spark's exitCausedByApp rule)",
    ]
    if reason.evidence:
        lines.append(f"{indent}Evidence:  {continued(reason.evidence[0], more)}")
        lines += [f"{more}{continued(e, more)}" for e in reason.evidence[1:]]
    return lines


def text(app: App, now: datetime, events: list[dict[str, str]]) -> str:
    col = " " * 14
    lines = [
        f"Name:         {continued(app.name, col)}",
        f"Namespace:    {continued(app.namespace, col)}",
        f"App ID:       {continued(app.app_id or '<none>', col)}",
        f"Source:       {app.source}" + (f" ({continued(app.owner, col)})" if app.owner else ""),
        f"State:        {app.state}",
        f"Created:      {app.created_at or '<unknown>'} ({age(parse(app.created_at), now)} ago)",
        f"Read from:    {', '.join(app.sources)}",
    ]
    lines += [f"  note: {continued(n, '    ')}" for n in app.notes]
    lines.append("Alerts:" + ("       <none>" if not app.alerts else ""))
    lines += [f"  ! {a.type}: {continued(a.message, '    ')}" for a in app.alerts]
    lines.append(f"Attempts:     {len(app.attempts)}")
    for attempt in app.attempts:
        where = f" on {attempt.node}" if attempt.node else ""
        lines.append(
            f"  #{attempt.number} {attempt.state:<11} driver {continued(attempt.driver_shown() + where, '      ')}"
            + (f", {attempt.restarts} restart(s)" if attempt.restarts else "")
            + (" [fenced]" if attempt.fenced else "")
        )
        lines.append(
            f"      Created:   {attempt.created_at or '<unknown>'}"
            + (f"   Ended: {attempt.ended_at}" if attempt.ended_at else "")
        )
        if attempt.reason is not None:
            lines += _reason_lines(attempt.reason, "      ")
        elif attempt.waiting is not None:
            lines += _reason_lines(attempt.waiting, "      ", waiting=True)
        if attempt.executors:
            lines.append(
                f"      Executors: {sum(1 for e in attempt.executors if e.state == 'Running')} running of {len(attempt.executors)}"
            )
            table = render.table(
                ("ID", "POD", "NODE", "STATE", "RESTARTS", "REASON", "FROM"),
                [
                    (
                        e.id,
                        e.pod or "<gone>",
                        e.node or "-",
                        e.state,
                        str(e.restarts),
                        f"{e.reason.code} ({e.reason.category})"
                        if e.reason
                        else f"waiting: {e.waiting.code}"
                        if e.waiting
                        else "-",
                        e.source,
                    )
                    for e in attempt.executors
                ],
            )
            lines += ["        " + line for line in table.rstrip("\n").split("\n")]
            for executor in attempt.executors:
                if executor.reason is not None and executor.reason.code not in (
                    "Completed",
                    "OwnerGone",
                ):
                    lines.append(f"        exec-{continued(executor.id, '          ')}:")
                    lines += _reason_lines(executor.reason, "          ")
                elif executor.reason is None and executor.waiting is not None:
                    lines.append(f"        exec-{continued(executor.id, '          ')}:")
                    lines += _reason_lines(executor.waiting, "          ", waiting=True)
    lines.append("Events:" + ("       <none>" if not events else ""))
    if events:
        table = render.table(
            ("LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"),
            [(e["age"], e["type"], e["reason"], e["object"], e["message"]) for e in events[-10:]],
        )
        lines += ["  " + line for line in table.rstrip("\n").split("\n")]
    return escape("\n".join(lines)) + "\n"


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
    from kubectl_spark.cli.commands.events import app_events

    chosen = render.check_output(output, ("table", "json", "yaml"))
    with common.one_app(app_ref) as (loaded, app):
        if render.is_document(chosen):
            sys.stdout.write(render.document(app.to_json(), chosen))
        else:
            now = loaded.snapshot.now
            sys.stdout.write(text(app, now, app_events(loaded.snapshot, app, now)))
