"""The TUI's timeline rows, read as text."""

from __future__ import annotations

from datetime import UTC, datetime

from kubectl_spark.core.model import App, Attempt
from kubectl_spark.tui.widgets.timeline import UNDATED, rows
from tests.core_pods import typed_snapshot

NOW = datetime(2026, 3, 1, 3, 0, tzinfo=UTC)


def attempt(number: int, created: str | None, ended: str | None) -> Attempt:
    return Attempt(
        number, "pi-driver", None, None, "Failed", "Failed", created, created, ended, 0, False, None
    )


def span(text: str, number: int) -> str:
    row = next(line for line in text.splitlines() if line.startswith(f"attempt {number} "))
    return row.split("|")[1]


def test_an_undated_attempt_is_shaded_between_its_neighbours() -> None:
    """The spark-operator's earlier run, its pod gone and no Event dating it, ran between the
    attempts around it: drawn from the start to now, it read as the attempt that ran all along."""
    app = App(
        "spark-dev",
        "pi",
        "spark-1",
        "sparkapplication",
        "Failed",
        "2026-03-01T02:00:00Z",
        attempts=(
            attempt(1, "2026-03-01T02:00:00Z", "2026-03-01T02:10:00Z"),
            attempt(2, None, None),
            attempt(3, "2026-03-01T02:20:00Z", "2026-03-01T02:30:00Z"),
        ),
    )
    text = rows(app, NOW, width=61).plain
    first, second, third = span(text, 1), span(text, 2), span(text, 3)
    assert first.rstrip() == "█" * 11  # 02:00-02:10 of an hour on 60 columns
    assert second.strip() == UNDATED * 11 and second.index(UNDATED) == 10  # 02:10-02:20
    assert third.index("█") == 20 and third.rstrip().endswith("█") and len(third.rstrip()) == 31
    assert f"{UNDATED} undated, between its neighbours" in text


def test_the_legend_names_the_shade_only_when_it_is_drawn() -> None:
    app = App(
        "ns",
        "etl",
        "spark-2",
        "pod",
        "Failed",
        "2026-03-01T02:00:00Z",
        attempts=(attempt(1, "2026-03-01T02:00:00Z", "2026-03-01T02:30:00Z"),),
    )
    text = rows(app, NOW, width=61).plain
    assert UNDATED not in text


def test_the_apache_operators_ending_and_restart_are_marked() -> None:
    """Its timeouts and failures end an attempt; ScheduledToRestart starts the next: marked on
    their rows (the states between, seconds apart, are in `history`)."""
    from kubectl_spark.core.analyze import analyze
    from tests.apache_objects import RESTARTED, TIMED_OUT, apache_attempt, sparkapp

    owner = sparkapp([*TIMED_OUT, *RESTARTED], attempt=1, restarts=1, failures=1)
    snapshot = typed_snapshot(
        pods=apache_attempt(1, "2026-03-01T00:10:00Z"), apacheapps=[owner], now=NOW
    )
    (app,) = analyze(snapshot).apps
    text = rows(app, NOW, width=61).plain
    assert span(text, 1).count("o") == 1  # DriverStartTimedOut, where attempt 1 ended
    assert span(text, 2).count("o") == 1  # ScheduledToRestart, where attempt 2 began
    assert "o operator: attempt ended, restart" in text
