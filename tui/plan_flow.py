"""The action keys' flow: a plan made by the application layer (the command's own), shown, then applied once confirmed."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kubectl_spark.core.model import App as SparkApp
from kubectl_spark.core.model import Attempt

from .screens.plan import PlanScreen

if TYPE_CHECKING:
    from .app import SparkTUI


class PlanFlow:
    """A plan made on a worker thread with the command's own code, shown, applied once confirmed.

    The TUI's action keys (f, K, r, ctrl+d) start it; only the notifications and the plan's
    screen touch the UI, from the UI thread (``call_from_thread``).
    """

    def __init__(self, tui: SparkTUI) -> None:
        self.tui = tui

    def make(
        self,
        action: str,
        chosen: SparkApp | None,
        chosen_attempt: Attempt | None,
        executor: str = "",
    ) -> None:
        """Plan ``action`` on a worker (one at a time: a newer key press replaces it)."""
        self._in_worker(functools.partial(self._plan, action, chosen, chosen_attempt, executor))

    def delete_pod(self) -> None:
        """k9s's ctrl+d on the focused executor's pod: a plan pinned to its UID, then confirmed."""
        app, attempt, executor = self.tui.main.selection()
        if not executor:
            self.tui.notify(
                "select an executor in the tree: its pod is what ctrl+d deletes",
                severity="warning",
            )
            return
        self.make("delete-pod", app, attempt, executor)

    def apply(self, plan: Any, chosen: SparkApp) -> None:
        """Apply a confirmed ``plan`` on a worker."""
        self._in_worker(functools.partial(self._apply, plan, chosen))

    def _in_worker(self, step: Callable[[], None]) -> None:
        self.tui.run_worker(step, thread=True, exclusive=True, group="action")

    def _plan(
        self,
        action: str,
        chosen: SparkApp | None,
        chosen_attempt: Attempt | None,
        executor: str = "",
    ) -> None:
        """Compute the plan with the same code as the command, then ask."""
        from kubectl_spark.app import act

        if chosen is None or self.tui.readonly:
            return
        try:
            with self.tui.source_of(chosen).connect() as api:
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
            self.tui.call_from_thread(
                self.tui.notify, getattr(exc, "message", str(exc)), severity="error", timeout=8
            )
            return

        def decided(confirmed: bool | None) -> None:
            if confirmed:
                self.apply(plan, chosen)

        self.tui.call_from_thread(self.tui.push_screen, PlanScreen(plan), decided)

    def _apply(self, plan: Any, chosen: SparkApp) -> None:
        from kubectl_spark.app.act import apply

        def warn(text: str) -> None:
            self.tui.call_from_thread(self.tui.notify, text, severity="warning", timeout=10)

        try:
            with self.tui.source_of(chosen).connect() as api:
                report = apply(api, plan, warn)
        except Exception as exc:  # noqa: BLE001 - shown to the user
            self.tui.call_from_thread(
                self.tui.notify, getattr(exc, "message", str(exc)), severity="error", timeout=10
            )
            return
        for note in report.notes:  # an answer lost, and what the re-read said
            self.tui.call_from_thread(self.tui.notify, note, severity="warning", timeout=10)
        if report.failed is not None:
            op, failure = report.failed
            self.tui.call_from_thread(
                self.tui.notify,
                f"{plan.action} stopped at {op.verb} {op.target()}: {failure.message}; "
                f"{len(report.applied)} step(s) applied",
                severity="error",
                timeout=10,
            )
        else:
            self.tui.call_from_thread(
                self.tui.notify,
                f"{plan.action} {plan.app}"
                + (f"/{plan.attempt}" if plan.attempt else "")
                + ": done",
            )
