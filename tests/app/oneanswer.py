"""One answer everywhere: what each front end says of an application, read back from its output.

Each reader takes one front end's own output (an ``ls`` row's cells, an ``ls -o json`` item, a
``describe -o json`` document, ``describe``'s text, the TUI's row) and returns the ``Answer`` it
gives: state, attempt, executors running/total, losses by category (unknown included), alerts.
``expected`` works the answer out from an application's JSON (its attempts, executors, reasons
and unknownLosses), independently of the product's summary code.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

# Ends that are not losses (the README's LOST column): a clean exit, a decommission, Spark's
# scale-down, executors that went with their driver.
NOT_LOST = {"Completed", "Decommissioned", "DeletedByDriver", "OwnerGone"}
CATEGORIES = ("app", "cluster", "driver", "user", "unknown")


@dataclass(frozen=True)
class Answer:
    state: str
    attempt: str  # "2/3"
    executors: str  # "4/9": the current attempt's running / all
    losses: tuple[tuple[str, int], ...]
    alerts: tuple[str, ...]


def _losses(counts: dict[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple((c, counts[c]) for c in CATEGORIES if counts.get(c))


def expected(item: dict[str, Any]) -> Answer:
    attempts = item["attempts"]
    current = attempts[-1] if attempts else None
    executors = current["executors"] if current else []
    lost: Counter[str] = Counter()
    for attempt in attempts:
        lost["unknown"] += attempt["unknownLosses"]
        for executor in attempt["executors"]:
            reason = executor["reason"]
            if reason and reason["code"] not in NOT_LOST:
                lost[reason["category"]] += 1
    return Answer(
        item["state"],
        f"{current['number']}/{len(attempts)}" if current else "0/0",
        f"{sum(1 for e in executors if e['state'] == 'Running')}/{len(executors)}",
        _losses(lost),
        tuple(dict.fromkeys(a["type"] for a in item["alerts"])),
    )


def from_summary(summary: dict[str, Any]) -> Answer:
    return Answer(
        summary["state"],
        f"{summary['attempt']}/{summary['attempts']}",
        f"{summary['executors']['running']}/{summary['executors']['total']}",
        _losses(summary["losses"]),
        tuple(summary["alerts"]),
    )


def _lost_cell(text: str) -> tuple[tuple[str, int], ...]:
    if text == "0":
        return ()
    counts = {}
    for part in text.split(", "):
        number, category = part.split(" ")
        counts[category] = int(number)
    return _losses(counts)


def from_row(cells: list[str]) -> Answer:
    """An ``ls -A`` row (NAMESPACE APP STATE ATTEMPT DRIVER EXECUTORS LOST RESTARTS ALERTS AGE)."""
    alerts = cells[8]
    return Answer(
        cells[2],
        cells[3],
        cells[5],
        _lost_cell(cells[6]),
        () if alerts == "-" else tuple(alerts.split(",")),
    )


def from_table(text: str) -> dict[tuple[str, str], Answer]:
    """``ls -A``'s printed table, by (namespace, name); cells are three or more spaces apart."""
    lines = text.splitlines()
    rows = [re.split(r" {3,}", line.strip()) for line in lines[1:] if line.strip()]
    return {(r[0], r[1]): from_row(r) for r in rows}


_SUMMARY = re.compile(
    r"^Summary: +attempt (?P<attempt>\d+/\d+), driver \S+, executors (?P<executors>\d+/\d+) "
    r"running, lost (?P<lost>.+), restarts \d+$",
    re.MULTILINE,
)


def from_describe_text(text: str) -> Answer:
    state = re.search(r"^State: +(\S+)$", text, re.MULTILINE)
    found = _SUMMARY.search(text)
    assert state and found, text
    alerts = re.findall(r"^  ! (\w+):", text, re.MULTILINE)
    return Answer(
        state.group(1),
        found["attempt"],
        found["executors"],
        _lost_cell(found["lost"]),
        tuple(dict.fromkeys(alerts)),
    )
