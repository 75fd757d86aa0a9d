"""The flags every action command takes, declared once so that they read the same everywhere."""

from __future__ import annotations

from typing import Annotated

import typer

DryRun = Annotated[
    str,
    typer.Option(
        "--dry-run",
        help="Only print the plan (client), or send every write with dryRun=All (server).",
    ),
]
Yes = Annotated[bool, typer.Option("--yes", "-y", help="Apply without asking.")]


def plan_output(value: str) -> str:
    """Checked before anything is read: an unknown format is refused, not ignored."""
    from kubectl_spark.cli import render

    return "" if render.check_output(value, ("table", "json", "yaml")) == "table" else value


PlanOutput = Annotated[
    str,
    typer.Option(
        "--output",
        "-o",
        help="With --dry-run: print the plan as json, yaml, jsonpath=… or custom-columns=….",
        callback=plan_output,
    ),
]

# resubmit and recorder: with --dry-run, the objects they would create, as kubectl create prints.
CreatedOutput = Annotated[
    str,
    typer.Option(
        "--output",
        "-o",
        help="With --dry-run: print the objects it would create, as json or yaml.",
        callback=plan_output,
    ),
]
