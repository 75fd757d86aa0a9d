"""The flags of the commands that print one application's rows (events, history), declared once."""

from __future__ import annotations

from typing import Annotated

import typer

AppRef = Annotated[str, typer.Argument(metavar="APP", help="Application name or app id.")]
TableOutput = Annotated[
    str,
    typer.Option(
        "--output",
        "-o",
        help="Output format: json, yaml, jsonpath=… or custom-columns=… (default: a table).",
    ),
]
NoHeaders = Annotated[
    bool, typer.Option("--no-headers", help="Do not print the table's header line.")
]
