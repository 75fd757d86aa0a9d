"""Shared by the benchmarks: a result's table put in the docs between its markers.

Each table sits between ``<!-- perf:NAME -->`` and ``<!-- /perf:NAME -->`` in the README and
docs/performance.md; a document without them is left alone.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = (ROOT / "README.md", ROOT / "docs" / "performance.md")


def put_table(name: str, table: str) -> None:
    start, end = f"<!-- perf:{name} -->", f"<!-- /perf:{name} -->"
    for doc in DOCS:
        text = doc.read_text()
        if start in text and end in text:
            before, rest = text.split(start, 1)
            doc.write_text(f"{before}{start}\n{table}\n{end}{rest.split(end, 1)[1]}")
