"""``:ctx`` and ``:ns`` with no name open a picker (issue 48, point 1), narrowed as you type.

The names are the kubeconfig's contexts and the cluster's namespaces (read through the API
server, in the picker's own worker); picking one switches as typing it would; escape picks
nothing and changes nothing.
"""

from __future__ import annotations

from typing import Any

from kubectl_spark.cli.commands.tui import picker_names
from kubectl_spark.kube.client import Connection
from kubectl_spark.tui.screens.picker import PickerScreen
from kubectl_spark.tui.widgets.apps_table import AppsTable
from tests.tui_pilot import SIZE, live_app, text_of, until


def options(screen: Any) -> list[str]:
    shown = screen.query_one("#picker-list")
    return [str(shown.get_option_at_index(i).prompt) for i in range(shown.option_count)]


async def test_ns_picks_a_namespace_narrowed_as_typed(cluster: Any) -> None:
    c = cluster("s2-partition")
    c.player.play_until(20)
    c.world.client.create("/api/v1/namespaces", {"metadata": {"name": "spark-prod"}})
    names = picker_names(Connection(kubeconfig=str(c.kubeconfig)))
    app = live_app(c, names=names)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.query_one(AppsTable).row_count == 1)
        await pilot.press("colon", "n", "s", "enter")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen))
        picker = app.screen
        await until(pilot, lambda: "spark-prod" in options(picker), timeout=10)
        assert options(picker)[0] == "all" and "default" in options(picker)
        await pilot.press(*"prod")
        await until(pilot, lambda: options(picker) == ["spark-prod"])
        await pilot.press("enter")
        await until(pilot, lambda: len(app.screen_stack) == 1)
        status = app.query_one("#status")
        await until(pilot, lambda: "namespace spark-prod" in text_of(status), timeout=10)
        assert app.namespace == "spark-prod"

        # Escape picks nothing: the view stays as it is.
        await pilot.press("colon", "n", "s", "enter")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen))
        await pilot.press("escape")
        await until(pilot, lambda: len(app.screen_stack) == 1)
        assert app.namespace == "spark-prod"


async def test_ctx_lists_the_kubeconfigs_contexts_and_all(cluster: Any) -> None:
    c = cluster("s2-partition")
    names = picker_names(Connection(kubeconfig=str(c.kubeconfig)))
    app = live_app(c, names=names)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("colon", "c", "t", "x", "enter")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen))
        picker = app.screen
        await until(pilot, lambda: len(options(picker)) == 2, timeout=10)
        assert options(picker)[0] == "all"
        await pilot.press("down", "escape")
        await until(pilot, lambda: len(app.screen_stack) == 1)


async def test_the_columns_fit_their_cells_after_a_namespace_switch(played: Any) -> None:
    """At 80x24 a switch from one namespace to all (and back) lays the table out again: every
    shown column is as wide as its widest cell (issue 48 saw 4-5 characters until a resize)."""
    c = played("mixed")
    app = live_app(c, namespace="spark-dev")
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 1, timeout=20)
        for asked, rows in (("all", 4), ("spark-prod", 2), ("all", 4)):
            await pilot.press("colon", *f"ns {asked}", "enter")
            await until(pilot, lambda rows=rows: table.row_count == rows, timeout=20)
            await pilot.pause(0.3)
            for key, column in table.columns.items():
                cells = [table.get_cell(row, key) for row in table.rows]
                widest = max([len(str(key.value)), *(c.cell_len for c in cells)])
                assert column.get_render_width(table) >= widest + 2, (asked, key.value)
