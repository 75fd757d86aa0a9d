"""With --readonly the TUI says what is off: the help does not offer the action keys, and a key
pressed anyway says why nothing happens."""

from __future__ import annotations

from kubectl_spark.tui.screens.help import HelpScreen
from kubectl_spark.tui.screens.plan import PlanScreen
from tests.tui_pilot import SIZE, static_app, until


async def test_readonly_help_and_keys_say_what_is_off() -> None:
    app = static_app(readonly=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        await pilot.press("f")
        await until(
            pilot,
            lambda: any("read-only: fence is off" in str(n.message) for n in app._notifications),
            what="the notice for f",
        )
        assert not isinstance(app.screen, PlanScreen)
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        shown = str(app.screen.query_one("#help-text").render())
        assert "fence / force-kill the attempt" not in shown
        assert "started with --readonly" in shown
