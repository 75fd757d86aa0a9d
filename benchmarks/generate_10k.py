"""Generate the 100-application, 10,000-pod cluster the benchmarks use, and time it (< 1 min).

Run: .venv/bin/python benchmarks/generate_10k.py [--apps 100] [--pods-per-app 100]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kubectl_spark.cluster.clock import SystemClock  # noqa: E402
from kubectl_spark.sim.client import Client  # noqa: E402
from kubectl_spark.sim.generate import generate  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--apps", type=int, default=100)
    parser.add_argument("--pods-per-app", type=int, default=100)
    args = parser.parse_args()
    import base64
    import subprocess

    tmp = Path(tempfile.mkdtemp())
    kubeconfig = tmp / "kc.yaml"
    server = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "kubectl-spark"),
            "demo",
            "--serve",
            "--scenario",
            "empty",
            "--kubeconfig",
            str(kubeconfig),
        ],
        stdout=subprocess.DEVNULL,
    )
    try:
        while not kubeconfig.exists():
            time.sleep(0.1)
        doc = yaml.safe_load(kubeconfig.read_text())
        cluster, user = doc["clusters"][0]["cluster"], doc["users"][0]["user"]
        client = Client(
            cluster["server"],
            user["token"],
            base64.b64decode(cluster["certificate-authority-data"]),
        )
        start = time.monotonic()
        count = generate(client, SystemClock(), apps=args.apps, pods_per_app=args.pods_per_app)
        elapsed = time.monotonic() - start
        listed = len(client.list("/api/v1/pods"))
        print(
            f"generated {count} pods in {args.apps} applications in {elapsed:.1f} s (listed {listed})"
        )
        client.close()
        return 0 if elapsed < 60 and listed == count else 1
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    raise SystemExit(main())
