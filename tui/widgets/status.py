"""The header line: connection state, counts, context, namespace(s), data age, what is on.

The state and the counts come first, so a narrow terminal cuts the context's name rather than
whether the data is live. What changes the list (a filter, faults only, a sort, wide columns)
is marked here, so that an empty or short list is never mistaken for the cluster's.
"""

from __future__ import annotations

import time
from datetime import timedelta

import humanize
from rich.text import Text

from .safe import safe
from .steady import SteadyStatic

STATE_COLOUR = {"live": "green", "reconnecting": "yellow", "forbidden": "red", "failed": "red"}
DEMO = "DEMO: a simulated cluster"


class StatusBar(SteadyStatic):
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
        marks: tuple[str, ...] = (),
        demo: bool = False,
    ) -> None:
        text = Text()
        if demo:
            text.append(f" {DEMO} ", style="bold black on yellow")
            text.append("  ")
        text.append(f"● {state}", style=STATE_COLOUR.get(state, "yellow"))
        if error:
            text.append("  ")
            text.append_text(safe(error[:120], "red"))
        text.append(
            f"  {counted(apps, 'app')}, {counted(alerts, 'alert')}", style="bold" if alerts else ""
        )
        for mark in marks:
            text.append("  ")
            text.append_text(safe(f"[{mark}]", "bold reverse"))
        text.append_text(safe(f"  context {context}  namespace {namespace or 'all'}"))
        if last_event is not None:
            since = timedelta(seconds=int(time.monotonic() - last_event))
            text.append(f"  last change {humanize.naturaltime(since)}")
        self.update(text)


def counted(number: int, noun: str) -> str:
    """A count as prose says it: "1 alert", "3 alerts", "1,204 apps" (humanize's grouping)."""
    return f"{humanize.intcomma(number)} {noun}{'' if number == 1 else 's'}"
