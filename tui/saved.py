"""Where the TUI saves a text view (``ctrl+s``): a file of its own, never over another.

k9s writes its saved views to a folder of its own; here it is beside the history store,
``$XDG_STATE_HOME/kubectl-spark/saved`` (``~/.local/state`` when unset), one file per save,
named after what was shown and when, readable by its owner only (logs hold secrets too).
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path

NAME_MAX = 80  # characters of the title kept in the file's name


def folder() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "kubectl-spark" / "saved"


def save(title: str, body: str, *, now: datetime | None = None) -> Path:
    """Write ``body`` to a new file named after ``title`` (cluster text: only safe characters)."""
    what = title.split("  (esc", maxsplit=1)[0]
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", what).strip("-.")[:NAME_MAX] or "view"
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    where = folder()
    where.mkdir(parents=True, exist_ok=True, mode=0o700)
    for n in range(1000):
        path = where / f"{stem}-{stamp}{f'-{n}' if n else ''}.txt"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(body)
        return path
    raise FileExistsError(f"{where}: no free name for {stem}-{stamp}")
