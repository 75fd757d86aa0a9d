"""A driver's executor list read from its bytes, against parsed whole with each date read whole.

Run: .venv/bin/python benchmarks/spark_ui_lists.py [--executors 100] [--rounds 400]

A reading command asks each running driver for Spark's executor list (``kube.sparkapi``) and
keeps six fields of each ExecutorSummary (``core.summaries.SUMMARY_FIELDS``). A real driver
writes some thirty (Spark's core/src/main/scala/org/apache/spark/status/api/v1/api.scala:
task counters, memory and GC metrics, log URLs), its dates as ``yyyy-MM-dd'T'HH:mm:ss.SSS'GMT'``
(JacksonMessageWriter), and adds executors five a second (spark.kubernetes.allocation.batch.size
and batch.delay's defaults, resource-managers/kubernetes/core/.../Config.scala). Three ways,
alternated list by list in one process, their answers checked equal:

- ``whole``: the answer parsed whole (``answers.parse``), each date read whole (as before);
- ``whole_by_second``: parsed whole, each Spark date read by its second (``times.spark_time``);
- ``from_bytes``: ``summaries.summaries_from``, the six fields decoded from the bytes.

For a real driver's list and for the simulator's (six fields and its task counters, nothing
more), the median milliseconds a list; the dates' cache is emptied before each list, as one
``ls`` meets each driver's dates once (a TUI's next poll finds them again: ``warm`` rows).
Written to ``benchmarks/results/<date>-spark-ui-lists.json``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from unittest import mock

from _docs import put_result
from interactive import machine

from kubectl_spark.core import summaries
from kubectl_spark.knowledge import times
from kubectl_spark.kube import answers
from kubectl_spark.sim.sparkrest import SparkUI
from tests.spark_lists import real_list


def simulated_list(executors: int) -> bytes:
    ui = SparkUI("spark-1", "app", "2026-12-04T10:00:00Z")
    for n in range(1, executors + 1):
        ui.added(str(n), f"2026-12-04T10:{n // 5 // 60:02d}:{n // 5 % 60:02d}Z", "10.244.0.1")
        if n % 9 == 0:
            ui.removed(str(n), f"2026-12-04T10:{10 + n // 60:02d}:{n % 60:02d}Z", "lost")
    return ui.answer("/api/v1/applications/spark-1/allexecutors")[2]


def whole_date(value: object) -> object:
    """``times.spark_time`` as it was: every date parsed whole."""
    if isinstance(value, str) and value.endswith("GMT"):
        parsed = times.parse(value[: -len("GMT")] + "+00:00")
        if parsed is not None:
            return times.rfc3339(parsed)
    return value


def _whole(data: bytes) -> list[object] | None:
    return summaries.summaries_of(answers.parse(data))


def _from_bytes(data: bytes) -> list[object] | None:
    return summaries.summaries_of(summaries.summaries_from(data))


WAYS: dict[str, tuple[Callable[[bytes], list[object] | None], Callable[[object], object]]] = {
    "whole": (_whole, whole_date),
    "whole_by_second": (_whole, times.spark_time),
    "from_bytes": (_from_bytes, times.spark_time),
}


def measure(data: bytes, rounds: int, *, warm: bool) -> dict[str, float]:
    """Each way's median milliseconds a list, alternated; raises if their answers differ."""
    spent: dict[str, list[float]] = {name: [] for name in WAYS}
    answer: dict[str, object] = {}
    names = list(WAYS)
    for i in range(rounds + 1):  # the first round is not counted
        for name in names if i % 2 == 0 else names[::-1]:
            read, date = WAYS[name]
            if not warm:
                times._spark_second.cache_clear()
            with mock.patch.object(summaries, "spark_time", date):  # what read_summaries calls
                started = time.perf_counter()
                answer[name] = read(data)
                took = time.perf_counter() - started
            if i:
                spent[name].append(took * 1000)
    if any(a != answer["whole"] for a in answer.values()):
        raise SystemExit("the ways' answers differ")
    return {f"{name}_ms": round(statistics.median(spent[name]), 4) for name in WAYS}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--executors", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=400)
    args = parser.parse_args()
    lists = {"real": real_list(args.executors), "simulated": simulated_list(args.executors)}
    rows = {}
    for shape, data in lists.items():
        for warm in (False, True):
            row = {"bytes": len(data), **measure(data, args.rounds, warm=warm)}
            rows[f"{shape}{'_warm' if warm else ''}"] = row
            print(shape, "warm" if warm else "cold", row)
    put_result(
        "spark-ui-lists",
        {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": machine(),
            "executors": args.executors,
            "rounds": args.rounds,
            "lists": rows,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
