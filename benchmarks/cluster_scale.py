"""kubectl spark against kubectl, side by side in one run, alternating A/B (the performance issue).

Run: .venv/bin/python benchmarks/cluster_scale.py [--sizes 1000,10000,50000] [--runs 5]
     [--core-sizes 10000,100000] [--skip-describe]

For each size an emulator (its own process) is filled with generated applications of 100 pods;
then, alternately, ``kubectl spark ls -A`` and ``kubectl get pods -A -l spark-role -o json``
(same server, same data) run as subprocesses, each one's wall time and peak RSS taken from
GNU time. Also: ``describe`` of a 2,000-executor application against kubectl's list of its pods;
start-up (``--help``, ``version``, the completion entry point) against ``kubectl version
--client``; the pure core (grouping + loss reasons + alerts) in this process, in pods/s.
Medians and ratios are printed and written to benchmarks/results/<date>-scale.json.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import shutil
import statistics
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from _docs import put_result
from _served import AS_INSTALLED, BIN, client_for, served

from kubectl_spark.core import podfacts, slim
from kubectl_spark.core.analyze import _executor, analyze
from kubectl_spark.core.inputs import Snapshot, build_index
from kubectl_spark.core.model import Executor, in_id_order
from kubectl_spark.core.node import nodes_of
from kubectl_spark.core.pod import Pod, pods_of
from kubectl_spark.knowledge import labels as spark_labels
from kubectl_spark.knowledge.clock import SystemClock
from kubectl_spark.kube.client import Connection, connect
from kubectl_spark.memory import collector_paused
from kubectl_spark.sim.generate import generate

KUBECTL = shutil.which("kubectl") or "kubectl"


GNU_TIME = "/usr/bin/time"


# Cold, as this benchmark always measured (and GNU time's peak RSS would be a warm client's,
# not the process that does the work); ``warm_beside_transfer`` measures the warm path beside the bare transfer.
COLD = {**AS_INSTALLED, "KUBECTL_SPARK_WARM": "off"}


def timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of one run, output discarded; a failure stops the benchmark.

    Peak RSS comes from GNU time, a small parent: a child forked from this (large) process
    would report this process's memory as its own high-water mark (Linux keeps it across exec).
    """
    wrapped = [GNU_TIME, "-f", "%M", *cmd] if Path(GNU_TIME).exists() else cmd
    start = time.perf_counter()
    proc = subprocess.run(
        wrapped, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False, env=env or COLD
    )
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {proc.stderr.decode()}")
    last = proc.stderr.decode().strip().splitlines()[-1:] if wrapped is not cmd else []
    rss = int(last[0]) / 1024 if last and last[0].isdigit() else float("nan")
    return wall, rss


def side_by_side(a: list[str], b: list[str], runs: int) -> dict[str, float]:
    """Alternate A and B (B first every other round) and report medians and ratios."""
    ours: list[tuple[float, float]] = []
    theirs: list[tuple[float, float]] = []
    for i in range(runs):
        order = [(a, ours), (b, theirs)] if i % 2 == 0 else [(b, theirs), (a, ours)]
        for cmd, into in order:
            into.append(timed(cmd))
    wall_a = statistics.median(w for w, _ in ours)
    wall_b = statistics.median(w for w, _ in theirs)
    rss_a = max(r for _, r in ours)
    rss_b = max(r for _, r in theirs)
    return {
        "kubectl_spark_s": round(wall_a, 3),
        "kubectl_s": round(wall_b, 3),
        "time_ratio": round(wall_a / wall_b, 2),
        "kubectl_spark_rss_mib": round(rss_a, 1),
        "kubectl_rss_mib": round(rss_b, 1),
        "rss_ratio": round(rss_a / rss_b, 2),
    }


def scale(size: int, runs: int) -> dict[str, Any]:
    with served() as kc:
        client = client_for(kc)
        generate(client, SystemClock(), apps=max(1, size // 100), pods_per_app=100)
        client.close()
        base = ["--kubeconfig", str(kc)]
        result = side_by_side(
            [str(BIN), "ls", "-A", "--no-history", *base],
            [KUBECTL, "get", "pods", "-A", "-l", "spark-role", "-o", "json", *base],
            runs,
        )
        floor = warm_beside_transfer([str(BIN), "ls", "-A", "--no-history", *base], kc, runs)
        return {
            "pods": size,
            **result,
            **floor,
            "ls_to_transfer_ratio": round(result["kubectl_spark_s"] / floor["transfer_s"], 2),
            "ls_warm_to_transfer_ratio": round(floor["ls_warm_s"] / floor["transfer_s"], 2),
            "ls_rss_to_json_ratio": round(
                result["kubectl_spark_rss_mib"] * 2**20 / floor["list_json_bytes"], 2
            ),
        }


def warm_beside_transfer(command: list[str], kubeconfig: Path, runs: int) -> dict[str, Any]:
    """``command`` answered by a warm server (kubectl_spark.warm) and the bare transfer of the
    pod list, alternated (each first every other round): medians, and the list's size.

    The server is this run's own (a private runtime directory) and is stopped after.
    """
    import signal
    import tempfile

    run = Path(tempfile.mkdtemp())
    run.chmod(0o700)
    env = {**AS_INSTALLED, "XDG_RUNTIME_DIR": str(run)}
    env.pop("KUBECTL_SPARK_WARM", None)
    servers = run / "kubectl-spark-warm"
    curl, ca = transfer_command(kubeconfig)
    try:
        timed(command, env)  # cold: starts the server
        deadline = time.monotonic() + 60
        while not list(servers.glob("*.pid")) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)
        timed(command, env)
        warm, transfer, size = [], [], 0
        for i in range(runs):
            for which in (0, 1) if i % 2 == 0 else (1, 0):
                if which == 0:
                    warm.append(timed(command, env)[0])
                    continue
                start = time.perf_counter()
                done = subprocess.run(curl, capture_output=True, text=True, check=True)
                transfer.append(time.perf_counter() - start)
                size = int(done.stdout.strip() or 0)
        return {
            "transfer_s": round(statistics.median(transfer), 3),
            "list_json_bytes": size,
            "ls_warm_s": round(statistics.median(warm), 3),
        }
    finally:
        ca.unlink()
        for pidfile in servers.glob("*.pid"):
            os.kill(int(pidfile.read_text()), signal.SIGTERM)


def transfer_command(kubeconfig: Path) -> tuple[list[str], Path]:
    """curl of the pod list: the same server and selector, no parsing (and its CA file).

    What no client of this API can beat (issue 26's floor for ``ls``); it also says the size of
    the list's JSON, against which ``ls``'s peak RSS is weighed.
    """
    import base64
    import tempfile

    import yaml

    doc = yaml.safe_load(kubeconfig.read_text())
    server = doc["clusters"][0]["cluster"]["server"]
    token = doc["users"][0]["user"]["token"]
    with tempfile.NamedTemporaryFile("wb", suffix=".pem", delete=False) as ca:
        ca.write(base64.b64decode(doc["clusters"][0]["cluster"]["certificate-authority-data"]))
    url = f"{server}/api/v1/pods?labelSelector=spark-role"
    command = [
        "curl",
        "-sS",
        "--fail",
        "--cacert",
        ca.name,
        "-H",
        f"Authorization: Bearer {token}",
        "-o",
        "/dev/null",
        "-w",
        "%{size_download}",
        url,
    ]
    return command, Path(ca.name)


def describe_2000(runs: int) -> dict[str, Any]:
    with served() as kc:
        client = client_for(kc)
        generate(client, SystemClock(), apps=1, pods_per_app=2001, namespaces=1)
        client.close()
        with connect(Connection(kubeconfig=str(kc))) as api:
            pods, _ = api.list(
                "/api/v1/namespaces/spark-0/pods", label_selector="spark-role=driver"
            )
        app_id = pods[0]["metadata"]["labels"]["spark-app-selector"]
        base = ["--kubeconfig", str(kc), "-n", "spark-0"]
        result = side_by_side(
            [str(BIN), "describe", "app-000", "--no-history", *base],
            [KUBECTL, "get", "pods", "-l", f"spark-app-selector={app_id}", "-o", "json", *base],
            runs,
        )
        return {"executors": 2000, **result}


def startup(runs: int) -> dict[str, Any]:
    reference = [KUBECTL, "version", "--client"]
    out = {}
    for name, cmd in (
        ("--help", [str(BIN), "--help"]),
        ("version", [str(BIN), "version"]),
        ("completion", [str(BIN), "__complete", "l"]),
    ):
        out[name] = side_by_side(cmd, reference, runs)
    return out


def core(sizes: list[int]) -> dict[str, Any]:
    """Grouping + loss reasons + alerts on copies of a generated 10,000-pod cluster."""
    with served() as kc:
        client = client_for(kc)
        generate(client, SystemClock(), apps=100, pods_per_app=100)
        client.close()
        with connect(Connection(kubeconfig=str(kc))) as api:
            pods, _ = api.list("/api/v1/pods", label_selector="spark-role")
            nodes, _ = api.list("/api/v1/nodes")
    out = {}
    for size in sizes:
        copies = []
        for n in range(max(1, size // len(pods))):
            for pod in pods:
                twin = copy.deepcopy(pod)
                meta = twin["metadata"]
                meta["uid"] = f"{meta['uid']}-{n}"
                meta["namespace"] = f"{meta['namespace']}-{n}"
                for ref in meta.get("ownerReferences") or []:
                    ref["uid"] = f"{ref['uid']}-{n}"
                copies.append(twin)
        out[str(size)] = _pods_per_s(Snapshot(pods=pods_of(copies[:size]), nodes=nodes_of(nodes)))
        # The timeline is built when read (describe, JSON, the TUI's detail), not by ls: this
        # row is the analysis with every application's timeline read as well.
        out[f"{size} with every timeline"] = _pods_per_s(
            Snapshot(pods=pods_of(copies[:size]), nodes=nodes_of(nodes)), timelines=True
        )
        # The pods as ls holds them: pages of 500 parsed by orjson and slimmed one by one, as
        # the client does. Their memory layout differs from the copies' (and costs the core).
        out[f"{size} as ls holds them"] = _pods_per_s(
            Snapshot(pods=_as_ls_holds(copies[:size]), nodes=nodes_of(nodes))
        )
        out[f"{size} reading fields only"] = _floor(copies[:size])
        out[f"{size} reading every field the analysis reads"] = _every_field(copies[:size])
        out[f"{size} the least analysis"] = _least_analysis(copies[:size], nodes)
        # Every driver pod gone (deleted, or a namespace's drivers cleaned up): executors are
        # placed by app id and time, which must stay a lookup per executor, not a scan.
        executors = [p for p in copies[:size] if p["metadata"]["labels"]["spark-role"] != "driver"]
        out[f"{size} drivers gone"] = _pods_per_s(
            Snapshot(pods=pods_of(executors), nodes=nodes_of(nodes))
        )
    return out


def _as_ls_holds(pods: list[dict[str, Any]]) -> list[Any]:
    """The pods as ``ls`` holds them: pages of 500 typed and trimmed as ``kube.paging`` reads
    them (``core.slim.pod_page``), the values they repeat shared across the list."""
    pages = [orjson.dumps({"items": pods[i : i + 500]}) for i in range(0, len(pods), 500)]
    held: list[Any] = []
    shared: dict[object, object] = {}
    with collector_paused():
        for page in pages:
            doc = slim.pod_page(page, shared)
            assert doc is not None, "a generated page the decoder refuses"
            held.extend(doc["items"])  # type: ignore[arg-type]
    return held


def _pods_per_s(snapshot: Snapshot, *, timelines: bool = False) -> dict[str, Any]:
    times = []
    for _ in range(3):
        start = time.perf_counter()
        result = analyze(snapshot)
        if timelines:
            for app in result.apps:
                len(app.history)
        del result  # freeing the answer is part of its cost
        times.append(time.perf_counter() - start)
    best = statistics.median(times)
    return {"seconds": round(best, 3), "pods_per_s": round(len(snapshot.pods) / best)}


def _floor(pods: list[dict[str, Any]]) -> dict[str, Any]:
    """What any grouping pays: reading, from every pod, the seven fields it cannot do without.

    Measured on the same pods in the same run as the core, this is the bound the core's pods/s
    is held against: at 200,000 pods/s the whole analysis has 5 µs per pod, and most of the
    time of this loop is waiting for memory (each pod's dicts are scattered over the heap).
    """

    def fields(pod: dict[str, Any]) -> tuple[Any, ...]:
        meta, status = pod["metadata"], pod["status"]
        labels = meta["labels"]
        return (
            meta["name"],
            meta["uid"],
            meta["namespace"],
            meta.get("ownerReferences"),
            labels.get("spark-role"),
            labels.get("spark-app-selector"),
            status["phase"],
        )

    return _reading_rate(pods, fields)


LABELS_READ = (
    spark_labels.ROLE,
    spark_labels.APP_ID,
    spark_labels.EXEC_ID,
    spark_labels.APP_NAME,
    spark_labels.OPERATOR_APP,
    spark_labels.SUBMISSION,
    spark_labels.FENCE_LABEL,
    spark_labels.INACTIVE,
)


def _every_field(pods: list[dict[str, Any]]) -> dict[str, Any]:
    """Reading every field ``podfacts.facts`` reads of a pod, and building nothing.

    The analysis cannot know a pod without these (labels, owner, phase, container states, the
    signals of a disruption): this is the bound that no change to what is built from them can
    pass. At 200,000 pods/s the whole analysis has 5 µs per pod.
    """

    def fields(pod: dict[str, Any]) -> None:
        meta, status, spec = pod["metadata"], pod["status"], pod["spec"]
        labels = meta["labels"]
        (meta["name"], meta["uid"], meta["namespace"], meta["creationTimestamp"])
        (status["phase"], status.get("reason"), spec.get("nodeName"))
        (meta.get("deletionTimestamp"), meta.get("annotations"))
        for key in LABELS_READ:
            labels.get(key)
        for ref in meta.get("ownerReferences") or ():
            if ref.get("controller") is True:
                (ref["kind"], ref["uid"], ref["name"])
        for container in status.get("containerStatuses") or ():
            (container.get("restartCount"), container.get("name"), container.get("state"))
        status.get("initContainerStatuses")
        for condition in status.get("conditions") or ():
            condition.get("type")

    return _reading_rate(pods, fields)


def _least_analysis(pods: list[dict[str, Any]], nodes: list[dict[str, Any]]) -> dict[str, Any]:
    """The least any analysis does: one pass, each executor's answer, nothing else.

    Every field ``podfacts.facts`` reads is read in line (no record per pod); a quiet executor's
    answer is built at once, any other goes through the core's own classifier (it has evidence
    to find: the failed executors); the answers are grouped by owner and sorted by id. No
    driver, no attempt or application state, no alerts, no Spark view: the real core does all
    of these on top, so if this pass alone misses 200,000 pods/s, no rearrangement of the
    core's layers reaches it on this machine.
    """
    snapshot = Snapshot(pods=pods_of(pods), nodes=nodes_of(nodes))
    index = build_index(snapshot)
    wanted = spark_labels.SPARK_CONTAINERS

    def one_pass() -> None:
        by_owner: dict[str, list[Executor]] = {}
        for pod in pods:
            meta, status = pod["metadata"], pod["status"]
            labels = meta["labels"]
            name, uid, created = meta["name"], meta["uid"], meta["creationTimestamp"]
            phase, node = status["phase"], pod["spec"].get("nodeName")
            role, exec_id = labels.get(spark_labels.ROLE, ""), labels.get(spark_labels.EXEC_ID, "")
            labels.get(spark_labels.APP_ID)
            for key in LABELS_READ[3:6]:  # app name, operator labels
                labels.get(key)
            set_aside = "true" in (
                labels.get(spark_labels.FENCE_LABEL),
                labels.get(spark_labels.INACTIVE),
            )
            owner = ""
            for ref in meta.get("ownerReferences") or ():
                if ref.get("controller") is True:
                    owner = ref["uid"]
                    break
            quiet = phase == "Running" and not meta.get("deletionTimestamp")
            quiet = quiet and status.get("reason") in (None, "") and not set_aside
            restarts, chosen = 0, None
            statuses = status.get("containerStatuses") or ()
            for container in statuses:
                restarts += container.get("restartCount") or 0
                if chosen is None and container.get("name") in wanted:
                    chosen = container
            if statuses and "running" not in ((chosen or statuses[0]).get("state") or ()):
                quiet = False
            status.get("initContainerStatuses")
            if pod.get("source", "cluster") != "cluster":  # a kept copy (``Pod.source``)
                quiet = False
            for condition in status.get("conditions") or ():
                if condition.get("type") == "DisruptionTarget":
                    quiet = False
            if role == "driver":
                continue
            if quiet:
                answer = Executor(
                    exec_id or "?", name, uid, node, phase, "Running", restarts, None, created
                )
            else:
                f = podfacts.facts(Pod.of(pod))
                answer = _executor(f, index.node(f.node), index, None, False)
            by_owner.setdefault(owner, []).append(answer)
        for answers in by_owner.values():
            in_id_order(answers)

    return _reading_rate([None], lambda _: one_pass(), len(pods))


def _reading_rate(pods: list[Any], read: Any, count: int | None = None) -> dict[str, Any]:
    """``read`` called on every pod, the median of three passes, in pods/s (of ``count``)."""
    times = []
    with collector_paused():  # as the core runs
        for _ in range(3):
            start = time.perf_counter()
            for pod in pods:
                read(pod)
            times.append(time.perf_counter() - start)
    best = statistics.median(times)
    return {"seconds": round(best, 3), "pods_per_s": round((count or len(pods)) / best)}


def kubectl_version() -> str:
    out = subprocess.run(
        [KUBECTL, "version", "--client", "-o", "json"], capture_output=True, text=True, check=True
    ).stdout
    return str(json.loads(out)["clientVersion"]["gitVersion"])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--core-sizes", default="10000,100000")
    parser.add_argument("--skip-describe", action="store_true")
    parser.add_argument("--skip-startup", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    result: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, CPython {platform.python_version()}, {os.cpu_count()} cores",
        "kubectl": kubectl_version(),
        "targets": {
            "ls_time_ratio": 1.0,
            "ls_rss_ratio_at_50000": 2.0,
            "startup_time_ratio": 2.0,
            "core_pods_per_s": 200000,
            "ls_to_transfer_ratio": 2.0,  # issue 26: at 10,000 and 50,000 pods
            "ls_rss_to_json_ratio_at_50000": 2.0,
        },
    }
    if not args.skip_startup:
        result["startup"] = startup(max(10, args.runs * 2))
        print(json.dumps(result["startup"], indent=1), flush=True)
    result["core"] = core([int(s) for s in args.core_sizes.split(",") if s])
    print(json.dumps(result["core"], indent=1), flush=True)
    result["ls"] = []
    for size in sizes:
        result["ls"].append(scale(size, args.runs if size < 50000 else max(3, args.runs // 2)))
        print(json.dumps(result["ls"][-1]), flush=True)
    if not args.skip_describe:
        result["describe"] = describe_2000(args.runs)
        print(json.dumps(result["describe"]), flush=True)
    put_result("scale", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
