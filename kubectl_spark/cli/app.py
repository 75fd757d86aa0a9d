"""The command tree. Registers the commands of ``kubectl_spark.command_table``; each lives in its own module."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import typer

from kubectl_spark.command_table import COMMANDS, NAMES

__all__ = ["NAMES", "build_app"]


def _function(module: str, attr: str) -> Callable[..., Any]:
    return getattr(importlib.import_module(f"kubectl_spark.cli.commands.{module}"), attr)  # type: ignore[no-any-return]


def _group() -> None:
    """The group's own callback: nothing to do (see build_app)."""


def build_app(only: str | None = None) -> typer.Typer:
    """The command tree; ``only``: just that command, the others' modules never imported.

    Every command's module imports what it needs; ``ls`` need not load the actions' or the
    demo's (a tenth of a second of its start, docs/performance.md).
    """
    app = typer.Typer(
        help=(
            "Spark on Kubernetes: driver attempts, executor loss reasons, split brain, safe actions.\n\n"
            "kubectl's connection flags work before or after the command: --kubeconfig, --context, --cluster, "
            "--user, -n/--namespace, -A/--all-namespaces, --request-timeout, -s/--server, --token, "
            "--insecure-skip-tls-verify, --as, --as-group (repeatable), --as-uid; -v=6 prints each "
            "request to the API server, as kubectl -v=6 does. --color auto|always|never colours tables "
            "(auto: a terminal without NO_COLOR)."
        ),
        add_completion=False,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    for name, module, attr, text, panel, _ in COMMANDS:
        if only is not None and name != only:
            continue
        app.command(name, help=text, rich_help_panel=panel)(_function(module, attr))
    if only is not None:
        # With one command and no callback, typer would make it the program itself (no
        # command name); a callback keeps the group: ``ls -A`` parses as it always does.
        app.callback()(_group)
    return app
