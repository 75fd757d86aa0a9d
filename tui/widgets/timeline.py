"""The restart history as a picture: a time axis, one span per attempt, losses marked by category."""

from __future__ import annotations

import re
from datetime import datetime

from rich.text import Text

from kubectl_spark.core.model import App
from kubectl_spark.knowledge.times import human_duration, parse

from .steady import SteadyStatic

MARK = {
    "app": ("A", "red"),
    "cluster": ("C", "yellow"),
    "driver": ("D", "blue"),
    "user": ("U", "magenta"),
    "unknown": ("?", "white"),
}
# History entries marked on their attempt's row. A wait (an image that cannot be pulled, no
# node that fits) is marked where it began: the span alone showed a stuck attempt as running.
ENTRY_MARK = {
    "ContainerRestarted": ("↻", "yellow"),
    "Waiting": ("W", "yellow"),
    "Fenced": ("F", "magenta"),
    "ForceKilled": ("K", "magenta"),
    "Resubmitted": ("R", "magenta"),
    "OperatorState": ("o", "cyan"),
}
# The Apache operator's states worth a mark: how an attempt ended, and a restart it scheduled
# (core.apache; the rest, Submitted … RunningHealthy, follow each other within seconds).
OPERATOR_MARKED = {
    "SchedulingFailure",
    "DriverStartTimedOut",
    "DriverReadyTimedOut",
    "ExecutorsStartTimedOut",
    "DriverEvicted",
    "Failed",
    "ScheduledToRestart",
    "RunningWithBelowThresholdExecutors",
}
_OPERATOR_STATE = re.compile(r"^SparkApplication (?:\S+ )?(\w+) \(attempt id")


def _marked(kind: str, message: str) -> bool:
    if kind != "OperatorState":
        return kind in ENTRY_MARK
    found = _OPERATOR_STATE.match(message)
    return found is not None and found.group(1) in OPERATOR_MARKED


UNDATED = "░"
SPAN = {
    "Running": "green",
    "Lost": "red",
    "Failed": "red",
    "Fenced": "magenta",
    "Terminating": "yellow",
    "Succeeded": "cyan",
}


def rows(app: App, now: datetime, width: int = 60) -> Text:
    """The axis, one row per attempt, and the legend."""
    start = parse(app.created_at) or now
    total = max((now - start).total_seconds(), 1.0)

    def column(value: str | None) -> int | None:
        moment = parse(value)
        if moment is None:
            return None
        return max(0, min(width - 1, int((moment - start).total_seconds() / total * (width - 1))))

    text = Text(
        f"{'':10}|{human_duration(0):<{width // 2}}{'now (' + human_duration(total) + ')':>{width - width // 2 - 1}}|\n",
        style="dim",
    )
    attempts = app.attempts
    for i, attempt in enumerate(attempts):
        glyph = "█"
        dated = column(attempt.created_at)
        end = column(attempt.ended_at) if attempt.ended_at else width - 1
        if dated is None:
            # No pod and no Event dates it (an operator's earlier run, say): it ran somewhere
            # between the attempts around it. Shaded over that window; drawn from the start, it
            # read as the attempt that ran all along.
            glyph = UNDATED
            before = attempts[i - 1] if i else None
            after = attempts[i + 1] if i + 1 < len(attempts) else None
            begin = (column(before.ended_at) or column(before.created_at) or 0) if before else 0
            if not attempt.ended_at and after is not None:
                end = column(after.created_at)
        else:
            begin = dated
        end = max(begin, end if end is not None else width - 1)
        row = [" "] * width
        styles = [""] * width
        for col in range(begin, end + 1):
            row[col], styles[col] = glyph, SPAN.get(attempt.state, "white")
        for executor in attempt.executors:
            if executor.reason is not None and executor.reason.code not in (
                "Completed",
                "OwnerGone",
            ):
                x = column(executor.ended_at)
                if x is not None:
                    row[x], styles[x] = MARK.get(executor.reason.category, ("?", "white"))
        for entry in app.history:
            if entry.attempt == attempt.number and _marked(entry.kind, entry.message):
                x = column(entry.time)
                if x is not None:
                    row[x], styles[x] = ENTRY_MARK[entry.kind]
        text.append(f"attempt {attempt.number:<2}|")
        for char, style in zip(row, styles, strict=True):
            text.append(char, style=style)
        text.append(f"| {attempt.state}\n")
    kinds = {entry.kind for entry in app.history if _marked(entry.kind, entry.message)}
    items = [
        "legend: █ attempt span",
        *([f"{UNDATED} undated, between its neighbours"] if UNDATED in text.plain else []),
        "A app / C cluster / D driver / U user loss",
        "↻ restart",
        "W waits",
        "F fence",
        "K kill",
        "R resubmit",
        *(["o operator: attempt ended, restart"] if "OperatorState" in kinds else []),
    ]
    text.append("\n".join(packed(items, width + 22)), style="dim")
    return text


def packed(items: list[str], width: int) -> list[str]:
    """Items two spaces apart, lines broken between items, never inside one."""
    lines: list[str] = []
    for item in items:
        if lines and len(lines[-1]) + 2 + len(item) <= width:
            lines[-1] += "  " + item
        else:
            lines.append(item)
    return lines


class Timeline(SteadyStatic):
    def show(self, app: App | None, now: datetime, width: int = 60) -> None:
        if app is None or not app.attempts:
            self.update("")
            return
        self.update(rows(app, now, width))
