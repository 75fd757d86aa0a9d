"""Text for a terminal: untrusted cluster text made safe, and kubectl's table layout."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

# C0/C1 controls (ESC, BEL, CSI …) and bidi overrides would let a pod name rewrite the screen;
# invisible characters (zero-width space, joiners and marks, line and paragraph separators, word
# joiner and invisible operators, the byte-order mark) would make two names that differ look
# the same.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def escape(text: str) -> str:
    """Replace control characters with visible escapes; keep newlines and tabs."""
    return _UNSAFE.sub(
        lambda m: (
            f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}"
        ),
        text,
    )


def json_safe(text: str) -> str:
    """JSON text with the unsafe characters as JSON's unicode escapes (only strings hold them)."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def continued(text: str, indent: str) -> str:
    """Cluster text on a line of its own: any further lines it holds are marked as continuations.

    A message or evidence string may hold newlines (a container's termination message often
    does); printed as they are, a line of it could pass for one of ours ("Reason: …"). Each
    continuation is indented and starts with "| ", as no line of our own does.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return f"\n{indent}| ".join(lines)


def table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    no_headers: bool = False,
    escaped: bool = True,
    paint: Callable[[str, str], str | None] | None = None,
) -> str:
    """Kubectl's tabwriter layout: columns padded to their widest cell, three spaces apart.

    ``escaped=False`` only for a pipe, which kubectl writes cluster text into as it is.
    ``paint(header, cell)``: an SGR code to colour the cell with, or None (cli/colour.py).
    """
    cells = [[(escape(c) if escaped else c).replace("\n", " ") for c in row] for row in rows]
    shown = cells if no_headers else [list(headers), *cells]
    if not shown:
        return ""
    widths = [max(len(r[i]) for r in shown) for i in range(len(headers))]
    if paint is None:
        lines = ["   ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip() for r in shown]
        return "\n".join(lines) + "\n"
    painted = (
        []
        if no_headers
        else ["   ".join(c.ljust(widths[i]) for i, c in enumerate(headers)).rstrip()]
    )
    for r in cells:
        parts = []
        for i, c in enumerate(r):
            code = paint(headers[i], c) if c else None
            # Padded outside the colour: the width is the text's, escapes take no column.
            parts.append((f"\x1b[{code}m{c}\x1b[0m" if code else c) + " " * (widths[i] - len(c)))
        painted.append("   ".join(parts).rstrip())
    return "\n".join(painted) + "\n"
