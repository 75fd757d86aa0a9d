"""The apps table at a watch event, 500 applications: rows compared only when their cells
changed, against every row compared at every event, side by side in one run.

Run: .venv/bin/python benchmarks/tui_event_sync.py [--apps 500] [--events 60]

Between two AGE ticks, a watch event changes one application (the incremental analysis hands
back the others as the same objects) and ``AppsTable.sync`` runs. Before issue 26's change it
looked up and compared every cell of every row (500 x 10 ``get_cell``) and measured every
cell for the column widths (``cell_len``, 5,500 a sync): the ``before`` rows replay that
(``_sync_before``, the method as it was at 9caf7e0) on the same table and data.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import time
from datetime import datetime, timedelta
from typing import Any

from tui_age_tick import many_apps

from kubectl_spark.app.present import age_cell, app_key
from kubectl_spark.app.summary import summarize
from kubectl_spark.tui.widgets import apps_table
from kubectl_spark.tui.widgets.apps_table import WIDE_COLUMNS, AppsTable, _Row, cells, ordered
from kubectl_spark.tui.widgets.safe import safe
from tests.tui_pilot import NOW, SIZE, static_app, until


def _sync_before(table: AppsTable, apps: list[Any], now: datetime, width: int) -> None:
    """``AppsTable.sync`` as it was: every present row compared, every cell measured."""
    selected = table.selected_key()
    compact = not table.wide and width < apps_table.COMPACT_BELOW
    memo = table._memo
    table._memo = {}
    for a in apps:
        known = memo.get(id(a))
        if known is None or known.app is not a or known.compact != compact:
            summary = summarize(a)
            by_column = dict(
                zip(WIDE_COLUMNS, cells(a, now, summary, wide=True, compact=compact), strict=True)
            )
            known = _Row(a, summary, by_column, compact, {})
        else:
            age = age_cell(a, now)
            if str(known.cells["AGE"]) != age:
                known.cells["AGE"] = safe(age)
        table._memo[id(a)] = known
    summaries = {app_key(a): table._memo[id(a)].summary for a in apps}
    every = {app_key(a): table._memo[id(a)].cells for a in ordered(apps, summaries, table.sort_key)}
    widths = {
        column: max([len(column), *(by_column[column].cell_len for by_column in every.values())])
        for column in apps_table.COLUMNS
    }
    columns = WIDE_COLUMNS if table.wide else apps_table.fitting(widths, width)
    if columns != table.shown_columns:
        table._rebuild(columns)
    for key in [str(k.value) for k in list(table.rows) if str(k.value) not in every]:
        table.remove_row(key)
    present = {str(k.value) for k in table.rows}
    for key, by_column in every.items():
        new = [by_column[c] for c in columns]
        if key in present:
            table._update(key, new)
        else:
            table.add_row(*new, key=key)
    order = list(every)
    if table._order() != order:
        first = columns[0]
        rank = {id(table.get_cell(key, first)): i for i, key in enumerate(order)}
        table.sort(first, key=lambda cell: rank[id(cell)])
    if selected in every and table.get_row_index(selected) != table.cursor_row:
        table.move_cursor(row=table.get_row_index(selected))


async def events(count: int, apps_wanted: int, before: bool) -> tuple[list[float], list[float]]:
    """(sync alone, sync and the frame drawn after it), in seconds, for each event."""
    app = static_app()
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 2)
        # hours old: AGE does not change between the events
        apps = many_apps(app, apps_wanted, lambda i: timedelta(hours=2 + i))
        sync = _sync_before.__get__(table) if before else table.sync
        sync(apps, NOW, SIZE[0])
        await pilot.pause()
        times, alone = [], []
        for n in range(count):
            i = (n * 37) % len(apps)  # one application changes: a new object, as the analysis makes
            apps[i] = dataclasses.replace(apps[i], state="Failed" if n % 2 else "Running")
            start = time.perf_counter()
            sync(apps, NOW, SIZE[0])  # between two AGE ticks
            alone.append(time.perf_counter() - start)
            await pilot.pause()
            times.append(time.perf_counter() - start)
        return alone, times


def _p95(times: list[float]) -> float:
    ordered_times = sorted(times)
    return ordered_times[max(0, int(len(ordered_times) * 0.95) - 1)]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--apps", type=int, default=500)
    parser.add_argument("--events", type=int, default=60)
    args = parser.parse_args()
    for round_ in range(2):  # alternated: before, now, before, now
        for before in (True, False):
            alone, drawn = asyncio.run(events(args.events, args.apps, before))
            name = "before (every row compared)" if before else "now (changed rows only)"
            print(
                f"round {round_ + 1} {name:<30} sync median {statistics.median(alone) * 1000:5.1f} ms"
                f" p95 {_p95(alone) * 1000:5.1f} ms   with the frame median "
                f"{statistics.median(drawn) * 1000:5.1f} ms p95 {_p95(drawn) * 1000:5.1f} ms"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
