"""What a read's deadline costs: one watchdog thread against a ``threading.Timer`` a read.

Run: .venv/bin/python benchmarks/read_deadlines.py [--requests 300] [--rounds 9]

A read with a budget (a driver's Spark UI asked for its executor list, five seconds; any read
under ``--request-timeout``) is cut at its deadline (``kube/answers.read_body``). Until
2026-12-06 each such read started a ``threading.Timer``; now the process's one watchdog
thread keeps every deadline (``kube/watchdog.py``). Against the emulator, in one process,
each round alternating the three, the CPU of ``requests`` small reads one after the other
(``GET /api/v1/namespaces/default``, the same path through ``Api.request`` as a Spark UI's
answer): with the watchdog, with a Timer each (the code before, kept here to compare), and
with no deadline at all. Written to ``benchmarks/results/<date>-read-deadlines.json``.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import urllib3
from _docs import put_result
from _served import served

from kubectl_spark.kube import answers
from kubectl_spark.kube.client import Api, Connection, connect


def _timer_each(raw: Any, end: float | None) -> bytes | None:
    """``answers.read_body`` as it was: a Timer thread for each read with a deadline."""
    if end is None:
        return bytes(raw.data)
    timer = threading.Timer(max(end - time.monotonic(), 0.0), answers.cut, (raw,))
    timer.daemon = True
    timer.start()
    chunks: list[bytes] = []
    try:
        for chunk in raw.stream(65536):
            chunks.append(chunk)
            if time.monotonic() >= end:
                break
    except (urllib3.exceptions.HTTPError, OSError):
        if time.monotonic() < end:
            raise
    finally:
        timer.cancel()
    return b"".join(chunks)


def _cpu_per_read(api: Api, requests: int, timeout: float | None) -> float:
    """µs of this process's CPU per read, ``requests`` reads one after the other."""
    start = time.process_time()
    for _ in range(requests):
        api.request("GET", "/api/v1/namespaces/default", timeout=timeout)
    return (time.process_time() - start) / requests * 1e6


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    product = answers.read_body
    variants: dict[str, tuple[Callable[[Any, float | None], bytes | None], float | None]] = {
        "watchdog": (product, 5.0),
        "timer_each": (_timer_each, 5.0),
        "no_deadline": (product, None),
    }
    found: dict[str, list[float]] = {name: [] for name in variants}
    with served() as kubeconfig, connect(Connection(kubeconfig=str(kubeconfig))) as api:
        _cpu_per_read(api, 50, 5.0)  # connected, and the watchdog started
        for round_ in range(args.rounds):
            names = list(variants) if round_ % 2 == 0 else list(reversed(variants))
            for name in names:
                read, timeout = variants[name]
                vars(answers)["read_body"] = read  # the gateway reads it from the module
                try:
                    found[name].append(_cpu_per_read(api, args.requests, timeout))
                finally:
                    vars(answers)["read_body"] = product
    medians = {name: round(statistics.median(values), 1) for name, values in found.items()}
    result = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, Python {platform.python_version()}",
        "requests": args.requests,
        "rounds": args.rounds,
        "cpu_us_per_read": medians,
        "deadline_cost_us": {
            "watchdog": round(medians["watchdog"] - medians["no_deadline"], 1),
            "timer_each": round(medians["timer_each"] - medians["no_deadline"], 1),
        },
    }
    print(result)
    put_result("read-deadlines", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
