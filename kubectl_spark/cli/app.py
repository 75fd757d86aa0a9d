"""The command tree. Registers commands only; each lives in its own module."""

from __future__ import annotations

import typer

from kubectl_spark.cli.commands import (
    completion,
    demo,
    describe,
    doctor,
    events,
    fence,
    force_kill,
    history,
    job,
    logs,
    ls,
    record,
    resubmit,
    tui,
    version,
)


def build_app() -> typer.Typer:
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
    app.command("ls", help="List Spark applications: attempts, executors, losses, alerts.")(ls.run)
    app.command("describe", help="Show one application with loss reasons, evidence and alerts.")(
        describe.run
    )
    app.command("history", help="Show an application's restart history as a timeline.")(history.run)
    app.command(
        "events", help="Show the Events of an application's pods, Job and SparkApplication."
    )(events.run)
    app.command("logs", help="Print the log of a driver attempt or an executor.")(logs.run)
    app.command("tui", help="Open the live terminal UI.")(tui.run)
    app.command(
        "record", help="Keep Spark pods' last states and Events in the local history store."
    )(record.run)
    app.command(
        "fence", help="Fence an attempt so that it cannot make progress.", rich_help_panel="Actions"
    )(fence.run)
    app.command("unfence", help="Undo a fence.", rich_help_panel="Actions")(fence.unfence)
    app.command(
        "force-kill",
        help="Delete exactly one attempt's pods, now, by UID.",
        rich_help_panel="Actions",
    )(force_kill.run)
    app.command(
        "resubmit", help="Start a fresh attempt of an application.", rich_help_panel="Actions"
    )(resubmit.run)
    app.command("doctor", help="List the split-brain hazards of an application's driver Job.")(
        doctor.run
    )
    app.command(
        "job", help="Print a driver Job that avoids the split-brain hazards by construction."
    )(job.run)
    app.command("demo", help="Run the embedded cluster with a simulated failure scenario.")(
        demo.run
    )
    app.command(
        "completion", help="Shell completion: bash, zsh or fish scripts, or install it for kubectl."
    )(completion.run)
    app.command("version", help="Print the kubectl spark version.")(version.run)
    return app
