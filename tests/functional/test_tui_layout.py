"""The TUI at the sizes people have: 80x24 (a laptop's split, a default terminal) and 160x45.

Snapshots of the main screen, the help, a plan dialog and the log view at both; below a width
the table drops its least useful columns first (never ALERTS or AGE before RESTARTS), the tree
puts state and reason before the pod's name and leaves the name out when narrow, and below a
height the timeline gives its room to the tree.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_spark.core.plans.fence import fence_plan
from kubectl_spark.core.pod import as_json
from kubectl_spark.tui.app import SparkTUI
from kubectl_spark.tui.screens.plan import PlanScreen
from kubectl_spark.tui.screens.text import TextScreen
from kubectl_spark.tui.sources import Source
from kubectl_spark.tui.widgets.apps_table import DROP_ORDER, AppsTable
from kubectl_spark.tui.widgets.attempt_tree import AttemptTree
from tests.tui_pilot import LOG, static_app, to_first_attempt, until

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((160, 45), id="160x45")]


def over_the_apps(screen: Any, *keys: str) -> Any:
    """A ``run_before`` for a snapshot: ``screen`` pushed over the analysed list, keys pressed."""

    async def run_before(pilot: Any) -> None:
        app: SparkTUI = pilot.app
        await until(pilot, lambda: bool(app.analysis.apps))
        await app.push_screen(screen)
        if keys:
            await pilot.press(*keys)
        await pilot.pause(0.2)

    return run_before


def test_snapshot_main_screen(snap_compare: Any, size: tuple[int, int]) -> None:
    assert snap_compare(static_app(), terminal_size=size, press=["_", "enter", "down", "_"])


def test_snapshot_two_clusters(snap_compare: Any, size: tuple[int, int]) -> None:
    """``--context prod,staging``: a CONTEXT column first, alerts first across both."""
    from kubectl_spark.tui.many import ManySource
    from kubectl_spark.tui.sources import StaticSource
    from tests.tui_pilot import NOW, fixed_snapshot

    def make(namespace: str | None, context: str | None, everywhere: bool) -> Source:
        return ManySource(
            {
                "prod": StaticSource(fixed_snapshot(), context="prod", namespace="spark"),
                "staging": StaticSource(fixed_snapshot(), context="staging", namespace="spark"),
            }
        )

    app = SparkTUI(make, context="prod,staging", now=lambda: NOW)
    assert snap_compare(app, terminal_size=size, press=["_"])


def test_snapshot_help(snap_compare: Any, size: tuple[int, int]) -> None:
    assert snap_compare(static_app(), terminal_size=size, press=["_", "question_mark", "_"])


def test_snapshot_plan_dialog(snap_compare: Any, size: tuple[int, int]) -> None:
    """The plan the fence key shows for the zombie attempt on the unreachable node."""

    async def run_before(pilot: Any) -> None:
        app: SparkTUI = pilot.app
        await until(pilot, lambda: bool(app.analysis.apps))
        ingest = next(a for a in app.analysis.apps if a.name == "ingest")
        plan = fence_plan(
            ingest,
            ingest.attempts[0],
            lease=None,
            allow=None,
            keep_executors=False,
            now="2026-03-01T03:00:00Z",
            actor="oncall@example.com",
            node_reachable=False,
        )
        await app.push_screen(PlanScreen(plan))
        await pilot.pause(0.2)

    assert snap_compare(static_app(), terminal_size=size, run_before=run_before)


LOG_TITLE = "logs of spark/ingest-x-exec-2  (esc: back)"


def test_snapshot_log_view(snap_compare: Any, size: tuple[int, int]) -> None:
    run_before = over_the_apps(TextScreen(LOG_TITLE, LOG, log=True))
    assert snap_compare(static_app(), terminal_size=size, run_before=run_before)


def test_snapshot_log_search(snap_compare: Any, size: tuple[int, int]) -> None:
    """``/`` in a log: every match marked, the current one brighter, "2/11" in the title."""
    screen = TextScreen(LOG_TITLE, LOG, log=True)
    run_before = over_the_apps(screen, "slash", *"task 2", "enter", "n")
    assert snap_compare(static_app(), terminal_size=size, run_before=run_before)


def test_snapshot_pod_view(snap_compare: Any, size: tuple[int, int]) -> None:
    """Drilled down to a pod: its describe, the breadcrumb in the title (``PodScreen``'s text)."""
    from kubectl_spark.app.rawdescribe import describe_pod
    from tests.tui_pilot import NOW, fixed_snapshot

    pod = next(p for p in fixed_snapshot().pods if p.metadata.name.endswith("exec-2"))
    text = describe_pod(as_json(pod), [], NOW)

    title = "ns/ingest ▸ attempt 2 ▸ executor 2 ▸ pod ingest-x-exec-2 ▸ describe pod  (esc: back)"
    run_before = over_the_apps(TextScreen(title, text))
    assert snap_compare(static_app(), terminal_size=size, run_before=run_before)


def test_snapshot_context_picker(snap_compare: Any, size: tuple[int, int]) -> None:
    """A bare ``:ctx``: the contexts to pick from, narrowed by what was typed."""
    from kubectl_spark.tui.screens.picker import PickerScreen

    names = ["all", "prod-eu", "prod-us", "staging"]
    run_before = over_the_apps(PickerScreen("ctx", lambda: names), *"prod")
    assert snap_compare(static_app(), terminal_size=size, run_before=run_before)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "size" in metafunc.fixturenames:
        metafunc.parametrize("size", SIZES)


async def test_a_narrow_table_drops_the_least_useful_columns_first() -> None:
    app = static_app()
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 2)
        shown = table.shown_columns
        assert {"APP", "STATE", "ALERTS", "AGE", "LOST"} <= set(shown)
        dropped = [c for c in DROP_ORDER if c not in shown]
        assert dropped == list(DROP_ORDER[: len(dropped)]) and dropped  # in order, some
        await pilot.resize_terminal(160, 45)
        await until(pilot, lambda: "RESTARTS" in table.shown_columns)
        await pilot.press("w")  # wide: every column of ls -o wide, whatever the width
        await pilot.resize_terminal(80, 24)
        await until(
            pilot,
            lambda: table.shown_columns[-4:] == ("NODE", "APP-ID", "SOURCE", "SCHEDULE"),
        )


async def test_a_narrow_tree_shows_state_and_reason_and_a_short_terminal_keeps_it() -> None:
    app = static_app()
    async with app.run_test(size=(60, 16)) as pilot:
        await until(pilot, lambda: app.query_one(AppsTable).row_count == 2)
        await to_first_attempt(pilot, app)
        tree = app.query_one(AttemptTree)
        assert tree.cursor_node is not None
        label = str(tree.cursor_node.label)
        assert label == "attempt 1 Lost NodeLost (cluster)", label
        assert "ingest-driver-a" not in label  # narrow: the detail pane names it
        assert not app.query_one("#timeline").display  # 16 lines: the tree has them
        assert tree.size.height >= 4
        await pilot.resize_terminal(160, 45)
        await until(pilot, lambda: "ingest-driver-a on node-a" in str(tree.cursor_node.label))
        assert app.query_one("#timeline").display


async def test_a_resize_under_a_dialog_lays_out_the_main_screen() -> None:
    """The layout classes belong to the main screen, not to the help shown over it."""
    app = static_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await until(pilot, lambda: app.query_one(AppsTable).row_count == 2)
        await pilot.press("question_mark")
        await until(pilot, lambda: len(app.screen_stack) == 2)
        await pilot.resize_terminal(60, 16)
        await pilot.pause(0.2)
        await pilot.press("escape")
        await until(pilot, lambda: len(app.screen_stack) == 1)
        await until(pilot, lambda: not app.query_one("#timeline").display)
        assert app.screen.has_class("short")
