"""Every target of interactive speed (issue 26) from one run: one table, each target met or not.

Run: .venv/bin/python benchmarks/targets.py [--update-docs] [--quick]

One after the other on this machine (never beside the test suite or another benchmark), each
in its own process as its own script measures it:

- ``interactive.py``: the demo's cluster; ``ls -A``, ``describe``, ``history`` and ``events``
  as people run them (the warm process answering), pairs alternated with ``kubectl get pods -A
  -l spark-role``; target each ≤ 3x.
- ``cluster_scale.py --sizes 10000,50000``: ``ls -A`` warm alternated with the bare transfer of
  the same pod list (``curl``, same server and selector, no parsing), target ≤ 2x; the peak RSS
  of a cold ``ls -A`` (GNU time) against the list's JSON at 50,000 pods, target ≤ 2x.
- ``tui_10k.py --apps 500``: the TUI at 50,000 pods: first paint ≤ 3 s, event → screen p95
  ≤ 200 ms while 20 other pods change a second, RSS ≤ 500 MiB.

Each script writes its own result to benchmarks/results/ as always; this one reads them back,
prints the table and writes ``<date>-targets.json``. ``--update-docs`` puts the table, with the
machine and the date, in the README and docs/performance.md (between their perf:targets
markers), and ``interactive.py`` its own table there. ``--quick`` (fewer rounds, 10,000 pods only, no TUI) is for trying the script, never
for the docs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _docs import put_table

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def _run(script: str, *args: str) -> None:
    print(f"# {script} {' '.join(args)}", flush=True)
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), *args], check=True)


def _written(kind: str, since: float) -> dict[str, Any]:
    """The result ``kind`` (interactive, scale, tui-50k) a script wrote after ``since``."""
    found = [p for p in RESULTS.glob(f"*-{kind}.json") if p.stat().st_mtime >= since]
    if not found:
        raise RuntimeError(f"no {kind} result was written")
    return dict(json.loads(max(found, key=lambda p: p.stat().st_mtime).read_text()))


def _row(what: str, measured: str, target: str, met: bool) -> dict[str, Any]:
    return {"target": what, "measured": measured, "limit": target, "met": met}


def measure(quick: bool, update_docs: bool) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    since = time.time() - 1
    docs = ["--update-docs"] if update_docs and not quick else []  # its own table, in the docs
    _run("interactive.py", "--rounds", "3" if quick else "9", *docs)
    small = _written("interactive", since)
    for r in small["rows"][:4]:  # the commands as people run them (warm)
        rows.append(
            _row(
                f"`{r['command']}` / `kubectl get pods -A -l spark-role` (demo cluster)",
                f"{r['ratio']}x ({r['ours_s']} s / {r['kubectl_s']} s)",
                f"≤ {small['target_ratio']:g}x",
                r["ratio"] <= small["target_ratio"],
            )
        )
    since = time.time() - 1
    sizes = "10000" if quick else "10000,50000"
    _run(
        "cluster_scale.py",
        *("--sizes", sizes, "--runs", "3" if quick else "5"),
        *("--skip-describe", "--skip-startup", "--core-sizes", ""),
    )
    for ls in _written("scale", since)["ls"]:
        pods = f"{ls['pods']:,}"
        rows.append(
            _row(
                f"`ls -A` warm / bare transfer of the pod list (curl), {pods} pods",
                f"{ls['ls_warm_to_transfer_ratio']}x ({ls['ls_warm_s']} s / {ls['transfer_s']} s)",
                "≤ 2x",
                ls["ls_warm_to_transfer_ratio"] <= 2.0,
            )
        )
        if ls["pods"] >= 50_000:
            mib = ls["list_json_bytes"] / 2**20
            rows.append(
                _row(
                    f"`ls -A` peak RSS / the list's JSON, {pods} pods",
                    f"{ls['ls_rss_to_json_ratio']}x ({ls['kubectl_spark_rss_mib']} MiB / "
                    f"{mib:.1f} MiB)",
                    "≤ 2x",
                    ls["ls_rss_to_json_ratio"] <= 2.0,
                )
            )
    if quick:
        return rows
    since = time.time() - 1
    _run("tui_10k.py", "--apps", "500", "--pods-per-app", "100")
    tui = _written("tui-50k", since)
    churn = f"{tui['churn_pods_per_s']} pods/s changing"
    rows += [
        _row(
            "TUI first paint, 50,000 pods",
            f"{tui['first_paint_s']} s",
            "≤ 3 s",
            tui["first_paint_s"] <= 3.0,
        ),
        _row(
            f"TUI watch event → screen p95, 50,000 pods ({churn})",
            f"{tui['event_to_screen_p95_ms']} ms (median {tui['event_to_screen_median_ms']} ms)",
            "≤ 200 ms",
            tui["event_to_screen_p95_ms"] <= 200 and tui["churn_pods_per_s"] >= 19.0,
        ),
        _row("TUI RSS, 50,000 pods", f"{tui['rss_mib']} MiB", "≤ 500 MiB", tui["rss_mib"] <= 500),
    ]
    return rows


def table(result: dict[str, Any]) -> str:
    lines = [
        f"| target ({result['machine']}; {result['date'][:10]}; one run) | measured | limit | met |",
        "| --- | --- | --- | --- |",
        *(
            f"| {r['target']} | {r['measured']} | {r['limit']} | {'✓' if r['met'] else '✗'} |"
            for r in result["rows"]
        ),
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--update-docs", action="store_true")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rows = measure(args.quick, args.update_docs)
    cores = os.cpu_count()
    result = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {cores} cores, Python {platform.python_version()}",
        "quick": args.quick,
        "rows": rows,
    }
    (RESULTS / f"{result['date'][:10]}-targets.json").write_text(
        json.dumps(result, indent=2) + "\n"
    )
    print(table(result))
    if args.update_docs and not args.quick:
        put_table("targets", table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
