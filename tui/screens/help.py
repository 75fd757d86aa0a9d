"""Every binding, in one place."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Static

HELP = """kubectl spark — keys

  ↑ ↓ / j k   move in the table or tree     enter   down: attempts, then a pod
  g G         first / last row or line      pgup pgdn  a page up / down
  tab         table ⇄ tree                  esc     back, clear the filter
  /           filter: text, -l key=val, ! to invert
  ctrl+z      only applications with faults (alerts or losses)
  :           :ns NAME, :ns all, :ctx NAME, :ctx a,b, :ctx all; alone: pick
  N A S L     sort by name, age, state, lost (again: reverse, then back)
  w           wide: every column of ls -o wide
  l / p       logs / previous logs of the selected pod
  d / y       describe the app / YAML of the selected pod
  o           owner: executor → its attempt, attempt → its Job or CR (YAML)
  c / u / s   copy the name / the driver's Spark UI / a shell in the pod
  in a view   w wrap   f follow (logs)   t timestamps (logs)
              / search, n N next / previous   s autoscroll   ctrl+s save
  f K r ^d    fence, force-kill the attempt; resubmit; delete an executor's pod
  ctrl+r      reload     ctrl+p  commands     ?  this help     q  quit
"""


READONLY = "  f K r ^d    off: started with --readonly"
ACTION_KEYS = "  f K r ^d    fence, force-kill the attempt; resubmit; delete an executor's pod"


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
