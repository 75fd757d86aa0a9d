"""Shared by the benchmarks: a result written to benchmarks/results/, its table put in the docs.

A result is ``<date>-<kind>.json`` (``targets.py`` finds each kind's newest there). Each table
sits between ``<!-- perf:NAME -->`` and ``<!-- /perf:NAME -->`` in the README and
docs/performance.md; a document without them is left alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = (ROOT / "README.md", ROOT / "docs" / "performance.md")


def put_result(kind: str, result: Mapping[str, object]) -> Path:
    """Write ``result`` (its ``date`` an ISO date or time) as ``<date>-<kind>.json``; say where."""
    out = ROOT / "benchmarks" / "results" / f"{str(result['date'])[:10]}-{kind}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written to {out}")
    return out


def put_table(name: str, table: str) -> None:
    start, end = f"<!-- perf:{name} -->", f"<!-- /perf:{name} -->"
    for doc in DOCS:
        text = doc.read_text()
        if start in text and end in text:
            before, rest = text.split(start, 1)
            doc.write_text(f"{before}{start}\n{table}\n{end}{rest.split(end, 1)[1]}")
