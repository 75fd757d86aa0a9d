"""Container logs are cluster data too: invalid UTF-8 and escape sequences never crash `logs` or
the TUI's log screen, and never reach the terminal raw."""

from __future__ import annotations

import pytest
from textual.widgets import RichLog

from kubectl_spark.cli.main import main
from tests.hostile import RAW

# Bytes a broken or hostile process may print: invalid UTF-8, a colour, an OSC hyperlink, bidi.
NASTY = (b"\xff\xfe\xc3 broken \x1b[31mred\x1b]8;;https://evil\x07link \xe2\x80\xae txt").decode(
    "utf-8", "surrogateescape"
)


def test_logs_with_invalid_utf8_and_escapes(cluster, capsys: pytest.CaptureFixture[str]) -> None:
    c = cluster("s6-driver-restarts")
    c.player.play_until(20)
    driver = c.world.find_pods("default", spark_role="driver")[0]
    c.server.append_log("default", driver["metadata"]["name"], "spark-kubernetes-driver", NASTY)
    app = driver["metadata"]["labels"]["spark-app-name"]
    code = main(["--kubeconfig", str(c.kubeconfig), "logs", app])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "broken" in out and "\ufffd" in out  # shown, with the invalid bytes replaced
    assert RAW.search(out) is None, repr(RAW.search(out))


async def test_the_tuis_log_screen_shows_hostile_bytes_escaped(cluster) -> None:
    from kubectl_spark.tui.screens.text import TextScreen
    from kubectl_spark.tui.widgets.apps_table import AppsTable
    from kubectl_spark.tui.widgets.attempt_tree import AttemptTree
    from tests.tui_pilot import SIZE, cursor_to, live_app, until

    c = cluster("s6-driver-restarts")
    c.player.play_until(20)
    driver = c.world.find_pods("default", spark_role="driver")[0]
    c.server.append_log("default", driver["metadata"]["name"], "spark-kubernetes-driver", NASTY)
    app = live_app(c)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 1)
        tree = app.query_one(AttemptTree)
        tree.focus()
        await until(pilot, lambda: tree.cursor_node is not None and tree.root.children)
        await cursor_to(pilot, tree, tree.root.children[0])  # the attempt: its driver's log
        await pilot.press("l")
        await until(pilot, lambda: isinstance(app.screen, TextScreen))
        lines = [line.text for line in app.screen.query_one("#text-body", RichLog).lines]
        shown = "\n".join(lines)
        assert "broken" in shown and "\ufffd" in shown
        assert RAW.search(shown) is None, repr(RAW.search(shown))
        assert "\\x1b[31mred" in shown  # the escape is shown as text, not obeyed
