"""Colour in the CLI's tables: ``--color auto|always|never`` and ``NO_COLOR``.

``auto`` (the default) colours a terminal only: never a pipe, never with ``NO_COLOR`` set to
anything (https://no-color.org), never on ``TERM=dumb``. ``always`` colours a pipe too (for
``less -R``), ``never`` nothing. Only what a reader scans for is coloured: a state word, a
count of losses, alerts, a Warning; the text is the same with or without colour.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

from kubectl_spark.cli import globals as cli_globals

MODES = ("auto", "always", "never")
RED, GREEN, YELLOW, BOLD_RED = "31", "32", "33", "1;31"
STATE_WORDS = {
    "Running": GREEN,
    "Succeeded": GREEN,
    "Completed": GREEN,
    "Failed": RED,
    "Lost": RED,
    "Unknown": RED,
    "Error": RED,
    "Fenced": YELLOW,
    "Pending": YELLOW,
    "Terminating": YELLOW,
    "Submitted": YELLOW,
    "CrashLoopBackOff": RED,
}
STATE_COLUMNS = frozenset({"STATE", "DRIVER", "STATUS", "PHASE"})


def on(stream: TextIO | None = None) -> bool:
    mode = cli_globals.current().color
    if mode == "always":
        return True
    if mode == "never" or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return (stream or sys.stdout).isatty()


def cell(header: str, text: str) -> str | None:
    """The SGR code for one table cell, or None."""
    if header in STATE_COLUMNS:
        word = text.partition(":")[0]
        return STATE_WORDS.get(word, YELLOW if word in ("Init", "Pending") else None)
    if header == "LOST":
        return RED if text != "0" else None
    if header == "ALERTS":
        return BOLD_RED if text != "-" else None
    if header == "TYPE":
        return YELLOW if text == "Warning" else None
    return None
