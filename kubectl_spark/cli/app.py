"""The command tree. Registers commands only; each lives in its own module."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import typer

# name, module (kubectl_spark.cli.commands.*), function, help, help panel: in the order the
# help lists them. A command's module is imported only when it is registered.
COMMANDS: tuple[tuple[str, str, str, str, str | None], ...] = (
    ("ls", "ls", "run", "List Spark applications: attempts, executors, losses, alerts.", None),
    (
        "describe",
        "describe",
        "run",
        "Show one application with loss reasons, evidence and alerts.",
        None,
    ),
    ("history", "history", "run", "Show an application's restart history as a timeline.", None),
    (
        "events",
        "events",
        "run",
        "Show the Events of an application's pods, Job and SparkApplication.",
        None,
    ),
    ("logs", "logs", "run", "Print the log of a driver attempt or an executor.", None),
    ("tui", "tui", "run", "Open the live terminal UI.", None),
    (
        "record",
        "record",
        "run",
        "Keep Spark pods' last states and Events in the local history store.",
        None,
    ),
    (
        "recorder",
        "recorder",
        "run",
        "Print or apply the in-cluster recorder (record with leader election).",
        None,
    ),
    ("fence", "fence", "run", "Fence an attempt so that it cannot make progress.", "Actions"),
    ("unfence", "fence", "unfence", "Undo a fence.", "Actions"),
    (
        "force-kill",
        "force_kill",
        "run",
        "Delete exactly one attempt's pods, now, by UID.",
        "Actions",
    ),
    ("resubmit", "resubmit", "run", "Start a fresh attempt of an application.", "Actions"),
    (
        "doctor",
        "doctor",
        "run",
        "List the split-brain hazards of an application's driver Job.",
        None,
    ),
    (
        "job",
        "job",
        "run",
        "Print a driver Job that avoids the split-brain hazards by construction.",
        None,
    ),
    ("demo", "demo", "run", "Run the embedded cluster with a simulated failure scenario.", None),
    (
        "completion",
        "completion",
        "run",
        "Shell completion: bash, zsh or fish scripts, or install it for kubectl.",
        None,
    ),
    ("version", "version", "run", "Print the kubectl spark version.", None),
    ("warm", "warm", "run", "See or stop the warm process that answers reads fast.", None),
)
NAMES = frozenset(c[0] for c in COMMANDS)


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
    for name, module, attr, text, panel in COMMANDS:
        if only is not None and name != only:
            continue
        app.command(name, help=text, rich_help_panel=panel)(_function(module, attr))
    if only is not None:
        # With one command and no callback, typer would make it the program itself (no
        # command name); a callback keeps the group: ``ls -A`` parses as it always does.
        app.callback()(_group)
    return app
