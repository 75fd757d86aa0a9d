"""Interactive speed on a small cluster: each command beside ``kubectl get pods``, pairs alternated.

Run: .venv/bin/python benchmarks/interactive.py [--rounds N] [--update-docs]

The cluster is the demo's (``mixed`` played to its end, then still: a few dozen pods in three
namespaces), served by the emulator in its own process. Each round runs ``kubectl get pods -A
-l spark-role`` and then one ``kubectl spark`` command, so both see the same machine load;
the table gives medians and their ratio (issue 26's target: each at most 3x). The first rows
are the commands as people run them: the first reading command started the warm server
(kubectl_spark.warm, its socket in this run's own runtime directory) and every measured one is
answered by a fork of it. Then the same commands cold (``KUBECTL_SPARK_WARM=off``: what the
first command after ten idle minutes costs), and the floor a cold start cannot go below while
it uses the ``kubernetes`` package to authenticate: a bare interpreter, and one that imports
only what ``ls`` imports of the library (its kubeconfig and auth modules: urllib3, requests,
oauthlib, yaml, dateutil). And the same ``ls`` with the fast paths off
(``KUBECTL_SPARK_EAGER_KUBERNETES=1``: cold, the whole library and command tree imported),
which is where the product stood before them.

Written to benchmarks/results/<date>-interactive.json; --update-docs puts the table in
docs/performance.md and the README (between their perf:interactive markers).

``--latency SECONDS`` puts the API server at a distance: every answer, to kubectl and to
kubectl spark alike, comes SECONDS late (the tests' fault proxy, plain HTTP, in this process).
What a command costs there is mostly its round trips one after the other: kubectl's one list
against ``ls``'s pods, eight optional lists (read together since 2026-12-03), the Services
list that finds a recorder, and Spark's executor lists. Written to
<date>-interactive-latency.json; never put in the docs' table.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from _docs import put_result, put_table
from _served import AS_INSTALLED, BIN

ROOT = Path(__file__).resolve().parents[1]
TARGET = 3.0


def timed(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
    )
    return time.perf_counter() - start


def warm_server_ready(run: Path) -> None:
    deadline = time.monotonic() + 60
    while not list((run / "kubectl-spark-warm").glob("*.pid")):
        if time.monotonic() > deadline:
            raise RuntimeError("no warm server started")
        time.sleep(0.1)
    time.sleep(1.0)  # its imports done: it listens once they are


def stop_warm_servers(run: Path) -> None:
    for pidfile in (run / "kubectl-spark-warm").glob("*.pid"):
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(pidfile.read_text()), signal.SIGTERM)


@contextlib.contextmanager
def at_a_distance(kubeconfig: Path, latency: float) -> Iterator[Path]:
    """A kubeconfig that reaches the same server through a proxy answering ``latency`` late.

    The proxy speaks HTTPS (its own throw-away CA): kubectl sends no bearer token over HTTP.
    """
    import ssl

    import trustme
    import yaml

    sys.path.insert(0, str(ROOT))
    from kubectl_spark.cluster.apiserver.embedded import ADMIN_USER, kubeconfig_document
    from tests.faultproxy import Fault, FaultProxy

    doc = yaml.safe_load(kubeconfig.read_text())
    server = doc["clusters"][0]["cluster"]["server"]
    token = doc["users"][0]["user"]["token"]
    ca = trustme.CA()
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(tls)
    with FaultProxy(server, tls=tls) as proxy:
        proxy.faults = [Fault("late", "", "", seconds=latency)]
        distant = kubeconfig.with_name("distant.yaml")
        distant.write_text(
            yaml.safe_dump(
                kubeconfig_document(proxy.url, ca.cert_pem.bytes(), ADMIN_USER, token, "default")
            )
        )
        yield distant


def machine() -> str:
    cores = os.cpu_count() or 0
    return f"{platform.machine()}, {cores} cores, Python {platform.python_version()}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--update-docs", action="store_true")
    parser.add_argument("--latency", type=float, default=0.0)
    args = parser.parse_args()
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        print("kubectl is needed on PATH", file=sys.stderr)
        return 2
    kubeconfig = Path(tempfile.mkdtemp()) / "kc.yaml"
    run = kubeconfig.parent / "run"  # the warm server's socket, this run's own
    run.mkdir(mode=0o700)
    server = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "_scenario_server.py"),
            "mixed",
            str(kubeconfig),
        ],
        stdout=subprocess.DEVNULL,
    )
    distance = contextlib.ExitStack()
    try:
        while not kubeconfig.exists():
            if server.poll() is not None:
                raise RuntimeError("the scenario server did not start")
            time.sleep(0.2)
        if args.latency:
            kubeconfig = distance.enter_context(at_a_distance(kubeconfig, args.latency))
        env = {**AS_INSTALLED, "KUBECONFIG": str(kubeconfig), "XDG_RUNTIME_DIR": str(run)}
        env.pop("KUBECTL_SPARK_WARM", None)  # the default: a warm server answers
        env.pop("KUBECTL_SPARK_EAGER_KUBERNETES", None)
        eager = {**env, "KUBECTL_SPARK_EAGER_KUBERNETES": "1"}
        cold = {**env, "KUBECTL_SPARK_WARM": "off"}
        base = [kubectl, "get", "pods", "-A", "-l", "spark-role"]
        commands = [
            ("ls -A", ["ls", "-A"]),
            ("describe pi -n spark-dev", ["describe", "pi", "-n", "spark-dev"]),
            ("history pi -n spark-dev", ["history", "pi", "-n", "spark-dev"]),
            ("events pi -n spark-dev", ["events", "pi", "-n", "spark-dev"]),
        ]
        rows: list[tuple[str, list[str], dict[str, str]]] = [
            *((name, [str(BIN), *argv], env) for name, argv in commands),
            *(
                (f"{name}, cold (no warm server yet)", [str(BIN), *argv], cold)
                for name, argv in commands
            ),
            ("ls -A, fast paths off (before)", [str(BIN), "ls", "-A"], eager),
            ("floor: python -c pass", [sys.executable, "-c", "pass"], env),
            (
                "floor: python importing the library's auth modules",
                [sys.executable, "-c", "import kubectl_spark.kube, kubernetes.config, orjson"],
                env,
            ),
        ]
        for _, command, row_env in rows:  # warm: compiled files written, caches filled
            timed(command, row_env)
        timed(base, env)
        warm_server_ready(run)  # the first reading command started it
        results = []
        for name, command, row_env in rows:
            theirs, ours = [], []
            for _ in range(args.rounds):
                theirs.append(timed(base, env))
                ours.append(timed(command, row_env))
            a, b = statistics.median(theirs), statistics.median(ours)
            results.append(
                {
                    "command": name,
                    "kubectl_s": round(a, 3),
                    "ours_s": round(b, 3),
                    "ratio": round(b / a, 2),
                }
            )
            print(f"{name:<55} kubectl {a:.3f} s   ours {b:.3f} s   {b / a:.1f}x", flush=True)
    finally:
        distance.close()
        server.terminate()
        server.wait()
        stop_warm_servers(run)
    result = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "rounds": args.rounds,
        "latency_s": args.latency,
        "baseline": "kubectl get pods -A -l spark-role",
        "target_ratio": TARGET,
        "rows": results,
    }
    suffix = "-latency" if args.latency else ""
    put_result(f"interactive{suffix}", result)
    if args.update_docs and not args.latency:
        table = "\n".join(
            [
                (
                    f"| command (demo cluster; {result['machine']}; {result['date'][:10]}; "
                    f"medians of {args.rounds}) | kubectl get pods | kubectl spark | "
                    f"ratio (target ≤ {TARGET:g}) |"
                ),
                "| --- | --- | --- | --- |",
                *(
                    f"| `{r['command']}` | {r['kubectl_s']} s | {r['ours_s']} s | {r['ratio']}x |"
                    for r in results
                ),
            ]
        )
        put_table("interactive", table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
