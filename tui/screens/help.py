"""Every binding, in one place."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Static

HELP = """kubectl spark — keys

  ↑ ↓ / j k     move in the table or tree        enter   open the application's tree
  tab           switch between table and tree    esc     back / clear the filter
  /             filter (text; /-l key=val labels; /! to invert)
  ctrl+z        only applications with faults (alerts or losses)
  :             command: :ns NAME, :ns all, :ctx NAME
  l / p         logs / previous logs of the selected pod
  d / y         describe the application / YAML of the selected pod
  f / K / r     fence / force-kill the attempt, resubmit the application (hidden with --readonly)
  ctrl+r        reload          ctrl+p   command palette          ?   this help          q   quit
"""


READONLY = (
    "  f / K / r     off: this TUI was started with --readonly (no fence, force-kill, resubmit)"
)
ACTION_KEYS = "  f / K / r     fence / force-kill the attempt, resubmit the application (hidden with --readonly)"


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Close"),
        Binding("question_mark", "app.pop_screen", "Close", show=False),
    ]

    def __init__(self, *, readonly: bool = False) -> None:
        super().__init__()
        self.readonly = readonly

    def compose(self) -> ComposeResult:
        yield Static(HELP.replace(ACTION_KEYS, READONLY) if self.readonly else HELP, id="help-text")
