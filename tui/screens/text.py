"""A full-screen text view (logs, describe, YAML); esc goes back."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, RichLog, Static

from kubectl_spark.tui.widgets.safe import safe

if TYPE_CHECKING:
    from kubectl_spark.tui.log_reader import LogReader

LOG_ONLY = {"follow", "timestamps"}


class TextScreen(Screen[None]):
    """A log opens at its end (the latest lines), a description or YAML at its top.

    ``w`` wraps long lines or cuts them: wrapped by default, but for logs, whose lines are
    records read one per line. A live container's log (``reader``) can be followed (``f``)
    and read with the kubelet's timestamps (``t``), as ``kubectl logs -f --timestamps``.
    """

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("q", "app.pop_screen", "Back", show=False),
        Binding("w", "wrap", "Wrap"),
        Binding("f", "follow", "Follow"),
        Binding("t", "timestamps", "Timestamps"),
    ]

    def __init__(
        self, title: str, body: str, *, log: bool = False, reader: LogReader | None = None
    ) -> None:
        super().__init__()
        self.title_text = title
        self.body = body
        self.at_end = log
        self.wrapped = not log
        self.reader = reader
        self.following = False
        self.timestamps = False

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="text-title")
        yield RichLog(
            id="text-body",
            wrap=self.wrapped,
            highlight=False,
            markup=False,
            auto_scroll=self.at_end,
        )
        yield Footer()

    def _title(self) -> Text:
        title = safe(self.title_text, "bold")
        for on, mark in ((self.following, "following"), (self.timestamps, "timestamps")):
            if on:
                title.append("  ")
                title.append(f"[{mark}]", style="bold reverse")
        return title

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Off, not merely disabled: the app's keys under them are off too (SparkTUI).
        if action == "follow":
            return self.reader is not None and self.reader.followable
        if action in LOG_ONLY:
            return self.reader is not None
        return True

    def on_mount(self) -> None:
        self._fill()

    def on_unmount(self) -> None:
        if self.reader is not None:
            self.reader.stop()

    def _fill(self) -> None:
        log = self.query_one(RichLog)
        log.clear()
        for line in self.body.splitlines() or [""]:
            log.write(safe(line))
        if not self.at_end:
            log.scroll_home(animate=False)

    def _retitle(self) -> None:
        self.query_one("#text-title", Static).update(self._title())

    def action_wrap(self) -> None:
        self.wrapped = not self.wrapped
        self.query_one(RichLog).wrap = self.wrapped
        if not self.following:
            self._fill()

    def action_timestamps(self) -> None:
        self.timestamps = not self.timestamps
        self._retitle()
        if self.following:
            self._stop_following()
            self.following = True
            self._start_following()
        else:
            self._reread()

    def action_follow(self) -> None:
        if self.following:
            self._stop_following()
        else:
            self.following = True
            self._start_following()
        self._retitle()

    def _stop_following(self) -> None:
        self.following = False
        if self.reader is not None:
            self.reader.stop()

    def _start_following(self) -> None:
        log = self.query_one(RichLog)
        log.clear()
        log.auto_scroll = True
        self.body = ""
        self._follow()

    @work(thread=True, exclusive=True, group="log")
    def _reread(self) -> None:
        reader = self.reader
        if reader is None:
            return
        try:
            body = reader.read(timestamps=self.timestamps)
        except Exception as exc:  # noqa: BLE001 - shown to the user
            self.app.call_from_thread(self._failed, exc)
            return
        self.app.call_from_thread(self._refilled, body)

    def _refilled(self, body: str) -> None:
        self.body = body or "(empty)"
        self._fill()

    @work(thread=True, exclusive=True, group="log")
    def _follow(self) -> None:
        reader = self.reader
        if reader is None:
            return
        try:
            reader.follow(self._line_from_thread, timestamps=self.timestamps)
        except Exception as exc:  # noqa: BLE001 - shown to the user
            self.app.call_from_thread(self._failed, exc)

    def _line_from_thread(self, line: str) -> None:
        self.app.call_from_thread(self._add_line, line)

    def _add_line(self, line: str) -> None:
        self.body += line + "\n"
        self.query_one(RichLog).write(safe(line))

    def _failed(self, exc: Exception) -> None:
        self.following = False
        self._retitle()
        self.notify(getattr(exc, "message", str(exc)), severity="error", timeout=8)
