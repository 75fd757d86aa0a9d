"""The structural rules of CONTRIBUTING.md, read from the source (scripts/structure.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent.parent
# The files whose functions still take the class's ``self`` (bound into the emulator's Store):
# the emulator's last cosmetic splits, to become collaborators. The set may only shrink.
STILL_SPLIT = {
    "kubectl_spark/cluster/apiserver/store_writes.py",
}


def _structure() -> ModuleType:
    spec = importlib.util.spec_from_file_location("structure", ROOT / "scripts" / "structure.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_import_circle_spans_two_folders() -> None:
    assert _structure().cross_folder_circles() == []


def test_no_function_outside_a_class_takes_self() -> None:
    found = _structure().functions_taking_self()
    assert {each.partition(":")[0] for each in found} == STILL_SPLIT, found
