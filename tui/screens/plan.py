"""The action dialog: the same plan the command would apply, and an explicit confirmation."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from kubectl_spark.core.plans import Plan
from kubectl_spark.tui.widgets.safe import safe


class PlanScreen(ModalScreen[bool]):
    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("y", "confirm", "Apply", show=False)]

    def __init__(self, plan: Plan) -> None:
        super().__init__()
        self.plan = plan

    def compose(self) -> ComposeResult:
        plan = self.plan
        text = Text()
        where = f"{plan.app}" + (f"/{plan.attempt}" if plan.attempt else "")
        text.append_text(safe(f"{plan.action} {where} in namespace {plan.namespace}\n\n", "bold"))
        if plan.refusal:
            text.append_text(safe(f"Refused: {plan.refusal}", "bold red"))
            if "pass --" in plan.refusal:
                # The keys here take no flags: the command line does.
                text.append_text(
                    safe(
                        f"\n\nThe TUI passes no flags: run kubectl spark {plan.action} {where} "
                        f"-n {plan.namespace} with the flag named above.",
                        "yellow",
                    )
                )
        elif plan.noop:
            text.append_text(safe(f"Nothing to do: {plan.noop}", "bold green"))
        else:
            for i, op in enumerate(plan.operations, start=1):
                text.append_text(safe(f"{i}. {op.summary()}\n"))
            for note in plan.notes:
                text.append_text(safe(f"note: {note}\n", "dim"))
            for warning in plan.warnings:
                text.append_text(safe(f"warning: {warning}\n", "yellow"))
            for guarantee in plan.guarantees:
                text.append_text(safe(f"guarantee: {guarantee}\n", "dim"))
        # The plan scrolls, the buttons stay in sight: a long plan on 24 lines hid them.
        with Vertical(id="plan-dialog"):
            with VerticalScroll(id="plan-body"):
                yield Static(text, id="plan-text")
            with Horizontal(id="plan-buttons"):
                if not plan.refusal and not plan.noop:
                    yield Button("Apply (y)", variant="error", id="apply")
                yield Button("Cancel (esc)", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "apply")

    def action_confirm(self) -> None:
        if not self.plan.refusal and not self.plan.noop:
            self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)
