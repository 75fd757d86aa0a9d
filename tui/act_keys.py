"""The action keys: a plan made by the application layer (the command's own), shown, then applied once confirmed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import work

from kubectl_spark.core.model import App as SparkApp
from kubectl_spark.core.model import Attempt

from .screens.plan import PlanScreen

if TYPE_CHECKING:
    from .app import SparkTUI


def action_fence(self: SparkTUI) -> None:
    self._plan("fence", *self.selection()[:2])


def action_force_kill(self: SparkTUI) -> None:
    self._plan("force-kill", *self.selection()[:2])


def action_resubmit(self: SparkTUI) -> None:
    self._plan("resubmit", *self.selection()[:2])


def action_delete_pod(self: SparkTUI) -> None:
    """k9s's ctrl+d on the focused executor's pod: a plan pinned to its UID, then confirmed."""
    app, attempt, executor = self.selection()
    if not executor:
        self.notify(
            "select an executor in the tree: its pod is what ctrl+d deletes", severity="warning"
        )
        return
    self._plan("delete-pod", app, attempt, executor)


@work(thread=True, exclusive=True, group="action")
def _plan(
    self: SparkTUI,
    action: str,
    chosen: SparkApp | None,
    chosen_attempt: Attempt | None,
    executor: str = "",
) -> None:
    """Compute the plan with the same code as the command, then ask."""
    from kubectl_spark.app import act

    if chosen is None or self.readonly:
        return
    try:
        with self.source_of(chosen).connect() as api:
            snap, app, attempt = act.reread(api, chosen, chosen_attempt)
            if action == "fence" and attempt is not None:
                plan = act.plan_fence(api, snap, app, attempt)
            elif action == "force-kill" and attempt is not None:
                plan = act.plan_force_kill(api, snap, app, attempt, act.KillOptions())
            elif action == "delete-pod" and attempt is not None:
                plan = act.plan_delete_pod(api, app, attempt, executor)
            else:
                plan = act.plan_resubmit(api, snap, app)
    except Exception as exc:  # noqa: BLE001 - shown to the user
        self.call_from_thread(
            self.notify, getattr(exc, "message", str(exc)), severity="error", timeout=8
        )
        return

    def decided(confirmed: bool | None) -> None:
        if confirmed:
            self._apply(plan, chosen)

    self.call_from_thread(self.push_screen, PlanScreen(plan), decided)


@work(thread=True, exclusive=True, group="action")
def _apply(self: SparkTUI, plan: Any, chosen: SparkApp) -> None:
    from kubectl_spark.kube import actions

    try:
        with self.source_of(chosen).connect() as api:
            missing = actions.missing_permissions(api, plan)
            if missing:
                self.call_from_thread(
                    self.notify,
                    "nothing changed: missing " + "; ".join(missing),
                    severity="error",
                    timeout=10,
                )
                return
            if plan.keep:
                from kubectl_spark.app.act import now_text
                from kubectl_spark.app.kept import keep

                kept = keep(api, plan, now_text(api))
                if kept:
                    self.call_from_thread(self.notify, kept, severity="warning", timeout=10)
            report = actions.apply(api, plan)
    except Exception as exc:  # noqa: BLE001 - shown to the user
        self.call_from_thread(
            self.notify, getattr(exc, "message", str(exc)), severity="error", timeout=10
        )
        return
    for note in report.notes:  # an answer lost, and what the re-read said
        self.call_from_thread(self.notify, note, severity="warning", timeout=10)
    if report.failed is not None:
        op, failure = report.failed
        self.call_from_thread(
            self.notify,
            f"{plan.action} stopped at {op.verb} {op.target()}: {failure.message}; "
            f"{len(report.applied)} step(s) applied",
            severity="error",
            timeout=10,
        )
    else:
        self.call_from_thread(
            self.notify,
            f"{plan.action} {plan.app}" + (f"/{plan.attempt}" if plan.attempt else "") + ": done",
        )
