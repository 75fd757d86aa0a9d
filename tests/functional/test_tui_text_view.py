"""The text views: a description or YAML opens at its top with long lines wrapped, a log at its
end; ``w`` wraps or cuts."""

from __future__ import annotations

from textual.app import App
from textual.widgets import RichLog

from kubectl_spark.tui.screens.text import TextScreen
from tests.tui_pilot import until

BODY = "\n".join([f"line {i}" for i in range(200)] + ["x" * 300])


class Host(App[None]):
    def __init__(self, screen: TextScreen) -> None:
        super().__init__()
        self.view = screen

    def on_mount(self) -> None:
        self.push_screen(self.view)


async def test_a_description_opens_at_its_top_wrapped_and_w_cuts_long_lines() -> None:
    app = Host(TextScreen("describe", BODY))
    async with app.run_test(size=(80, 24)) as pilot:
        body = app.screen.query_one(RichLog)
        await until(pilot, lambda: len(body.lines) > 201, what="the long line wrapped")
        await pilot.pause(0.2)
        assert body.scroll_y == 0
        await pilot.press("w")
        await until(pilot, lambda: len(body.lines) == 201, what="the long line cut")
        assert body.scroll_y == 0


async def test_a_log_opens_at_its_end() -> None:
    app = Host(TextScreen("logs", BODY, log=True))
    async with app.run_test(size=(80, 24)) as pilot:
        body = app.screen.query_one(RichLog)
        await until(pilot, lambda: len(body.lines) == 201)
        await until(pilot, lambda: body.scroll_y > 0 and body.scroll_y == body.max_scroll_y)
