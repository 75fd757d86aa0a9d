"""The drivers' Spark UIs read eight at a time, beside two at first and more when they wait.

Run: .venv/bin/python benchmarks/spark_ui_readers.py [--drivers 100] [--latency 0.025]
     [--rounds 15]

A reading command asks each running driver for Spark's executor list (``kube.sparkapi``). Near
the API server a read is mostly the client's own CPU, and eight threads at a time only take
turns on the interpreter; far from it, a read mostly waits, and eight at a time is what keeps
a hundred drivers short. ``sparkapi.ViewReads`` starts with ``FIRST_READERS`` and allows more
once the process finds its reads waiting (``kube.background.Background``). Here ``--drivers``
running drivers (an application each, nine executors beside it) are read both ways, eight at a
time and paced, by one client in a child process, alternated round by round, each way's
answer checked equal to the other's: nearby (the emulator itself), then at a distance (every
answer ``--latency`` late: the tests' fault proxy, HTTPS, in this process). For each, the wall
time of reading them all and the client's CPU a read (the process's, over the reads).
Written to ``benchmarks/results/<date>-spark-ui-readers.json``.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import time
from typing import Any

from _served import client_for, served
from _two_ways import answered_as_child, arguments, measured, written
from interactive import at_a_distance

from kubectl_spark.knowledge.clock import SystemClock
from kubectl_spark.sim.generate import generate


def measure(kubeconfig: str, rounds: int) -> dict[str, Any]:
    """In the child: each way's seconds and CPU a read per round, alternated, and agreement."""
    from kubectl_spark.core.node import Node
    from kubectl_spark.core.pod import Pod
    from kubectl_spark.kube import sparkapi
    from kubectl_spark.kube.client import Connection, connect

    api = connect(Connection(kubeconfig=kubeconfig))
    pods = [Pod.of(p) for p in api.request("GET", "/api/v1/pods")["items"]]
    nodes = [Node.of(n) for n in api.request("GET", "/api/v1/nodes")["items"]]
    first = {"eight": None, "paced": sparkapi.FIRST_READERS}
    seconds: dict[str, list[float]] = {name: [] for name in first}
    cpu: dict[str, list[float]] = {name: [] for name in first}
    answers: dict[str, Any] = {}
    for i in range(rounds + 1):  # the first round warms the connections
        for name in ("eight", "paced") if i % 2 == 0 else ("paced", "eight"):
            sparkapi.FIRST_READERS = first[name]  # type: ignore[assignment]
            started, used = time.perf_counter(), time.process_time()
            answers[name] = sparkapi.read_views(api, pods, nodes)
            if i:
                seconds[name].append(time.perf_counter() - started)
                cpu[name].append((time.process_time() - used) / max(1, len(answers[name])))
    return {
        "drivers": len(answers["eight"]),
        **{f"{name}_s": round(statistics.median(seconds[name]), 4) for name in first},
        **{
            f"{name}_cpu_ms_a_read": round(1000 * statistics.median(cpu[name]), 3) for name in first
        },
        "same_answers": answers["eight"] == answers["paced"],
    }


def main() -> int:
    parser = arguments(rounds=15)
    parser.add_argument("--drivers", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.025)
    args = parser.parse_args()
    if answered_as_child(args, measure):
        return 0

    runs: list[dict[str, Any]] = []
    with served() as kubeconfig:
        client = client_for(kubeconfig)
        generate(client, SystemClock(), apps=args.drivers, pods_per_app=10)
        client.close()
        for latency in (0.0, args.latency):
            with contextlib.ExitStack() as distance:
                where = (
                    distance.enter_context(at_a_distance(kubeconfig, latency))
                    if latency
                    else kubeconfig
                )
                found = measured(__file__, args.rounds, where, ("paced", "eight"))
                runs.append({"latency_s": latency, **found})
    return written("spark-ui-readers", args.rounds, runs)


if __name__ == "__main__":
    sys.exit(main())
