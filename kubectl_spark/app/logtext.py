"""What ``logs`` and the TUI say when a pod's log is gone with it."""

from __future__ import annotations

KEEP_HINT = " (`kubectl spark record` keeps the last lines of containers that stop with an error)"
PREVIOUS_GONE = (
    "log went with it, and no run before its last was kept (`kubectl spark record` keeps each "
    "run that stops with an error; without -p, the last run's lines if kept)"
)
