"""What each entry point loads, in a fresh interpreter (as harlequin's import-hygiene test).

The core loads no UI and no client library; ``kubectl spark ls``, run for real, loads neither
textual nor rich (its start-up time and its independence from the TUI); the TUI loads no typer.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = ("textual", "rich", "typer", "kubernetes", "aiohttp")


def loaded_after(code: str) -> set[str]:
    script = f"{code}\nimport sys, json\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1])) & set(HEAVY)


def test_the_core_loads_no_ui_and_no_client() -> None:
    assert (
        loaded_after(
            "import kubectl_spark.core.analyze, kubectl_spark.core.plans, kubectl_spark.core.incremental"
        )
        == set()
    )


def test_ls_loads_neither_textual_nor_rich(kubeconfig: Path) -> None:
    found = loaded_after(
        "from kubectl_spark.cli.main import main\n"
        f"assert main(['--kubeconfig', {str(kubeconfig)!r}, 'ls', '-A']) == 0"
    )
    assert "typer" in found  # it did run the command
    assert not found & {"textual", "rich"}, found


def test_the_tui_loads_no_typer() -> None:
    found = loaded_after("import kubectl_spark.tui.app, kubectl_spark.tui.sources")
    assert "textual" in found and "typer" not in found, found
