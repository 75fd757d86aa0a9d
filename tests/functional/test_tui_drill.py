"""Drilling down as in k9s (issue 48, points 1 and 2): application ▸ attempt ▸ pod, and back.

Enter on the table goes into the application's attempts; enter on an attempt or an executor
opens its pod's raw view (``kubectl describe pod``: containers with state and last state,
conditions, the pod's Events, and its node's taints, conditions and allocatable), titled with
the breadcrumb; escape comes back to the line it was opened from. The line above the footer
says what is focused, so what every key acts on.
"""

from __future__ import annotations

from typing import Any

from kubectl_spark.tui.screens.pod import PodScreen
from kubectl_spark.tui.widgets.apps_table import AppsTable
from kubectl_spark.tui.widgets.attempt_tree import AttemptTree
from tests.functional.test_tui import SIZE, live_app, text_of, until
from tests.functional.test_tui_keys import body_lines


def focus_line(app: Any) -> str:
    return text_of(app.query_one("#focus"))


async def test_enter_drills_down_to_a_pod_and_escape_comes_back(cluster: Any) -> None:
    c = cluster("s2-partition")
    c.player.play_until(20)
    app = live_app(c)
    async with app.run_test(size=SIZE) as pilot:
        table, tree = app.query_one(AppsTable), app.query_one(AttemptTree)
        await until(pilot, lambda: table.row_count == 1)
        await until(
            pilot, lambda: "▸ apps: default/networkwordcount ▸ attempt 1" in focus_line(app)
        )
        await pilot.press("enter")
        await until(pilot, lambda: tree.has_focus)
        await pilot.press("down", "down")  # the root, attempt 1, its first executor
        await until(
            pilot, lambda: tree.cursor_node is not None and tree.cursor_node.data[0] == "executor"
        )
        line = tree.cursor_node.data
        assert focus_line(app).startswith(
            f"▸ tree: default/networkwordcount ▸ attempt 1 ▸ executor {line[2]}"
        )

        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, PodScreen))
        screen = app.screen
        await until(
            pilot, lambda: any(x.startswith("Containers:") for x in body_lines(screen)), timeout=20
        )
        title = text_of(screen.query_one("#text-title"))
        assert title.startswith(
            f"default/networkwordcount ▸ attempt 1 ▸ executor {line[2]} ▸ pod "
        ), title
        body = body_lines(screen)
        assert any(x.startswith("Node:") and "node-" in x for x in body), body
        assert any(x.startswith("Events:") for x in body)
        assert any("Scheduled" in x for x in body), body  # the pod's own Events
        assert any(x.strip().startswith("Taints:") for x in body)  # its node's describe
        assert any(x.strip().startswith("Allocatable:") for x in body)

        await pilot.press("escape")
        await until(pilot, lambda: len(app.screen_stack) == 1)
        assert tree.has_focus and tree.cursor_node is not None and tree.cursor_node.data == line

        # d acts on what is focused: the pod of the tree's line; from the table, the application.
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, PodScreen))
        await pilot.press("escape")
        await until(pilot, lambda: len(app.screen_stack) == 1)
        await pilot.press("escape")  # leave the tree
        await until(pilot, lambda: table.has_focus)
        await pilot.press("d")
        await until(pilot, lambda: len(app.screen_stack) == 2)
        assert not isinstance(app.screen, PodScreen)
        assert text_of(app.screen.query_one("#text-title")).startswith(
            "describe default/networkwordcount"
        )
