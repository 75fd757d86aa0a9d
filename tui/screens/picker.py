"""A list to pick from, narrowed as you type.

k9s's ``:ctx`` and ``:ns`` with no name, and the container whose log to show in a pod with
several. The names are read in a worker of the screen's own (the kubeconfig's contexts, or the
cluster's namespaces), so a slow API server leaves the TUI responsive; ``all`` comes first.
Enter picks the highlighted name (or, with one left, the only one), escape picks nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from kubectl_spark.tui.widgets.safe import safe


class PickerScreen(ModalScreen[str | None]):
    BINDINGS = [
        Binding("escape", "dismiss_none", "Cancel"),
        Binding("down", "move(1)", "Down", show=False),
        Binding("up", "move(-1)", "Up", show=False),
    ]

    def __init__(self, kind: str, names: Callable[[], list[str]]) -> None:
        super().__init__()
        self.kind = kind  # "ctx" or "ns"
        self.read_names = names
        self.names: list[str] = []

    def compose(self) -> ComposeResult:
        what = {"ctx": "context", "ns": "namespace"}.get(self.kind, self.kind)
        with Vertical(id="picker"):
            yield Static(f"pick a {what} (type to narrow, enter to pick, esc to cancel)")
            yield Input(placeholder=f"{what}…", id="picker-filter")
            yield OptionList(Option(f"reading the {what}s…", disabled=True), id="picker-list")

    def on_mount(self) -> None:
        self.query_one(Input).focus()
        self._read()

    @work(thread=True, exclusive=True, group="picker")
    def _read(self) -> None:
        try:
            names = self.read_names()
        except Exception as exc:  # noqa: BLE001 - said in the list, never fatal
            self.app.call_from_thread(self._show, [], getattr(exc, "message", str(exc)))
            return
        self.app.call_from_thread(self._show, names, "")

    def _show(self, names: list[str], failure: str) -> None:
        self.names = names
        if failure:
            shown = self.query_one(OptionList)
            shown.clear_options()
            shown.add_option(Option(safe(f"cannot list: {failure}"), disabled=True))
            return
        self._narrow(self.query_one(Input).value)

    @on(Input.Changed, "#picker-filter")
    def _changed(self, event: Input.Changed) -> None:
        self._narrow(event.value)

    def _narrow(self, text: str) -> None:
        """The names holding ``text``, those starting with it first (completion's order)."""
        wanted = text.strip().lower()
        kept = [n for n in self.names if wanted in n.lower()]
        kept.sort(key=lambda n: not n.lower().startswith(wanted))
        shown = self.query_one(OptionList)
        shown.clear_options()
        shown.add_options([Option(safe(n), id=n) for n in kept])
        if kept:
            shown.highlighted = 0

    def action_move(self, step: int) -> None:
        shown = self.query_one(OptionList)
        if shown.option_count:
            shown.highlighted = ((shown.highlighted or 0) + step) % shown.option_count

    @on(Input.Submitted, "#picker-filter")
    def _submitted(self, event: Input.Submitted) -> None:
        shown = self.query_one(OptionList)
        index = shown.highlighted
        option = shown.get_option_at_index(index) if index is not None else None
        if option is not None and option.id is not None:
            self.dismiss(option.id)

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            self.dismiss(event.option.id)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
