"""The table that start-up answers from (help, completion) says what the command tree says."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from kubectl_spark.cli.command_flags import FLAGS, TOP_HELP
from kubectl_spark.command_table import COMMANDS

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent / "kubectl-spark"


def _generator():
    spec = importlib.util.spec_from_file_location(
        "command_table", ROOT / "scripts" / "command_table.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_table_matches_the_command_tree() -> None:
    generator = _generator()
    assert generator.TABLE.read_text() == generator.render(), "run scripts/command_table.py"


def test_the_flags_that_make_a_read_live_are_that_commands_flags() -> None:
    """A live flag misspelt in the table would let ``ls --wacth`` pass for one-shot (and warm)."""
    for name, *_, live in COMMANDS:
        assert set(live or ()) <= set(FLAGS[name]), name


def _help(columns: str) -> str:
    env = {**os.environ, "COLUMNS": columns}
    proc = subprocess.run(
        [str(BIN), "--help"], capture_output=True, text=True, timeout=60, check=True, env=env
    )
    return proc.stdout


def test_help_is_typers_on_wide_and_narrow_terminals() -> None:
    assert _help("200") == TOP_HELP  # wider than 80: click wraps at 80 all the same
    narrow = _help("60")  # narrower: typer renders it
    assert narrow != TOP_HELP
    assert narrow.startswith("Usage: kubectl spark [OPTIONS] COMMAND [ARGS]...")
    assert max(len(line) for line in narrow.splitlines()) <= 60
