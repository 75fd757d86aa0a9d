"""Pure renderers: kubectl-style tables and JSON/YAML documents. Cluster text is escaped."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import orjson

from kubectl_spark.app.text import json_safe
from kubectl_spark.app.text import table as plain_table
from kubectl_spark.errors import UsageError

__all__ = ["check_output", "custom_columns", "document", "is_document", "table"]

OUTPUTS = ("table", "wide", "json", "yaml", "name")
TEMPLATED = ("jsonpath", "custom-columns")  # -o jsonpath=…, -o custom-columns=…: where json is


def table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    no_headers: bool = False,
    escaped: bool = True,
) -> str:
    """``app.text.table``, coloured when ``--color`` and the terminal say so (cli/colour.py)."""
    from kubectl_spark.cli import colour

    return plain_table(
        headers,
        rows,
        no_headers=no_headers,
        escaped=escaped,
        paint=colour.cell if colour.on() else None,
    )


def check_output(output: str, allowed: Sequence[str] = OUTPUTS) -> str:
    """The chosen format; a template is parsed now, so that a bad one fails before any request."""
    chosen = output or "table"
    kind, eq, spec = chosen.partition("=")
    if "json" in allowed and kind in TEMPLATED:
        if not eq or not spec:
            raise UsageError(f"{kind} expects a template: -o {kind}=…")
        _templated(kind, spec)
        return chosen
    if chosen not in allowed:
        formats = [a for a in allowed if a != "table"] + (
            list(TEMPLATED) if "json" in allowed else []
        )
        raise UsageError(
            f'unable to match a printer suitable for the output format "{output}", allowed formats are: '
            + ",".join(sorted(formats))
        )
    return chosen


def is_document(output: str) -> bool:
    """Whether the output is made from the JSON document (json, yaml, or a template over it)."""
    return output in ("json", "yaml") or output.partition("=")[0] in TEMPLATED


def _templated(kind: str, spec: str) -> Any:
    from kubectl_spark.cli import jsonpath

    if kind == "jsonpath":
        return jsonpath.Template(spec)
    columns = []
    for part in spec.split(","):
        header, colon, path = part.partition(":")
        if not colon or not header or not path:
            raise UsageError(
                f"unexpected custom-columns spec: {part}, expected <header>:<json-path-expr>"
            )
        source = path if path.startswith("{") else "{" + path + "}"
        columns.append((header, jsonpath.Template(source)))
    return columns


def custom_columns(doc: Any, spec: str, *, no_headers: bool = False, escaped: bool = True) -> str:
    """One row per item of a list (or the document itself): kubectl's custom-columns."""
    from kubectl_spark.cli.jsonpath import plain, text

    shown = text if escaped else plain
    columns = _templated("custom-columns", spec)
    items = doc.get("items") if isinstance(doc, dict) and "items" in doc else [doc]
    rows = [
        [
            ",".join(shown(v) for v in template.results(item) if v is not None) or "<none>"
            for _, template in columns
        ]
        for item in items or []
    ]
    return plain_table([h for h, _ in columns], rows, no_headers=no_headers, escaped=escaped)


def document(
    doc: Any, output: str, *, no_headers: bool = False, terminal: bool | None = None
) -> str:
    """JSON, YAML or a template's text, with the characters a terminal would act on escaped.

    JSON encoders leave DEL, C1 and bidi controls raw, as does YAML with allow_unicode; the
    escapes used here read back to the same values. A template's text has no such escapes: it
    is escaped for a terminal only (``terminal``; None: whether stdout is one), and written as
    the data is into a pipe, as kubectl writes it.
    """
    if output == "json":
        text = orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n"
        return json_safe(text)
    kind, _, spec = output.partition("=")
    escaped = sys.stdout.isatty() if terminal is None else terminal
    if kind == "jsonpath":
        return str(_templated(kind, spec).render(doc, escaped=escaped))
    if kind == "custom-columns":
        return custom_columns(doc, spec, no_headers=no_headers, escaped=escaped)
    text = to_yaml(doc, allow_unicode=True)
    if json_safe(text) != text:  # rare: then every non-ASCII character is written escaped
        text = to_yaml(doc, allow_unicode=False)
    return text


def to_yaml(doc: Any, *, allow_unicode: bool) -> str:
    """YAML as kubectl prints it: an object used twice is written out twice.

    PyYAML writes a repeated object as an anchor (``&id001``) and alias, which people (and
    some tools reading a plan's YAML) read poorly.
    """
    import yaml

    class Plain(yaml.SafeDumper):
        def ignore_aliases(self, data: Any) -> bool:  # noqa: ARG002 - never an alias
            return True

    return str(yaml.dump(doc, Dumper=Plain, sort_keys=False, allow_unicode=allow_unicode))
