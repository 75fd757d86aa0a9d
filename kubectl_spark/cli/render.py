"""Pure renderers: kubectl-style tables and JSON/YAML documents. Cluster text is escaped."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from kubectl_spark.cli.terminal import escape, json_safe
from kubectl_spark.errors import UsageError

OUTPUTS = ("table", "wide", "json", "yaml", "name")


def check_output(output: str, allowed: Sequence[str] = OUTPUTS) -> str:
    chosen = output or "table"
    if chosen not in allowed:
        raise UsageError(
            f'unable to match a printer suitable for the output format "{output}", allowed formats are: '
            + ",".join(a for a in allowed if a != "table")
        )
    return chosen


def table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], *, no_headers: bool = False
) -> str:
    """Kubectl's tabwriter layout: columns padded to their widest cell, three spaces apart."""
    cells = [[escape(c).replace("\n", " ") for c in row] for row in rows]
    shown = cells if no_headers else [list(headers), *cells]
    if not shown:
        return ""
    widths = [max(len(r[i]) for r in shown) for i in range(len(headers))]
    lines = ["   ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip() for r in shown]
    return "\n".join(lines) + "\n"


def document(doc: Any, output: str) -> str:
    """JSON or YAML, with the characters a terminal would act on written as escapes.

    JSON encoders leave DEL, C1 and bidi controls raw, as does YAML with allow_unicode; the
    escapes used here read back to the same values.
    """
    if output == "json":
        text = orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n"
        return json_safe(text)
    import yaml

    text = str(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    if json_safe(text) != text:  # rare: then every non-ASCII character is written escaped
        text = str(yaml.safe_dump(doc, sort_keys=False, allow_unicode=False))
    return text
