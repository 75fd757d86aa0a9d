"""Create 10,000 realistic Spark pods in the emulator through the API, then list them, paged.

Run: .venv/bin/python benchmarks/emulator_10k_pods.py [--pods N] [--update-readme]

The emulator runs as its own process (`kubectl-spark demo --serve`) so its peak RSS (VmHWM) is
its own. Lists are timed side by side: the Python client reading raw pages (limit 500) parsed with
orjson, and the real kubectl (`get pods -A -o json`, which pages at 500 too).
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from _docs import put_result, put_table
from kubernetes import config

ROOT = Path(__file__).resolve().parents[1]


def driver_pod(app: int) -> dict[str, Any]:
    pod = spark_pod(app, 0, "")
    pod["metadata"]["name"] = f"app{app}-driver"
    pod["metadata"]["labels"]["spark-role"] = "driver"
    del pod["metadata"]["labels"]["spark-exec-id"], pod["metadata"]["ownerReferences"]
    return pod


def spark_pod(app: int, i: int, driver_uid: str) -> dict[str, Any]:
    app_id = f"spark-{app:032x}"
    name = f"app{app}-{app_id[-8:]}-exec-{i}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {
                "spark-app-selector": app_id,
                "spark-role": "executor",
                "spark-exec-id": str(i),
                "spark-app-name": f"app{app}",
                "spark-version": "3.5.1",
                "spark-exec-resourceprofile-id": "0",
            },
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": f"app{app}-driver",
                    "uid": driver_uid,
                    "controller": True,
                }
            ],
        },
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": "spark-kubernetes-executor",
                    "image": "apache/spark:3.5.1",
                    "args": ["executor"],
                    "env": [
                        {"name": k, "value": v}
                        for k, v in {
                            "SPARK_USER": "spark",
                            "SPARK_DRIVER_URL": f"spark://CoarseGrainedScheduler@app{app}-driver-svc.default.svc:7078",
                            "SPARK_EXECUTOR_CORES": "2",
                            "SPARK_EXECUTOR_MEMORY": "4g",
                            "SPARK_APPLICATION_ID": app_id,
                            "SPARK_CONF_DIR": "/opt/spark/conf",
                            "SPARK_EXECUTOR_ID": str(i),
                            "SPARK_JAVA_OPT_0": "-Dspark.driver.port=7078",
                        }.items()
                    ],
                    "resources": {
                        "requests": {"cpu": "2", "memory": "4505Mi"},
                        "limits": {"memory": "4505Mi"},
                    },
                    "ports": [{"name": "blockmanager", "containerPort": 7079}],
                    "volumeMounts": [
                        {"name": "spark-local-dir-1", "mountPath": "/var/data/spark-1"},
                        {"name": "spark-conf-volume-exec", "mountPath": "/opt/spark/conf"},
                    ],
                }
            ],
            "volumes": [
                {"name": "spark-local-dir-1", "emptyDir": {}},
                {
                    "name": "spark-conf-volume-exec",
                    "configMap": {"name": f"spark-exec-{app:016x}-conf-map"},
                },
            ],
        },
    }


def rss_kib(pid: int) -> tuple[int, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--update-readme", action="store_true")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp())
    kubeconfig = tmp / "kubeconfig"
    server = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "kubectl-spark"),
            "demo",
            "--serve",
            "--kubeconfig",
            str(kubeconfig),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while not kubeconfig.exists():
            if time.monotonic() > deadline:
                raise SystemExit("emulator did not start")
            time.sleep(0.1)
        clients = [config.new_client_from_config(config_file=str(kubeconfig)) for _ in range(4)]
        drivers = {}
        for a in range(100):
            resp = clients[0].call_api(
                "/api/v1/namespaces/default/pods",
                "POST",
                body=driver_pod(a),
                auth_settings=["BearerToken"],
                _preload_content=False,
                header_params={"Content-Type": "application/json", "Accept": "application/json"},
            )
            drivers[a] = orjson.loads((resp[0] if isinstance(resp, tuple) else resp).data)[
                "metadata"
            ]["uid"]
        per_app = args.pods // 100 - 1
        pods = [spark_pod(a, i, drivers[a]) for a in range(100) for i in range(1, per_app + 1)]

        def create(batch: tuple[int, list[dict[str, Any]]]) -> None:
            api = clients[batch[0]]
            for pod in batch[1]:
                api.call_api(
                    "/api/v1/namespaces/default/pods",
                    "POST",
                    body=pod,
                    auth_settings=["BearerToken"],
                    header_params={
                        "Content-Type": "application/json",
                        "Accept": "application/json",
                    },
                    _preload_content=False,
                )

        t0 = time.monotonic()
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(create, [(k, pods[k::4]) for k in range(4)]))
        create_s = time.monotonic() - t0

        def list_client() -> int:
            api = clients[0]
            token, count = "", 0
            while True:
                query = [("limit", 500)] + ([("continue", token)] if token else [])
                resp = api.call_api(
                    "/api/v1/pods",
                    "GET",
                    query_params=query,
                    auth_settings=["BearerToken"],
                    header_params={"Accept": "application/json"},
                    _preload_content=False,
                )
                raw = resp[0] if isinstance(resp, tuple) else resp
                doc = orjson.loads(raw.data)
                count += len(doc["items"])
                token = doc["metadata"].get("continue", "")
                if not token:
                    return count

        kubectl = shutil.which("kubectl") or ""

        def list_kubectl() -> int:
            out = subprocess.run(
                [kubectl, "--kubeconfig", str(kubeconfig), "get", "pods", "-A", "-o", "json"],
                capture_output=True,
                check=True,
                env={"HOME": str(tmp), "PATH": "/usr/bin:/bin"},
            ).stdout
            return len(orjson.loads(out)["items"])

        client_times, kubectl_times = [], []
        for _ in range(args.rounds):  # alternate A/B in one run
            t = time.monotonic()
            assert list_client() == len(pods) + len(drivers)
            client_times.append(time.monotonic() - t)
            if kubectl:
                t = time.monotonic()
                assert list_kubectl() == len(pods) + len(drivers)
                kubectl_times.append(time.monotonic() - t)
        rss, hwm = rss_kib(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=30)
    result: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}, "
        f"{__import__('os').cpu_count()} cores",
        "pods": len(pods) + len(drivers),
        "create_seconds": round(create_s, 2),
        "list_paged_python_client_median_s": round(statistics.median(client_times), 3),
        "list_kubectl_get_pods_json_median_s": round(statistics.median(kubectl_times), 3)
        if kubectl_times
        else None,
        "emulator_rss_mib": round(rss / 1024, 1),
        "emulator_peak_rss_mib": round(hwm / 1024, 1),
    }
    print(json.dumps(result, indent=2))
    put_result("emulator", result)
    if args.update_readme:
        put_table(
            "emulator",
            f"| measure ({result['pods']:,} pods, {result['machine']}, {result['date'][:10]}) | value |\n| --- | --- |\n"
            f"| create through the API (4 client threads) | {result['create_seconds']} s |\n"
            f"| list all, paged by 500, Python client + orjson (median of {args.rounds}) | {result['list_paged_python_client_median_s']} s |\n"
            f"| `kubectl get pods -A -o json` (same server, median of {args.rounds}) | {result['list_kubectl_get_pods_json_median_s']} s |\n"
            f"| emulator RSS after the run / peak | {result['emulator_rss_mib']} / {result['emulator_peak_rss_mib']} MiB |",
        )
    return 0 if result["emulator_peak_rss_mib"] < 1024 else 1


if __name__ == "__main__":
    raise SystemExit(main())
