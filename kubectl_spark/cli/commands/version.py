from __future__ import annotations

import typer

from kubectl_spark import __version__
from kubectl_spark.errors import UsageError


def run(
    output: str = typer.Option(
        "", "--output", "-o", help="Output format: '' (text), json or yaml."
    ),
) -> None:
    """Print the client version, like ``kubectl version --client``."""
    if output == "":
        typer.echo(f"kubectl spark v{__version__}")
    elif output == "json":
        typer.echo(f'{{"clientVersion": {{"gitVersion": "v{__version__}"}}}}')
    elif output == "yaml":
        typer.echo(f"clientVersion:\n  gitVersion: v{__version__}")
    else:
        raise UsageError(f"--output must be 'yaml' or 'json', not {output!r}")
