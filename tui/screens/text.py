"""A full-screen text view (logs, describe, YAML); esc goes back."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, RichLog, Static

from kubectl_spark.tui.widgets.safe import safe


class TextScreen(Screen[None]):
    """A log opens at its end (the latest lines), a description or YAML at its top.

    ``w`` wraps long lines or cuts them: wrapped by default, but for logs, whose lines are
    records read one per line.
    """

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("q", "app.pop_screen", "Back", show=False),
        Binding("w", "wrap", "Wrap"),
    ]

    def __init__(self, title: str, body: str, *, log: bool = False) -> None:
        super().__init__()
        self.title_text = title
        self.body = body
        self.at_end = log
        self.wrapped = not log

    def compose(self) -> ComposeResult:
        yield Static(safe(self.title_text, "bold"), id="text-title")
        yield RichLog(
            id="text-body",
            wrap=self.wrapped,
            highlight=False,
            markup=False,
            auto_scroll=self.at_end,
        )
        yield Footer()

    def on_mount(self) -> None:
        self._fill()

    def _fill(self) -> None:
        log = self.query_one(RichLog)
        log.clear()
        for line in self.body.splitlines() or [""]:
            log.write(safe(line))
        if not self.at_end:
            log.scroll_home(animate=False)

    def action_wrap(self) -> None:
        self.wrapped = not self.wrapped
        self.query_one(RichLog).wrap = self.wrapped
        self._fill()
