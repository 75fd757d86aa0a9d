"""The live TUI, reading the cluster its own way (watches, Spark's lists polled), shows ``ls -A``'s rows."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_spark.tui.widgets.apps_table import AppsTable
from tests.tui_pilot import SIZE, live_app, until

from .oneanswer import from_row, from_table


@pytest.mark.parametrize("name", ["mixed", "s9-deleted-executors"])
async def test_the_live_tui_shows_the_rows_ls_prints(name: str, played: Any, capsys: Any) -> None:
    from kubectl_spark.cli.main import main

    c = played(name)
    assert main(["--kubeconfig", str(c.kubeconfig), "ls", "-A"]) == 0
    printed = from_table(capsys.readouterr().out)
    app = live_app(c, all_namespaces=True)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await pilot.press("w")  # every column: a long ALERTS cell can leave RESTARTS out at 140

        def shown() -> dict[tuple[str, str], Any]:
            rows = [[str(x) for x in table.get_row_at(i)] for i in range(table.row_count)]
            return {(r[0], r[1].removeprefix("! ")): from_row(r) for r in rows}

        await until(pilot, lambda: shown() == printed, timeout=20, what=f"{shown()} == {printed}")
