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
PlanOutput = Annotated[
    str, typer.Option("--output", "-o", help="With --dry-run: print the plan as json or yaml.")
]
