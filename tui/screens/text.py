"""A full-screen text view (logs, describe, YAML); esc goes back."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Input, RichLog, Static

from kubectl_spark.tui.widgets.safe import safe

if TYPE_CHECKING:
    from kubectl_spark.tui.log_reader import LogReader

LOG_ONLY = {"follow", "timestamps"}
MATCH = "bold black on yellow"  # every match of the search
CURRENT = "bold black on bright_green"  # the one n/N went to


class TextScreen(Screen[None]):
    """A log opens at its end (the latest lines), a description or YAML at its top.

    ``w`` wraps long lines or cuts them: wrapped by default, but for logs, whose lines are
    records read one per line. A live container's log (``reader``) can be followed (``f``)
    and read with the kubelet's timestamps (``t``), as ``kubectl logs -f --timestamps``.
    As in k9s and less: ``/`` searches (every match marked, ``n``/``N`` go to the next and
    previous, the title says which of how many), ``s`` turns autoscroll on and off (the title
    says it is on; going to a match turns it off), ``ctrl+s`` saves the text to a file.
    """

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("q", "app.pop_screen", "Back", show=False),
        Binding("w", "wrap", "Wrap"),
        Binding("f", "follow", "Follow"),
        Binding("t", "timestamps", "Timestamps"),
        Binding("slash", "search", "Search"),
        Binding("n", "next_match(1)", "Next", show=False),
        Binding("N", "next_match(-1)", "Previous", show=False),
        Binding("s", "autoscroll", "Autoscroll", show=False),
        Binding("ctrl+s", "save", "Save"),
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
        self.search = ""  # what ``/`` looks for (case-insensitive); "" for none
        self.matches: list[int] = []  # the body's lines that hold it, in order
        self.current = -1  # which of them n/N went to last
        self._starts: list[int] = []  # where each body line starts among the drawn (wrapped) lines

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="text-title")
        yield RichLog(
            id="text-body",
            wrap=self.wrapped,
            highlight=False,
            markup=False,
            auto_scroll=self.at_end,
        )
        yield Input(placeholder="search: text, enter to find, esc to close", id="text-search")
        yield Footer()

    def _title(self) -> Text:
        title = safe(self.title_text, "bold")
        found = f"{self.current + 1}/{len(self.matches)}" if self.matches else "no match"
        marks = (
            (self.following, "following"),
            (self.timestamps, "timestamps"),
            (self.autoscrolling, "autoscroll"),
            (bool(self.search), f"/{self.search}: {found}"),
        )
        for shown, mark in marks:
            if shown:
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
        self._retitle()  # the log exists now: whether it autoscrolls can be said

    def on_unmount(self) -> None:
        if self.reader is not None:
            self.reader.stop()

    @property
    def autoscrolling(self) -> bool:
        """Whether new lines pull the view to the end (a log's, until a key says otherwise)."""
        logs = self.query(RichLog)
        return bool(logs) and logs.first().auto_scroll and self.reader is not None

    def _fill(self) -> None:
        log = self.query_one(RichLog)
        log.clear()
        self._starts = []
        for line in self.body.splitlines() or [""]:
            self._write(log, line)
        if not self.at_end:
            log.scroll_home(animate=False)

    def _write(self, log: RichLog, line: str) -> None:
        self._starts.append(len(log.lines))
        text = safe(line)
        if self.search:
            text.highlight_words([self.search], MATCH, case_sensitive=False)
            if self.matches and self.matches[self.current] == len(self._starts) - 1:
                text.stylize(CURRENT)
        log.write(text)

    def action_back(self) -> None:
        """Escape: close the search box, else leave the view."""
        box = self.query_one("#text-search", Input)
        if box.has_class("visible"):
            box.remove_class("visible")
            self.query_one(RichLog).focus()
            return
        self.app.pop_screen()

    # ------------------------------------------------------------------------- search
    def action_search(self) -> None:
        box = self.query_one("#text-search", Input)
        box.value = self.search
        box.add_class("visible")
        box.focus()

    @on(Input.Submitted, "#text-search")
    def _searched(self, event: Input.Submitted) -> None:
        event.input.remove_class("visible")
        self.query_one(RichLog).focus()
        self.search = event.value.strip()
        lines = self.body.splitlines()
        wanted = self.search.lower()
        self.matches = [i for i, line in enumerate(lines) if wanted and wanted in line.lower()]
        self.current = -1
        if self.matches:
            self.action_next_match(1)
        else:
            self._fill()
            self._retitle()

    def action_next_match(self, step: int) -> None:
        """To the next (or, ``N``, the previous) match, round the ends as less does."""
        if not self.matches:
            if self.search:
                self.notify(f"no line holds {self.search!r}", severity="warning")
            return
        self.current = (self.current + step) % len(self.matches)
        log = self.query_one(RichLog)
        log.auto_scroll = False  # reading a match: new lines must not pull the view away
        self._fill()
        line = self.matches[self.current]
        y = self._starts[line] if line < len(self._starts) else line
        log.scroll_to(y=max(0, y - log.size.height // 3), animate=False)
        self._retitle()

    def action_autoscroll(self) -> None:
        log = self.query_one(RichLog)
        log.auto_scroll = not log.auto_scroll
        if log.auto_scroll:
            log.scroll_end(animate=False)
        self._retitle()

    def action_save(self) -> None:
        """The text as shown (without the marks) to a file of its own, its path said."""
        from kubectl_spark.tui.saved import save

        try:
            path = save(self.title_text, self.body)
        except OSError as exc:
            self.notify(f"not saved: {exc.strerror or exc}", severity="error", timeout=8)
            return
        self.notify(f"saved to {path}", timeout=10)

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
        if self.search and self.search.lower() in line.lower():
            self.matches.append(len(self._starts))
            self._retitle()
        self._write(self.query_one(RichLog), line)

    def _failed(self, exc: Exception) -> None:
        self.following = False
        self._retitle()
        self.notify(getattr(exc, "message", str(exc)), severity="error", timeout=8)
