"""Shared by the benchmarks that compare two ways of one read in one client.

Each measures in a child process of its own (``SCRIPT --rounds N --measure KUBECONFIG`` prints
one JSON object), so that what the parent runs beside it (an emulator, a proxy putting the
server at a distance) is not counted in the client's CPU; the runs are written with the
machine and the date, and the run fails when two ways' answers differed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _docs import put_result
from interactive import machine


def arguments(rounds: int) -> argparse.ArgumentParser:
    """The parser of such a benchmark: ``--rounds`` (``rounds`` by default) and the child's."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # the child: a kubeconfig
    return parser


def answered_as_child(args: argparse.Namespace, measure: Callable[[str, int], Any]) -> bool:
    """In the child (``--measure KUBECONFIG``): print what ``measure`` found, and say so."""
    if not args.measure:
        return False
    print(json.dumps(measure(args.measure, args.rounds)))
    return True


def measured(script: str, rounds: int, kubeconfig: Path, ways: tuple[str, str]) -> dict[str, Any]:
    """What ``script``'s child measured against ``kubeconfig``, with ``<one>_to_<other>``.

    That is the first way's seconds (``<one>_s``) over the second's.
    """
    done = subprocess.run(
        [sys.executable, script, "--rounds", str(rounds), "--measure", str(kubeconfig)],
        capture_output=True,
        text=True,
        check=True,
    )
    found: dict[str, Any] = json.loads(done.stdout)
    one, other = ways
    return {**found, f"{one}_to_{other}": round(found[f"{one}_s"] / found[f"{other}_s"], 2)}


def written(kind: str, rounds: int, runs: list[dict[str, Any]]) -> int:
    """Print and write the runs (``benchmarks/results/<date>-<kind>.json``); 0 when all agreed."""
    result = {
        "date": datetime.now(UTC).date().isoformat(),
        "machine": machine(),
        "rounds": rounds,
        "runs": runs,
    }
    print(json.dumps(result, indent=1))
    put_result(kind, result)
    return 0 if all(run["same_answers"] for run in runs) else 1
