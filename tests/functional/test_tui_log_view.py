"""The log view as people expect it from k9s and less (issue 48, point 3).

``/`` searches (every match marked, ``n``/``N`` go round them, the title says which of how
many), ``s`` toggles autoscroll and the title says when it is on, ``ctrl+s`` saves the text to
a file of its own, escape closes the search box before it leaves the view.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

from textual.widgets import OptionList, RichLog

from kubectl_spark.tui.app import SparkTUI
from kubectl_spark.tui.screens.text import TextScreen
from tests.tui_pilot import LOG, static_app, text_of, until

SIZE = (120, 30)


class _Reader:
    """A live container's log (a reader): autoscroll applies; nothing is asked of a cluster."""

    followable = False

    def stop(self) -> None:
        return None


async def opened(pilot: Any, body: str = LOG, reader: Any = None) -> TextScreen:
    app: SparkTUI = pilot.app
    await until(pilot, lambda: bool(app.analysis.apps))
    screen = TextScreen("logs of spark/ingest-x-exec-2  (esc: back)", body, log=True, reader=reader)
    await app.push_screen(screen)
    await pilot.pause(0.1)
    return screen


def title(screen: object) -> str:
    assert isinstance(screen, TextScreen), screen
    return text_of(screen.query_one("#text-title"))


async def test_search_marks_every_match_and_n_and_N_go_round_them() -> None:
    app = static_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await pilot.press("slash", *"finished TASK 2", "enter")  # case does not matter
        # Lines "Finished task 2.0", "… 20.0" … "… 29.0": eleven, the first one current.
        assert len(screen.matches) == 11
        assert "[/finished TASK 2: 1/11]" in title(screen)
        first = screen.matches[0]
        await pilot.press("n")
        assert "2/11" in title(screen) and screen.current == 1
        await pilot.press("N", "N")
        assert "11/11" in title(screen)  # round the start, as less does
        body = screen.query_one("#text-body", RichLog)
        line = screen.matches[screen.current]
        assert (
            body.scroll_offset.y <= screen._starts[line] < body.scroll_offset.y + body.size.height
        )
        await pilot.press("n")
        assert screen.matches[screen.current] == first
        # The matched words are marked on screen, not only counted.
        drawn = body.lines[screen._starts[first]]
        assert any(
            "on yellow" in str(seg.style) or "on bright_green" in str(seg.style) for seg in drawn
        )

        await pilot.press("slash", *"no such words", "enter")
        assert screen.matches == [] and "no match" in title(screen)
        await pilot.press("n")  # says so, changes nothing
        assert len(app.screen_stack) == 2


async def test_escape_closes_the_search_box_first_then_the_view() -> None:
    app = static_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await pilot.press("slash")
        box = screen.query_one("#text-search")
        assert box.has_class("visible") and box.has_focus
        await pilot.press("n")  # typed into the box: not a jump
        assert screen.current == -1 and box.value == "n"  # type: ignore[attr-defined]
        await pilot.press("escape")
        assert not box.has_class("visible") and app.screen is screen
        await pilot.press("escape")
        assert len(app.screen_stack) == 1


async def test_autoscroll_is_shown_toggled_and_stopped_by_a_jump() -> None:
    app = static_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, reader=_Reader())
        assert "[autoscroll]" in title(screen)  # a live log starts at its end, following it
        await pilot.press("s")
        assert "[autoscroll]" not in title(screen)
        await pilot.press("s")
        assert "[autoscroll]" in title(screen)
        await pilot.press("slash", *"ERROR", "enter")  # reading a match: the view stays there
        assert "[autoscroll]" not in title(screen)
        screen._add_line("26/03/01 02:41:00 ERROR a line that came later")
        await pilot.pause(0.1)
        assert "1/2" in title(screen)  # the new line is a match too


async def test_ctrl_s_saves_the_text_to_a_file_of_its_own(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    app = static_app()
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot, body="first line\n\x1b[31mcluster text\n")
        await pilot.press("ctrl+s")
        await pilot.press("ctrl+s")  # a second save is a second file
        await pilot.pause(0.1)
    saved = sorted((tmp_path / "kubectl-spark" / "saved").iterdir())
    assert len(saved) == 2
    assert saved[0].name.startswith("logs-of-spark-ingest-x-exec-2-")
    assert saved[0].read_text() == "first line\n\x1b[31mcluster text\n"  # as read, not as drawn
    assert stat.S_IMODE(saved[0].stat().st_mode) == 0o600


async def test_a_followed_log_goes_on_across_a_restart_in_place(cluster: Any) -> None:
    """A Deployment's executor (Spark 4.2) restarts in place after an OOM kill: the API's stream
    ends with its run, the view follows the next run and says so (k9s does the same)."""
    from tests.tui_pilot import body_lines, live_app, to_first_executor

    c = cluster("s12-spark4-deployment-executors")
    c.player.play_until(30)
    app = live_app(c)
    async with app.run_test(size=SIZE) as pilot:
        suffix = await to_first_executor(pilot, app)
        (pod,) = [
            p
            for p in c.world.find_pods("default", spark_role="executor")
            if p["metadata"]["name"].endswith(f"-{suffix}")
        ]
        await pilot.press("l")
        await until(pilot, lambda: isinstance(app.screen, TextScreen), timeout=15)
        screen = app.screen
        await pilot.press("f")
        await until(pilot, lambda: "[following]" in title(screen))
        c.world.oom_kill("default", pod["metadata"]["name"])
        for _ in range(120):  # the kubelet's back-off, on the simulated clock
            if any("restarted (restart 1)" in x for x in body_lines(screen)):
                break
            c.world.step(1.0)
            await pilot.pause(0.1)
        assert any("restarted (restart 1): its next run" in x for x in body_lines(screen)), (
            body_lines(screen)[-5:]
        )
        assert "[following]" in title(screen)
        c.world.log(pod, "INFO marker: the next run's line")
        await until(
            pilot, lambda: any("marker: the next run" in x for x in body_lines(screen)), timeout=15
        )


async def test_a_pod_with_a_sidecar_asks_which_containers_log(cluster: Any) -> None:
    """Spark's container first in the list; the one picked is the one read."""
    from kubectl_spark.tui.screens.picker import PickerScreen
    from kubectl_spark.tui.widgets.apps_table import AppsTable
    from tests.tui_pilot import body_lines, live_app

    c = cluster("s2-partition")
    labels = {"spark-role": "driver", "spark-app-name": "side", "spark-app-selector": "spark-side"}
    c.world.client.create(
        "/api/v1/namespaces/default/pods",
        {
            "metadata": {"name": "side-driver", "labels": labels},
            "spec": {
                "containers": [
                    {"name": "fluent-bit", "image": "fluent/fluent-bit:3"},
                    {"name": "spark-kubernetes-driver", "image": "spark:4.1.1"},
                ],
            },
        },
    )
    c.player.play_until(20)
    c.server.append_log("default", "side-driver", "fluent-bit", "[fluent] shipping 12 records")
    app = live_app(c, initial_filter="side")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.query_one(AppsTable).row_count == 1)
        await pilot.press("l")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen), timeout=15)
        options = app.screen.query_one("#picker-list", OptionList)
        await until(pilot, lambda: options.option_count == 2)
        first = options.get_option_at_index(0)
        assert str(first.prompt) == "spark-kubernetes-driver"
        await pilot.press(*"fluent", "enter")
        await until(pilot, lambda: isinstance(app.screen, TextScreen), timeout=15)
        assert title(app.screen).startswith("logs of default/side-driver, container fluent-bit")
        await until(pilot, lambda: any("shipping 12 records" in x for x in body_lines(app.screen)))
