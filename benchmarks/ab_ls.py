"""Two builds of the product side by side: warm ``ls -A`` of each, and the bare transfer.

Run: .venv/bin/python benchmarks/ab_ls.py --before /path/to/other/.venv/bin/kubectl-spark
     [--pods 10000] [--rounds 15] [--cold-rounds 5]

A change to how ``ls`` reads a large list is judged against the code before it, measured in one
run against one emulator: this machine's speed moves by a fifth from one spell to the next, so
two tables from two runs cannot tell a change of a few percent (docs/performance.md). The other
build is installed in a checkout of its own (``git worktree add``, a venv, ``pip install -e``);
each build runs against its own warm server (the servers are named by their package's files),
the three commands in turn, the order rotated each round. Cold runs, alternated the same way,
give each build's peak RSS. Written to ``benchmarks/results/<date>-ab-ls-<pods>[-<label>].json``.
"""

from __future__ import annotations

import argparse
import os
import platform
import signal
import statistics
import subprocess
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _docs import put_result
from _served import AS_INSTALLED, BIN, client_for, served
from cluster_scale import timed, transfer_command

from kubectl_spark.knowledge.clock import SystemClock
from kubectl_spark.sim.generate import generate


def _warm_env() -> tuple[dict[str, str], Path]:
    """An environment with a private runtime directory: its warm servers are this run's own."""
    run = Path(tempfile.mkdtemp())
    run.chmod(0o700)
    env = {**AS_INSTALLED, "XDG_RUNTIME_DIR": str(run)}
    env.pop("KUBECTL_SPARK_WARM", None)
    return env, run / "kubectl-spark-warm"


def _started(command: list[str], env: dict[str, str], servers: Path, count: int) -> None:
    """Run ``command`` cold once, which starts its build's server, and wait until it serves."""
    timed(command, env)
    deadline = time.monotonic() + 60
    while len(list(servers.glob("*.pid"))) < count and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)
    timed(command, env)


def compare(before: Path, pods: int, rounds: int, cold_rounds: int) -> dict[str, Any]:
    with served() as kubeconfig:
        client = client_for(kubeconfig)
        generate(client, SystemClock(), apps=max(1, pods // 100), pods_per_app=100)
        client.close()
        args = ["ls", "-A", "--no-history", "--kubeconfig", str(kubeconfig)]
        builds = {"before": [str(before), *args], "after": [str(BIN), *args]}
        env, servers = _warm_env()
        curl, ca = transfer_command(kubeconfig)
        try:
            for count, command in enumerate(builds.values(), start=1):
                _started(command, env, servers, count)
            warm: dict[str, list[float]] = {name: [] for name in (*builds, "transfer")}
            order = [*builds, "transfer"]
            for i in range(rounds):
                for name in order[i % 3 :] + order[: i % 3]:
                    if name == "transfer":
                        start = time.perf_counter()
                        subprocess.run(curl, capture_output=True, check=True)
                        warm[name].append(time.perf_counter() - start)
                    else:
                        warm[name].append(timed(builds[name], env)[0])
            cold_env = {**AS_INSTALLED, "KUBECTL_SPARK_WARM": "off"}
            rss: dict[str, list[float]] = {name: [] for name in builds}
            for i in range(cold_rounds):
                for name in (*builds,)[:: 1 if i % 2 == 0 else -1]:
                    rss[name].append(timed(builds[name], cold_env)[1])
        finally:
            ca.unlink()
            for pidfile in servers.glob("*.pid"):
                os.kill(int(pidfile.read_text()), signal.SIGTERM)
    transfer = statistics.median(warm["transfer"])
    return {
        "pods": pods,
        "rounds": rounds,
        "transfer_s": round(transfer, 3),
        **{
            name: {
                "ls_warm_s": round(statistics.median(warm[name]), 3),
                "ls_warm_to_transfer_ratio": round(statistics.median(warm[name]) / transfer, 2),
                "cold_peak_rss_mib_median": round(statistics.median(rss[name]), 1),
            }
            for name in builds
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=Path, required=True, help="the other build's binary")
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--cold-rounds", type=int, default=5)
    parser.add_argument("--label", default="", help="what is compared, in the result's name")
    args = parser.parse_args()
    result = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "before_binary": str(args.before),
        "label": args.label,
        **compare(args.before, args.pods, args.rounds, args.cold_rounds),
    }
    print(result)
    put_result(f"ab-ls-{args.pods}" + (f"-{args.label}" if args.label else ""), result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
