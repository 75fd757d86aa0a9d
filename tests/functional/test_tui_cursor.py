"""The applications table keeps ``ls``'s order live and its cursor on its application: through a
filter and back, through an application gaining an alert (alerts first), the row the cursor is
on is the application the tree shows and Enter opens."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from kubectl_spark.core.model import Alert
from kubectl_spark.tui.app import SparkTUI
from kubectl_spark.tui.widgets.apps_table import AppsTable, app_key
from tests.tui_pilot import SIZE, select, static_app, until


def order(table: AppsTable) -> list[str]:
    return [str(table.get_row_at(i)[1]).removeprefix("! ") for i in range(table.row_count)]


async def test_the_cursor_stays_on_its_application_through_a_filter_and_a_resort() -> None:
    app: SparkTUI = static_app()
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 2)
        shown = list(app.analysis.apps)
        quiet = next(a for a in shown if not a.alerts)
        third = dataclasses.replace(quiet, name="zz-nightly", alerts=())
        app.analysis = dataclasses.replace(app.analysis, apps=(*shown, third))
        app.main.render_apps()
        await until(pilot, lambda: table.row_count == 3)
        before = order(table)
        await select(pilot, table, "zz-nightly")
        assert app.main.selected == app_key(third)

        app.main.filtering.text = "zz-"  # only it is left: its row moves up to the first
        app.main.render_apps()
        await until(pilot, lambda: table.row_count == 1)
        app.main.filtering.text = ""  # the others come back, each in its place, not appended
        app.main.render_apps()
        await until(pilot, lambda: table.row_count == 3)
        assert order(table) == before
        assert table.selected_key() == app_key(third) and app.main.selected == app_key(third)

        # It gains an alert: alerts first, so it moves up past the quiet one, the cursor with it.
        alarmed = dataclasses.replace(third, alerts=(Alert("SplitBrain", "two drivers"),))
        app.analysis = dataclasses.replace(app.analysis, apps=(*shown, alarmed))
        app.main.render_apps()
        await until(
            pilot,
            lambda: order(table).index("zz-nightly") < order(table).index(quiet.name),
            what="the alerted application above the quiet one",
        )
        assert table.selected_key() == app_key(third)
        await pilot.press("enter")  # opens what the cursor is on
        current = app.main.current_app()
        assert current is not None and current.name == "zz-nightly"


async def test_an_application_filtered_out_hands_the_selection_to_the_row_under_the_cursor() -> (
    None
):
    app: SparkTUI = static_app()
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 2)
        first, second = order(table)
        await select(pilot, table, second)
        app.main.filtering.text = f"!{second}"  # the selected one is hidden
        app.main.render_apps()
        await until(pilot, lambda: table.row_count == 1)
        current = app.main.current_app()
        assert current is not None and current.name == first  # what is shown is what is opened


async def test_age_advances_with_no_cluster_change() -> None:
    from kubectl_spark.tui.sources import StaticSource
    from tests.tui_pilot import NOW, fixed_snapshot

    clock = [NOW]
    snapshot = fixed_snapshot()
    app = SparkTUI(
        lambda *_: StaticSource(snapshot, context="prod-cluster", namespace="spark"),
        now=lambda: clock[0],
    )
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 2)
        age = [str(c.label) for c in table.columns.values()].index("AGE")
        before = str(table.get_row_at(0)[age])
        analysis = app.analysis
        clock[0] = NOW + timedelta(minutes=7)  # time passes; the cluster says nothing
        await until(pilot, lambda: str(table.get_row_at(0)[age]) != before, timeout=5)
        assert app.analysis is analysis  # redrawn from the analysis made, not analysed again
