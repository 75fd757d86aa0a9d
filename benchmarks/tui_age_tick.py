"""The apps table at an AGE tick, 500 applications: widen-only column widths against DataTable's
own narrowing (every cell of the column measured again), side by side in one run.

Run: .venv/bin/python benchmarks/tui_age_tick.py [--apps 500] [--ticks 30]

Each second every application's AGE may change; ``AppsTable.sync`` then updates those cells.
Before issue 26's change each update asked DataTable to fit the column, which, for a cell
narrower than the column, measures every cell of it: 500 x 500 measurements a tick. The
``before`` rows replay that (``update_width=True`` always) on the same table and data.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from kubectl_spark.tui.widgets.apps_table import AppsTable
from tests.tui_pilot import NOW, SIZE, static_app, until


def many_apps(app: Any, count: int, age: Callable[[int], timedelta]) -> list[Any]:
    """``count`` applications made from the static app's, the i-th ``age(i)`` old at NOW."""
    base = list(app.analysis.apps)
    return [
        dataclasses.replace(
            base[i % len(base)],
            name=f"{base[i % len(base)].name}-{i}",
            created_at=(NOW - age(i)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        )
        for i in range(count)
    ]


def _before(table: AppsTable, key: str, new: list[Any]) -> None:
    """``AppsTable._update`` as it was: every changed cell fitted by DataTable."""
    for column, value in zip(table.shown_columns, new, strict=True):
        old = table.get_cell(key, column)
        if old is value:
            continue
        if str(old) != str(value) or value.style != getattr(old, "style", None):
            table.update_cell(key, column, value, update_width=True)


async def ticks(count: int, apps_wanted: int, before: bool) -> list[float]:
    app = static_app()
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 2)
        # AGE ticks every second: young applications (seconds old)
        apps = many_apps(app, apps_wanted, lambda i: timedelta(seconds=30 + i * 7))
        if before:
            table._update = _before.__get__(table)  # type: ignore[method-assign]
        table.sync(apps, NOW, SIZE[0])
        await pilot.pause()
        times = []
        for second in range(1, count + 1):
            start = time.perf_counter()
            table.sync(apps, NOW + timedelta(seconds=second), SIZE[0])
            await pilot.pause()  # the table's idle work (its widths) done
            times.append(time.perf_counter() - start)
        return times


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--apps", type=int, default=500)
    parser.add_argument("--ticks", type=int, default=30)
    args = parser.parse_args()
    for round_ in range(2):  # alternated: before, now, before, now
        for before in (True, False):
            times = sorted(asyncio.run(ticks(args.ticks, args.apps, before)))
            p95 = times[max(0, int(len(times) * 0.95) - 1)]
            name = "before (DataTable narrows)" if before else "now (widen only)"
            print(
                f"round {round_ + 1} {name:<28} median {statistics.median(times) * 1000:6.1f} ms"
                f"   p95 {p95 * 1000:6.1f} ms"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
