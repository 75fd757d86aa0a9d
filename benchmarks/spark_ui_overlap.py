"""The drivers' Spark UIs asked after the pod list, beside asked while it is read (issue 47).

Run: .venv/bin/python benchmarks/spark_ui_overlap.py [--pods 5000] [--latency 0.025] [--rounds 9]
     [--sizes-nearby 10000]

A reading command asks each running driver for Spark's executor list (``kube.sparkapi``),
eight at a time. Asked once the last page of pods has come, their round trips came on top of
the list's; ``sparkapi.ViewReads`` asks each driver as soon as its page is kept and the nodes
are known. Against a distant API server (every answer ``--latency`` late: the tests' fault
proxy, HTTPS, in this process) the pod list of ``--pods`` generated pods (a driver and 99
executors an application, pages of 500) is read both ways by one client in a child process,
alternated round by round, each way's answer checked equal to the other's. Then nearby (no
proxy) at each of ``--sizes-nearby``, where the client's CPU bounds both ways: an earlier cut
of the same idea was slower there (docs/performance.md). Written to
``benchmarks/results/<date>-spark-ui-overlap.json``.
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
    """In the child: each way's seconds per round, alternated, and whether they agreed."""
    from kubectl_spark.kube import snapshot
    from kubectl_spark.kube.client import Connection, connect
    from kubectl_spark.kube.sparkapi import ViewReads

    api = connect(Connection(kubeconfig=kubeconfig))

    def after() -> dict[str, Any]:
        snap, index = snapshot.read_indexed(api, None, slim_pods=True)
        assert index is not None
        return ViewReads(api).views(index.drivers, snap.nodes)

    def beside() -> dict[str, Any]:
        spark = ViewReads(api)
        snap, index = snapshot.read_indexed(api, None, slim_pods=True, spark=spark)
        assert index is not None
        return spark.views(index.drivers, snap.nodes)

    seconds: dict[str, list[float]] = {"after": [], "beside": []}
    answers: dict[str, Any] = {}
    ways = {"after": after, "beside": beside}
    for i in range(rounds + 1):  # the first round warms the connections
        for name in ("after", "beside") if i % 2 == 0 else ("beside", "after"):
            start = time.perf_counter()
            answers[name] = ways[name]()
            if i:
                seconds[name].append(time.perf_counter() - start)
    return {
        "after_s": round(statistics.median(seconds["after"]), 3),
        "beside_s": round(statistics.median(seconds["beside"]), 3),
        "drivers": len(answers["after"]),
        "same_answers": answers["after"] == answers["beside"],
    }


def main() -> int:
    parser = arguments(rounds=9)
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--latency", type=float, default=0.025)
    parser.add_argument("--sizes-nearby", default="10000")
    args = parser.parse_args()
    if answered_as_child(args, measure):
        return 0

    runs: list[dict[str, Any]] = []
    sizes = [(args.pods, args.latency)] + [(int(n), 0.0) for n in args.sizes_nearby.split(",") if n]
    for pods, latency in sizes:
        with served() as kubeconfig, contextlib.ExitStack() as distance:
            client = client_for(kubeconfig)
            generate(client, SystemClock(), apps=max(1, pods // 100), pods_per_app=100)
            client.close()
            where = (
                distance.enter_context(at_a_distance(kubeconfig, latency))
                if latency
                else kubeconfig
            )
            found = measured(__file__, args.rounds, where, ("beside", "after"))
            runs.append({"pods": pods, "latency_s": latency, **found})
    return written("spark-ui-overlap", args.rounds, runs)


if __name__ == "__main__":
    sys.exit(main())
