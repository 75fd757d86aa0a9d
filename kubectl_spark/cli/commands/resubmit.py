"""``kubectl spark resubmit <app>``: start a fresh attempt once every earlier one is dead or fenced."""

from __future__ import annotations

import typer

from kubectl_spark.app.act import plan_resubmit
from kubectl_spark.cli import act, common
from kubectl_spark.cli.commands.action_options import CreatedOutput, DryRun, Yes
from kubectl_spark.errors import NotFound


def run(
    app_ref: str = typer.Argument(..., metavar="APP", help="Application name or app id."),
    force: bool = typer.Option(
        False, "--force", help="Resubmit even while a live, unfenced attempt exists."
    ),
    dry_run: DryRun = "none",
    yes: Yes = False,
    output: CreatedOutput = "",
) -> None:
    """Start a fresh attempt: a new Job, a new driver pod (with a new executor name prefix), or an operator re-run."""
    mode = act.check_dry_run(dry_run)
    with common.session() as loaded:
        try:
            app = common.find_app(loaded.analysis, app_ref)
        except NotFound:
            app = None
        if app is not None:
            plan = plan_resubmit(loaded.api, loaded.snapshot, app, force=force)
            act.execute(loaded.api, plan, dry_run=mode, yes=yes, output=output)
            return
    # Gone from the cluster: a bare driver force-kill deleted is known from the history store,
    # where it kept what resubmit copies.
    with common.one_app(app_ref, spark_api=False) as (loaded, app):
        plan = plan_resubmit(loaded.api, loaded.snapshot, app, force=force)
        act.execute(loaded.api, plan, dry_run=mode, yes=yes, output=output)
