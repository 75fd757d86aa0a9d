"""Attempts → executors, each line with its state and loss reason."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Tree

from kubectl_spark.core.model import App

from .safe import safe

STATE_STYLE = {
    "Running": "green",
    "Lost": "red",
    "Failed": "red",
    "Fenced": "magenta",
    "Terminating": "yellow",
    "Pending": "yellow",
}


def _label(title: str, state: str, reason: object) -> Text:
    text = safe(title)
    text.append("  ")
    text.append_text(safe(state, STATE_STYLE.get(state, "")))
    if reason is not None:
        text.append("  ")
        text.append_text(
            safe(
                f"{reason.code} ({reason.category})",
                "red" if reason.category in ("app", "cluster") else "dim",
            )
        )  # type: ignore[attr-defined]
    return text


class AttemptTree(Tree[tuple[str, int, str]]):
    def show(self, app: App | None) -> None:
        selected = self.cursor_node.data if self.cursor_node is not None else None
        self.clear()
        if app is None:
            self.root.set_label("no application selected")
            return
        self.root.set_label(safe(f"{app.name} ({app.source}, {app.state})"))
        self.root.expand()
        cursor = None
        for attempt in app.attempts:
            title = f"attempt {attempt.number}  {attempt.driver_pod or '<gone>'}" + (
                f" on {attempt.node}" if attempt.node else ""
            )
            node = self.root.add(
                _label(title, attempt.state, attempt.reason),
                data=("attempt", attempt.number, ""),
                expand=True,
            )
            if selected == ("attempt", attempt.number, ""):
                cursor = node
            for executor in attempt.executors:
                leaf = node.add_leaf(
                    _label(f"exec-{executor.id}  {executor.pod}", executor.state, executor.reason),
                    data=("executor", attempt.number, executor.id),
                )
                if selected == ("executor", attempt.number, executor.id):
                    cursor = leaf
        if cursor is not None:
            self.move_cursor(cursor)
