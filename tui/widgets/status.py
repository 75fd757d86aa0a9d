"""The header line: context, namespace(s), connection state, data age, counts."""

from __future__ import annotations

import time

from rich.text import Text
from textual.widgets import Static

from .safe import safe


class StatusBar(Static):
    def show(
        self,
        *,
        context: str,
        namespace: str | None,
        state: str,
        last_event: float | None,
        apps: int,
        alerts: int,
        error: str = "",
    ) -> None:
        text = Text("kubectl spark  ", style="bold")
        text.append_text(safe(f"context {context}  "))
        text.append_text(safe(f"namespace {namespace or 'all'}  "))
        colour = {
            "live": "green",
            "reconnecting": "yellow",
            "forbidden": "red",
            "failed": "red",
        }.get(state, "yellow")
        text.append(f"● {state}", style=colour)
        if last_event is not None:
            text.append(f"  last change {int(time.monotonic() - last_event)}s ago")
        text.append(f"  {apps} apps, {alerts} alerts")
        if error:
            text.append("  ")
            text.append_text(safe(error[:120], "red"))
        self.update(text)
