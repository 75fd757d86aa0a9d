"""The keys k9s and kubectl users reach for: sort, wide, copy, owner, the Spark UI, a log that
follows and shows timestamps, and the marks that say a filter or faults-only is on.

The live ones run on the emulator with the simulator playing the cluster: a driver Job
(s2-partition, before the partition), its driver running and its Spark UI served.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest
from textual.widgets import Input

from kubectl_spark.tui.app import SparkTUI
from kubectl_spark.tui.screens.plan import PlanScreen
from kubectl_spark.tui.screens.text import TextScreen
from kubectl_spark.tui.widgets.apps_table import AppsTable
from kubectl_spark.tui.widgets.attempt_tree import AttemptTree
from kubectl_spark.tui.widgets.status import DEMO, StatusBar
from tests.tui_pilot import (
    SIZE,
    STAMP,
    body_lines,
    cursor_to,
    live_app,
    select,
    static_app,
    text_of,
    to_first_attempt,
    until,
)


def names(table: AppsTable) -> list[str]:
    column = table.shown_columns.index("APP")
    return [str(table.get_row_at(i)[column]).removeprefix("! ") for i in range(table.row_count)]


async def test_sort_keys_reverse_then_go_back_and_say_so() -> None:
    app: SparkTUI = static_app()
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        status = app.query_one(StatusBar)
        await until(pilot, lambda: table.row_count == 2)
        assert names(table) == ["ingest", "nightly-etl"]  # alerts first
        await pilot.press("N")
        await until(pilot, lambda: "[sort: app ↑]" in text_of(status))
        assert names(table) == ["ingest", "nightly-etl"]
        await pilot.press("N")
        await until(pilot, lambda: names(table) == ["nightly-etl", "ingest"])
        assert "[sort: app ↓]" in text_of(status)
        await pilot.press("N")  # a third time: ls's order again, and no mark
        await until(pilot, lambda: "sort:" not in text_of(status))
        assert names(table) == ["ingest", "nightly-etl"]
        await pilot.press("A")  # the youngest first: ingest (60m) before nightly-etl (120m)
        await until(pilot, lambda: "[sort: age ↑]" in text_of(status))
        assert names(table) == ["ingest", "nightly-etl"]
        await pilot.press("A")
        await until(pilot, lambda: names(table) == ["nightly-etl", "ingest"])
        assert app.main.selected is not None and app.main.selected.startswith(
            "ns/"
        )  # cursor on an app
        await pilot.press("L")  # most losses last, ascending: nightly-etl (0) first
        await until(pilot, lambda: "[sort: lost ↑]" in text_of(status))
        assert names(table) == ["nightly-etl", "ingest"]


async def test_a_filter_and_faults_only_are_marked_on_the_status_bar() -> None:
    app: SparkTUI = static_app()
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        status = app.query_one(StatusBar)
        await until(pilot, lambda: table.row_count == 2)
        await pilot.press("slash", *"etl", "enter")
        # The filter applies as it is typed: "et" already leaves one row, so the wait is for the
        # whole word on the status bar (a loaded machine showed "[filter: et]" at one row).
        await until(pilot, lambda: table.row_count == 1 and "[filter: etl]" in text_of(status))
        await pilot.press("escape")  # clears the filter
        await until(pilot, lambda: table.row_count == 2 and "filter" not in text_of(status))
        await pilot.press("ctrl+z")
        await until(pilot, lambda: "[faults only]" in text_of(status))
        assert table.row_count == 1
        await pilot.press("w")
        await until(pilot, lambda: "[wide]" in text_of(status))


async def test_the_demo_says_it_is_a_simulation_and_a_cluster_does_not() -> None:
    demo: SparkTUI = static_app(demo=True)
    async with demo.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: DEMO in text_of(demo.query_one(StatusBar)))
    real: SparkTUI = static_app()
    async with real.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "● live" in text_of(real.query_one(StatusBar)))
        assert "DEMO" not in text_of(real.query_one(StatusBar))


async def test_copy_names_the_application_or_the_pod_under_the_cursor() -> None:
    app: SparkTUI = static_app()
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 2)
        await select(pilot, table, "nightly-etl")
        await pilot.press("c")
        await until(pilot, lambda: app.clipboard == "nightly-etl")
        await select(pilot, table, "ingest")
        await to_first_attempt(pilot, app)
        await pilot.press("c")
        await until(pilot, lambda: app.clipboard == "ingest-driver-a")
        tree = app.query_one(AttemptTree)
        attempt2 = tree.root.children[1]
        await cursor_to(pilot, tree, attempt2.children[1])  # exec-2
        await pilot.press("c")
        await until(pilot, lambda: app.clipboard == "ingest-x-exec-2")
        # o: an executor's owner is its attempt
        await pilot.press("o")
        await until(
            pilot,
            lambda: tree.cursor_node is not None and tree.cursor_node.data == ("attempt", 2, ""),
        )


async def test_main_keys_are_off_over_a_text_view() -> None:
    """f follows a log there; it once could fall through to fence the attempt behind it."""
    app: SparkTUI = static_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: bool(app.analysis.apps))
        await to_first_attempt(pilot, app)
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, TextScreen))
        # (d on the tree's line opens its pod's view, whose own l goes on to the pod's log.)
        for key in ("f", "K", "r", "N", "ctrl+d", "s"):
            await pilot.press(key)
        await pilot.pause(0.3)
        assert isinstance(app.screen, TextScreen) and len(app.screen_stack) == 2
        assert not any(isinstance(s, PlanScreen) for s in app.screen_stack)
        assert app.main.apps_table.sort_key is None  # N did not sort the table behind the view
        await pilot.press("escape")
        await until(pilot, lambda: len(app.screen_stack) == 1)
        await pilot.press("escape", "d")  # from the table: the application's describe
        await until(pilot, lambda: isinstance(app.screen, TextScreen))
        await pilot.press("l", "f")
        await pilot.pause(0.3)
        assert isinstance(app.screen, TextScreen) and len(app.screen_stack) == 2


async def test_a_live_log_follows_and_shows_timestamps(cluster: Any) -> None:
    c = cluster("s2-partition")
    c.player.play_until(20)
    app = live_app(c)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 1)
        await to_first_attempt(pilot, app)
        await pilot.press("l")
        await until(pilot, lambda: isinstance(app.screen, TextScreen))
        screen = app.screen
        assert isinstance(screen, TextScreen)
        assert body_lines(screen) and not any(STAMP.match(x) for x in body_lines(screen))
        await pilot.press("t")
        await until(pilot, lambda: all(STAMP.match(x) for x in body_lines(screen) if x))
        assert "[timestamps]" in text_of(screen.query_one("#text-title"))
        await pilot.press("f")
        await until(pilot, lambda: "[following]" in text_of(screen.query_one("#text-title")))
        driver = c.world.find_pods("default", spark_role="driver")[0]
        c.world.log(driver, "INFO marker: a line written while the view follows")
        await until(pilot, lambda: any("marker: a line" in x for x in body_lines(screen)))
        assert all(STAMP.match(x) for x in body_lines(screen) if x)
        count = len(body_lines(screen))
        await pilot.press("f")  # stop following: new lines no longer arrive
        await until(pilot, lambda: "[following]" not in text_of(screen.query_one("#text-title")))
        c.world.log(driver, "INFO after: not followed")
        await pilot.pause(0.5)
        assert not any("after: not followed" in x for x in body_lines(screen))
        assert len(body_lines(screen)) == count
        await pilot.press("escape")


async def test_the_spark_ui_through_the_pod_proxy_and_the_drivers_owner(cluster: Any) -> None:
    c = cluster("s2-partition")
    c.player.play_until(20)
    app = live_app(c)
    opened: list[str] = []
    app.open_url = lambda url, **_: opened.append(url)  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 1)
        await to_first_attempt(pilot, app)
        await pilot.press("u")
        await until(pilot, lambda: bool(opened), timeout=10)
        url = opened[0]
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(f"{url}api/v1/applications", timeout=5) as answer:
            apps = json.loads(answer.read())
        assert apps[0]["id"] == app.main.current_app().app_id  # type: ignore[union-attr]
        with pytest.raises(urllib.error.HTTPError) as missing:  # the driver's 404, passed on
            urllib.request.urlopen(f"{url}api/v1/applications/nope/x", timeout=5)
        assert missing.value.code == 404
        await pilot.press("u")  # the same forward again, not a second port
        await until(pilot, lambda: len(opened) == 2)
        assert opened[1] == url and len(app.ui_forwards) == 1
        # o on an attempt: what created its driver, the Job, as YAML read from the cluster
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, TextScreen))
        assert "YAML of Job default/networkwordcount" in text_of(
            app.screen.query_one("#text-title")
        )
        assert "kind: Job" in body_lines(app.screen)
        forwards = list(app.ui_forwards.values())
    assert forwards and not any(f.thread.is_alive() for f in forwards)  # closed with the TUI


async def test_vi_keys_move_in_what_is_focused_and_type_in_the_filter() -> None:
    """``j k g G`` as k9s has them (issue 48, point 1): on the table, on the tree, never in a text
    field (the filter takes them as letters)."""
    app: SparkTUI = static_app()
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        tree = app.query_one(AttemptTree)
        await until(pilot, lambda: table.row_count == 2)
        assert table.has_focus and table.cursor_row == 0
        for key, row in (("j", 1), ("k", 0), ("G", 1), ("g", 0), ("pagedown", 1), ("pageup", 0)):
            await pilot.press(key)
            await until(pilot, lambda row=row: table.cursor_row == row, what=f"{key}: row {row}")
        await pilot.press("enter")
        await until(pilot, lambda: tree.has_focus)
        await pilot.press("j")
        await until(pilot, lambda: tree.cursor_line == 1, what="j: attempt 1")
        await pilot.press("G")
        await until(pilot, lambda: tree.cursor_line == tree.last_line > 1, what="G: the last")
        await pilot.press("k")
        await until(pilot, lambda: tree.cursor_line == tree.last_line - 1, what="k: one up")
        await pilot.press("g")
        await until(pilot, lambda: tree.cursor_line == 0, what="g: the root")
        await pilot.press("pagedown")
        await until(pilot, lambda: tree.cursor_line == tree.last_line, what="a page down")
        await pilot.press("pageup")
        await until(pilot, lambda: tree.cursor_line == 0, what="a page up")
        await pilot.press("escape", "slash", "j", "k")
        await until(pilot, lambda: app.query_one("#filter", Input).value == "jk", what="typed")
        assert table.cursor_row == 0


async def test_keys_act_on_what_is_focused_and_focus_returns_after_a_dialog(cluster) -> None:
    """Issue 48, point 1: after a plan is closed the tree keeps focus and its line, so the next
    key acts on the same attempt; from the apps table ``y`` is the app's current driver, never
    the line the tree's cursor was left on."""
    c = cluster("s2-partition")
    c.player.play()
    app = live_app(c)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        tree = app.query_one(AttemptTree)
        await until(pilot, lambda: table.row_count == 1)
        await until(pilot, lambda: len(app.main.selection()[0].attempts) == 2)  # type: ignore[union-attr]
        await to_first_attempt(pilot, app)
        await pilot.press("K")
        await until(pilot, lambda: isinstance(app.screen, PlanScreen))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, PlanScreen))
        assert tree.has_focus and tree.cursor_node is not None
        assert tree.cursor_node.data == ("attempt", 1, "")
        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, PlanScreen))
        assert "fence networkwordcount/1" in text_of(app.screen.query_one("#plan-text"))
        await pilot.press("escape")
        await until(pilot, lambda: tree.has_focus)
        await pilot.press("j")  # from attempt 1 to its first executor
        await until(pilot, lambda: tree.cursor_node.data == ("executor", 1, "1"))
        await pilot.press("escape")
        await until(pilot, lambda: table.has_focus)
        current = app.main.selection()[1]
        assert current is not None and current.number == 2
        await pilot.press("y")
        await until(pilot, lambda: isinstance(app.screen, TextScreen))
        assert f"pod default/{current.driver_pod}" in app.screen.title_text  # type: ignore[attr-defined]
