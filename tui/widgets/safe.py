"""Cluster text is untrusted: build Rich Text objects (never markup strings), controls escaped."""

from __future__ import annotations

from rich.text import Text

from kubectl_spark.cli.terminal import escape


def safe(value: object, style: str = "") -> Text:
    return Text(escape(str(value)), style=style)
