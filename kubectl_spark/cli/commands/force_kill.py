"""``kubectl spark force-kill <app>/<n>``: remove exactly that attempt, now, by UID."""

from __future__ import annotations

import typer

from kubectl_spark.app.act import KillOptions, plan_force_kill
from kubectl_spark.cli import act, common
from kubectl_spark.cli.commands.action_options import DryRun, PlanOutput, Yes


def run(
    reference: str = typer.Argument(
        ..., metavar="APP/ATTEMPT", help="The attempt to kill: app/N or its driver pod."
    ),
    force: bool = typer.Option(False, "--force", help="Kill even an attempt that looks healthy."),
    detach_volumes: bool = typer.Option(
        False,
        "--detach-volumes",
        help="Delete the VolumeAttachments of its ReadWriteOnce volumes on its unreachable node (dangerous).",
    ),
    out_of_service: bool = typer.Option(
        False,
        "--out-of-service",
        help="Taint its node node.kubernetes.io/out-of-service (only once the node is confirmed powered off).",
    ),
    no_replace: bool = typer.Option(
        False, "--no-replace", help="Suspend the driver Job so that it starts no new attempt."
    ),
    node_down: bool = typer.Option(
        False,
        "--node-down",
        help="Its unreachable node is confirmed powered off (required to kill an attempt there).",
    ),
    dry_run: DryRun = "none",
    yes: Yes = False,
    output: PlanOutput = "",
) -> None:
    """Delete an attempt's executors and driver with grace 0 and UID preconditions."""
    mode = act.check_dry_run(dry_run)
    with common.session() as loaded:
        app, attempt = common.find_attempt(loaded.analysis, reference, acting="force-kill")
        options = KillOptions(force, detach_volumes, out_of_service, no_replace, node_down)
        plan = plan_force_kill(loaded.api, loaded.snapshot, app, attempt, options)
        act.execute(loaded.api, plan, dry_run=mode, yes=yes, output=output)
