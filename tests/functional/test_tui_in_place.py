"""Rows and tree lines are updated in place: what changed is redrawn, the cursor stays where it was,
and what did not change is not made again (a 500-application cluster renders at every change)."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Any

import pytest
from rich.text import Text
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Static
from textual.widgets.data_table import ColumnKey
from textual.widgets.tree import TreeNode

from kubectl_spark.tui.app import SparkTUI
from kubectl_spark.tui.widgets.apps_table import AppsTable, app_key
from kubectl_spark.tui.widgets.attempt_tree import AttemptTree
from tests.tui_pilot import NOW, SIZE, cursor_to, select, static_app, until


async def on_an_ingest_executor(pilot: Any, app: SparkTUI, leaf: int) -> tuple[AttemptTree, Any]:
    """The static app's "ingest" selected, the tree's cursor on its last attempt's executor
    ``leaf`` (an index); returns the tree and the cursor's node."""
    table = app.query_one(AppsTable)
    await until(pilot, lambda: table.row_count == 2)
    await select(pilot, table, "ingest")
    tree = app.query_one(AttemptTree)
    node = tree.root.children[-1].children[leaf]
    await cursor_to(pilot, tree, node)
    return tree, node


def with_last_executors(model: Any, executors: tuple[Any, ...]) -> Any:
    """The application with its last attempt's executors replaced."""
    last = dataclasses.replace(model.attempts[-1], executors=executors)
    return dataclasses.replace(model, attempts=(*model.attempts[:-1], last))


async def test_the_tree_is_updated_in_place_keeping_the_cursor() -> None:
    app = static_app()
    async with app.run_test(size=SIZE) as pilot:
        tree, leaf = await on_an_ingest_executor(pilot, app, 0)
        model = app.main.current_app()
        assert model is not None
        executors = model.attempts[-1].executors
        lost = dataclasses.replace(executors[0], state="Lost")
        tree.show(with_last_executors(model, (lost, *executors[1:])))
        # Read before yielding: the app's one-second tick shows the unchanged model again, and
        # under load it can run inside any pause (CI saw it once).
        assert "Lost" in str(leaf.label)
        assert tree.root.children[-1].children[0] is leaf, "rebuilt instead of updated"
        await pilot.pause(0.1)
        assert tree.root.children[-1].children[0] is leaf, "rebuilt by the next repaint"
        assert tree.cursor_node is leaf


async def test_a_tree_rebuilt_for_a_new_executor_keeps_the_cursor_on_its_line() -> None:
    """An executor added (or gone) changes the tree's shape and rebuilds it: the cursor stays on
    the line it was on, by key, rather than jumping to the top while the operator reads."""
    app = static_app()
    async with app.run_test(size=SIZE) as pilot:
        tree, leaf = await on_an_ingest_executor(pilot, app, -1)
        model = app.main.current_app()
        assert model is not None
        attempt = model.attempts[-1]
        added = dataclasses.replace(attempt.executors[-1], id="99", pod="ingest-exec-99", uid="u99")
        tree.show(with_last_executors(model, (*attempt.executors, added)))
        # Read before yielding, as above: a re-analysis may show the unchanged model again.
        assert tree.root.children[-1].children[-1].data == ("executor", attempt.number, "99")
        assert tree.cursor_node is not None and tree.cursor_node is not leaf, "not rebuilt"
        assert tree.cursor_node.data == leaf.data


async def test_the_apps_table_keeps_the_cursor_on_its_application_when_one_above_goes() -> None:
    """A row removed above the cursor moved the selection to the next application (the cursor
    is an index): the tree and the detail switched under the operator's eyes."""
    app = static_app()
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 2)
        shown = list(app.analysis.apps)
        third = dataclasses.replace(shown[-1], name="zz-nightly")  # sorts after the others
        table.sync([*shown, third], NOW, SIZE[0])
        await pilot.pause(0.1)
        keys = [str(table.coordinate_to_cell_key(Coordinate(i, 0)).row_key.value) for i in range(3)]
        middle = next(a for a in (*shown, third) if app_key(a) == keys[1])
        await select(pilot, table, middle.name)
        assert table.cursor_row == 1
        rest = [a for a in (*shown, third) if app_key(a) != keys[0]]
        table.sync(rest, NOW, SIZE[0])  # the application above it finished and was cleaned up
        await pilot.pause(0.1)
        assert table.row_count == 2
        assert table.selected_key() == app_key(middle)


async def test_the_table_keeps_the_cells_of_an_application_the_analysis_did_not_touch() -> None:
    """At 500 applications, making every row's cells at every change was most of a render."""
    app = static_app()
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 2)
        apps = list(app.analysis.apps)
        key, other = app_key(apps[0]), app_key(apps[1])
        before = table.get_cell(key, "STATE")
        other_age = str(table.get_cell(other, "AGE"))
        table.sync(apps, NOW, SIZE[0])
        assert table.get_cell(key, "STATE") is before  # the same application: kept
        changed = dataclasses.replace(apps[0], state="Failed")
        table.sync([changed, *apps[1:]], NOW + timedelta(hours=3), SIZE[0])
        assert table.get_cell(key, "STATE") is not before  # a new object: made again
        assert str(table.get_cell(other, "AGE")) != other_age  # AGE follows the clock, kept or not


async def test_a_narrower_cell_keeps_its_column_and_a_wider_one_widens_it() -> None:
    """DataTable narrows a column by measuring all its cells again: at 500 applications, at
    every AGE that ticks, that was most of an event's way to the screen (issue 26). A column
    is widened for a wider cell and kept as it is for a narrower one."""
    app = static_app()
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 2)
        apps = list(app.analysis.apps)
        width = table.columns[ColumnKey("STATE")].content_width
        wide = dataclasses.replace(apps[0], state="S" * (width + 5))
        table.sync([wide, *apps[1:]], NOW, SIZE[0])
        await pilot.pause()
        assert table.columns[ColumnKey("STATE")].content_width == width + 5
        narrow = dataclasses.replace(apps[0], state="X")
        table.sync([narrow, *apps[1:]], NOW, SIZE[0])
        await pilot.pause()
        assert str(table.get_cell(app_key(apps[0]), "STATE")).strip() == "X"
        assert table.columns[ColumnKey("STATE")].content_width == width + 5  # not measured again


async def test_a_row_the_analysis_did_not_touch_is_not_compared_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At 500 applications, comparing every cell of every row at each watch event was most of
    the event's way to the screen (issue 26): a row is compared only when its cells changed."""
    app = static_app()
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 2)
        apps = list(app.analysis.apps)
        table.sync(apps, NOW, SIZE[0])
        looked: list[str] = []
        real = table.get_cell

        def counted(row: Any, column: Any) -> Any:
            looked.append(str(row))
            return real(row, column)

        monkeypatch.setattr(table, "get_cell", counted)
        table.sync(apps, NOW, SIZE[0])  # the same applications at the same time
        assert looked == []
        changed = dataclasses.replace(apps[0], state="Failed")
        table.sync([changed, *apps[1:]], NOW, SIZE[0])
        assert set(looked) == {app_key(apps[0])}  # that row alone
        assert "Failed" in str(table.get_cell(app_key(apps[0]), "STATE"))


async def test_a_frame_draws_again_only_the_cells_that_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """DataTable draws every visible cell again after any cell changes (its cache is keyed on a
    count of updates): at an AGE tick with young applications, 190 cells through Rich where 19
    changed, 100-140 ms of a frame at 500 applications (issue 26). A cell is drawn again only
    when it is another cell, or drawn elsewhere or otherwise."""
    monkeypatch.setattr(SparkTUI, "_tick", lambda self: None)  # the app's own clock held still
    app = static_app()
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 2)
        apps = list(app.analysis.apps)
        age_before = str(table.get_cell(app_key(apps[0]), "AGE"))
        await pilot.pause(0.1)  # the first frame drawn
        drawn: list[tuple[int, int]] = []
        real = DataTable._render_cell

        def counted(self: Any, row: int, column: int, *args: Any, **kwargs: Any) -> Any:
            if row >= 0:
                drawn.append((row, column))
            return real(self, row, column, *args, **kwargs)

        monkeypatch.setattr(DataTable, "_render_cell", counted)
        table.sync(apps, NOW + timedelta(hours=3), SIZE[0])  # every AGE moves
        await until(pilot, lambda: bool(drawn), what="a frame drawn")
        await pilot.pause(0.1)
        age = table.shown_columns.index("AGE")
        assert set(drawn) == {(0, age), (1, age)}
        assert str(table.get_cell(app_key(apps[0]), "AGE")) != age_before


async def test_the_panes_leave_the_screen_alone_when_nothing_they_show_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``Static.update`` lays out the whole screen, which draws every widget again: the banner,
    the detail pane, the timeline and the status bar were handed their content at every event
    and every second (frames of 60-365 ms at 50,000 pods, issue 26); and a new root label
    redraws every line of the tree."""
    monkeypatch.setattr(SparkTUI, "_tick", lambda self: None)
    app = static_app()
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 2)
        await select(pilot, table, "ingest")
        updated: list[str] = []
        real_update, real_label = Static.update, TreeNode.set_label

        def update(self: Any, *args: Any, **kwargs: Any) -> None:
            updated.append(type(self).__name__)
            real_update(self, *args, **kwargs)

        def set_label(self: Any, label: Any) -> None:
            updated.append("tree line")
            real_label(self, label)

        monkeypatch.setattr(Static, "update", update)
        monkeypatch.setattr(TreeNode, "set_label", set_label)
        app.main.render_apps()  # the same analysis at the same second
        app._poll()  # the status bar, as every 0.25 s
        assert updated == []
        model = app.main.current_app()
        assert model is not None
        app.analysis = dataclasses.replace(
            app.analysis,
            apps=tuple(
                dataclasses.replace(a, state="Failed") if a is model else a
                for a in app.analysis.apps
            ),
        )
        app.main.render_apps()
        assert "AttemptTree" not in updated and "tree line" in updated  # the root's label
        await pilot.pause(0.1)
        assert "Failed" in str(app.query_one(AttemptTree).root.label)


async def test_a_pane_whose_size_cannot_change_is_drawn_again_without_a_layout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The timeline moves with the clock: as many lines as before, none folded, it keeps its size,
    and only it is drawn again; a line more (or one folded) lays the screen out again."""
    monkeypatch.setattr(SparkTUI, "_tick", lambda self: None)
    app = static_app()
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 2)
        await select(pilot, table, "ingest")
        timeline = app.main.timeline_view
        shown = timeline.content
        assert isinstance(shown, Text)
        layouts: list[bool] = []
        real = Static.update

        def update(self: Any, content: Any = "", *, layout: bool = True) -> None:
            layouts.append(layout)
            real(self, content, layout=layout)

        monkeypatch.setattr(Static, "update", update)
        timeline.update(Text(shown.plain.replace("|", "!")))  # the same lines, other marks
        timeline.update(Text(shown.plain + "\none more line"))
        timeline.update(Text("x" * (timeline.content_size.width + 1)))  # folded
        assert layouts == [False, True, True]
