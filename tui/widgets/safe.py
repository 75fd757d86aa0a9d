"""Cluster text is untrusted: build Rich Text objects (never markup strings), controls escaped."""

from __future__ import annotations

from rich.text import Text

from kubectl_spark.app.text import continued, escape


def safe(value: object, style: str = "") -> Text:
    """Escaped text, newlines inside it marked as continuations (``continued``).

    Cluster text then cannot forge a line of the screen's own; trailing newlines are the
    caller's and stay as they are.
    """
    text = str(value)
    body = text.rstrip("\n")
    return Text(escape(continued(body, "  ") + text[len(body) :]), style=style)
