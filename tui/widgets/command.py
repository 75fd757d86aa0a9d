"""The ``:`` command line: ``:ns NAME``, ``:ns all``, ``:ctx NAME``, ``:ctx a,b``, ``:ctx all``.

It parses and checks what was typed, opens a picker for a bare ``:ctx`` or ``:ns``, and hands
the app one ``Asked`` message with the words; the app then tries the new source before it
switches (a context or namespace that cannot be read leaves the view as it was).
"""

from __future__ import annotations

from collections.abc import Callable

from textual import on
from textual.message import Message
from textual.widgets import Input

from kubectl_spark.app.text import escape
from kubectl_spark.knowledge.names import is_namespace_name, shown

# Names for a picker: ("ctx" or "ns", the context shown now) → the names to pick from.
Names = Callable[[str, str | None], list[str]]


class CommandBox(Input):
    class Asked(Message):
        """A switch was asked for: ``words`` as typed (or picked), checked."""

        def __init__(self, words: list[str]) -> None:
            super().__init__()
            self.words = words

    def __init__(self, names: Names | None = None, **kwargs: object) -> None:
        super().__init__(
            placeholder=":ns NAME | :ns all | :ctx NAME | :ctx a,b | :ctx all | :ctx or :ns to pick",
            **kwargs,  # type: ignore[arg-type]
        )
        self.names = names
        self.context: str | None = None  # the context shown, for a namespace picker

    def open(self, context: str | None) -> None:
        self.context = context
        self.value = ""
        self.add_class("visible")
        self.focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.remove_class("visible")
        words = event.value.strip().lstrip(":").split()
        if words in (["ctx"], ["ns"]) and self.names is not None:
            from kubectl_spark.tui.screens.picker import PickerScreen

            kind, names, context = words[0], self.names, self.context

            def picked(name: str | None) -> None:
                if name:
                    self.post_message(self.Asked([kind, name]))

            self.app.push_screen(PickerScreen(kind, lambda: names(kind, context)), picked)
            return
        if len(words) != 2 or words[0] not in ("ns", "ctx"):
            self.app.notify(f"unknown command: {escape(shown(event.value))}", severity="warning")
            return
        if words[0] == "ns" and words[1] != "all" and not is_namespace_name(words[1]):
            # It becomes part of every request path: "../../apis/x" must not.
            self.app.notify(f"not a namespace name: {escape(shown(words[1]))}", severity="error")
            return
        self.post_message(self.Asked(words))
