"""The structural rules of CONTRIBUTING.md, read from the source (scripts/structure.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent.parent


def _structure() -> ModuleType:
    spec = importlib.util.spec_from_file_location("structure", ROOT / "scripts" / "structure.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_import_circle_spans_two_folders() -> None:
    assert _structure().cross_folder_circles() == []


def test_no_function_outside_a_class_takes_self() -> None:
    assert _structure().functions_taking_self() == []
