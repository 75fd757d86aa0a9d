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


def test_no_public_signature_of_the_core_says_any() -> None:
    structure = _structure()
    assert structure.any_in_signatures(structure.CORE) == []


def test_the_any_rule_sees_parameters_returns_and_fields(tmp_path: Path) -> None:
    """The rule reads what it claims to: a parameter, a return, a field, a quoted name, a
    ``typing.Any``; not a private name, nor ``Any`` inside a body."""
    (tmp_path / "probe.py").write_text(
        "import typing\n"
        "from typing import Any\n"
        "def takes(x: Any) -> int: ...\n"
        "def gives() -> list['Any']: ...\n"
        "def qualified(x: typing.Any) -> None: ...\n"
        "def _private(x: Any) -> Any: ...\n"
        "def clean(x: object) -> object:\n"
        "    inside: Any = x\n"
        "    return inside\n"
        "class Shape:\n"
        "    held: dict[str, Any]\n"
        "    def method(self, *rest: Any) -> None: ...\n"
    )
    found = _structure().any_in_signatures(tmp_path)
    assert [f.split(" ", 1)[1] for f in found] == [
        "takes",
        "gives",
        "qualified",
        "Shape.held",
        "Shape.method",
    ]


def _test_modules_imported(path: Path) -> list[str]:
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = (
            [alias.name for alias in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else []
        )
        found += [n for n in names if n.rpartition(".")[2].startswith("test_")]
    return found


def test_no_test_module_is_imported_by_another_file() -> None:
    """Helpers live in helper modules (CONTRIBUTING.md): a test module imported from elsewhere,
    conftest included, is compiled a second time under another name (tests/__init__.py)."""
    found = {
        str(path.relative_to(ROOT)): names
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if (names := _test_modules_imported(path))
    }
    assert found == {}
