"""Generate the 100-application, 10,000-pod cluster the benchmarks use, and time it (< 1 min).

Run: .venv/bin/python benchmarks/generate_10k.py [--apps 100] [--pods-per-app 100]
"""

from __future__ import annotations

import argparse
import time

from _served import client_for, served

from kubectl_spark.knowledge.clock import SystemClock
from kubectl_spark.sim.generate import generate


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--apps", type=int, default=100)
    parser.add_argument("--pods-per-app", type=int, default=100)
    args = parser.parse_args()
    with served() as kubeconfig:
        client = client_for(kubeconfig)
        start = time.monotonic()
        count = generate(client, SystemClock(), apps=args.apps, pods_per_app=args.pods_per_app)
        elapsed = time.monotonic() - start
        listed = len(client.list("/api/v1/pods"))
        print(
            f"generated {count} pods in {args.apps} applications in {elapsed:.1f} s (listed {listed})"
        )
        client.close()
        return 0 if elapsed < 60 and listed == count else 1


if __name__ == "__main__":
    raise SystemExit(main())
