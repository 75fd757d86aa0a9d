"""A full-screen text view (logs, describe, YAML); esc goes back."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, RichLog, Static

from kubectl_spark.tui.widgets.safe import safe


class TextScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("q", "app.pop_screen", "Back", show=False),
    ]

    def __init__(self, title: str, body: str) -> None:
        super().__init__()
        self.title_text = title
        self.body = body

    def compose(self) -> ComposeResult:
        yield Static(safe(self.title_text, "bold"), id="text-title")
        log = RichLog(id="text-body", wrap=False, highlight=False, markup=False)
        yield log
        yield Footer()

    def on_mount(self) -> None:
        log = self.query_one(RichLog)
        for line in self.body.splitlines() or [""]:
            log.write(safe(line))
