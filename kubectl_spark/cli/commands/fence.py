"""``kubectl spark fence <app>/<n>`` and ``unfence``: isolate a suspect attempt, or undo it."""

from __future__ import annotations

import typer

from kubectl_spark.app.act import actor, fence_admission, fence_policies, now_text, plan_fence
from kubectl_spark.cli import act, common
from kubectl_spark.cli.commands.action_options import DryRun, PlanOutput, Yes
from kubectl_spark.core.plans import unfence_plan


def run(
    reference: str = typer.Argument(
        ..., metavar="APP/ATTEMPT", help="The attempt to fence: app/N or its driver pod."
    ),
    allow: int = typer.Option(
        0, "--allow", help="The attempt that may proceed (default: the newest live attempt)."
    ),
    keep_executors: bool = typer.Option(
        False, "--keep-executors", help="Do not delete the fenced attempt's executors."
    ),
    force: bool = typer.Option(
        False, "--force", help="Fence even an attempt that looks healthy (Running, node reachable)."
    ),
    dry_run: DryRun = "none",
    yes: Yes = False,
    output: PlanOutput = "",
) -> None:
    """Fence an attempt: label its pods, deny-all NetworkPolicy, take the fencing Lease, stop its executors."""
    mode = act.check_dry_run(dry_run)
    with common.session() as loaded:
        app, attempt = common.find_attempt(loaded.analysis, reference, acting="fence")
        plan = plan_fence(
            loaded.api,
            loaded.snapshot,
            app,
            attempt,
            allow=allow or None,
            keep_executors=keep_executors,
            force=force,
        )
        act.execute(loaded.api, plan, dry_run=mode, yes=yes, output=output)


def unfence(
    reference: str = typer.Argument(..., metavar="APP/ATTEMPT", help="The fenced attempt."),
    dry_run: DryRun = "none",
    yes: Yes = False,
    output: PlanOutput = "",
) -> None:
    """Undo a fence: remove the labels, the deny-all NetworkPolicy and the admission policy."""
    mode = act.check_dry_run(dry_run)
    with common.session() as loaded:
        app, attempt = common.find_attempt(loaded.analysis, reference, acting="unfence")
        plan = unfence_plan(
            app,
            attempt,
            now=now_text(loaded.api),
            actor=actor(loaded.api),
            policies=fence_policies(loaded.api, app),
            admission=fence_admission(loaded.api),
        )
        act.execute(
            loaded.api,
            plan,
            dry_run=mode,
            yes=yes,
            output=output,
        )
