"""The command tree. Registers commands only; each lives in its own module."""

from __future__ import annotations

import typer

from kubectl_spark.cli.commands import demo, version


def build_app() -> typer.Typer:
    app = typer.Typer(
        help="Spark on Kubernetes: driver attempts, executor loss reasons, split brain, safe actions.",
        add_completion=False,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.command("version", help="Print the kubectl spark version.")(version.run)
    app.command(
        "demo", help="Run the embedded Kubernetes API emulator (a cluster for the demo and tests)."
    )(demo.run)
    return app
