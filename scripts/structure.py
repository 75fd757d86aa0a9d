"""Two structural rules, read from the source alone (no import runs): exit 1 when one is broken.

- No import circle between files of different folders: a folder is a layer or a component,
  and a circle across two of them means neither can be read, tested or replaced alone. Every
  import counts, at the top, in a function or under ``TYPE_CHECKING``.
- No function outside a class takes ``self``: a class's methods moved into other files and
  bound back into its body make one class look like several files (CONTRIBUTING.md). Split a
  class into collaborators it holds instead.
- No ``Any`` in the core's public signatures (its public functions' and methods' parameters
  and returns, its public classes' fields): what the core reads from the API is
  ``raw.RawObject`` or ``object``, read through ``raw``; what it writes is typed
  (``core/jsonvalue.py``). ``Any`` inside a body (a fast path reading well-formed JSON in
  line) is the body's own business.

Run: .venv/bin/python scripts/structure.py   (tests/unit/test_structure.py runs the same)
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The package's folders, and tui/, installed as kubectl_spark.tui (kubectl_spark/tui links it).
SOURCES = (("kubectl_spark", ROOT / "kubectl_spark"), ("kubectl_spark.tui", ROOT / "tui"))
CHECKED_FOR_SELF = ("kubectl_spark", "tui", "benchmarks", "scripts", "tests")
CORE = ROOT / "kubectl_spark" / "core"


def modules() -> dict[str, Path]:
    """Every module of the product by its dotted name."""
    found: dict[str, Path] = {}
    for package, folder in SOURCES:
        for path in sorted(folder.rglob("*.py")):
            if folder.name == "kubectl_spark" and (folder / "tui") in path.parents:
                continue  # the symlink to tui/, read once under its installed name
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([package, *parts])] = path
    return found


def _imported(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The modules of ours ``path`` imports: the longest known prefix of each name."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        wanted: list[str] = []
        if isinstance(node, ast.Import):
            wanted = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([node.module] if node.module else [])])
            wanted = [f"{base}.{alias.name}" for alias in node.names] + [base]
        for dotted in wanted:
            module = dotted
            while module and module not in known:
                module = module.rpartition(".")[0]
            if module and module != name:
                yield module


def cross_folder_circles() -> list[list[str]]:
    """Circles of imports (strongly connected modules) that span more than one folder."""
    known = modules()
    graph = {name: set(_imported(name, path, known)) for name, path in known.items()}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(start: str) -> None:
        # Tarjan's algorithm, iterative: the graph is a few hundred modules deep at most.
        work = [(start, iter(sorted(graph[start])))]
        order[start] = low[start] = len(order)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            advanced = False
            for nxt in edges:
                if nxt not in order:
                    order[nxt] = low[nxt] = len(order)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], order[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == order[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len({known[m].parent for m in members}) > 1:
                    circles.append(sorted(members))

    for name in sorted(graph):
        if name not in order:
            visit(name)
    return circles


def functions_taking_self() -> list[str]:
    """``file:line name`` of each function outside a class whose first parameter is ``self``."""
    found = []
    for top in CHECKED_FOR_SELF:
        for path in sorted((ROOT / top).rglob("*.py")):
            if ".venv" in path.parts or (top == "kubectl_spark" and "tui" in path.parts):
                continue
            tree = ast.parse(path.read_text(), str(path))
            for node in tree.body:
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    params = node.args.posonlyargs + node.args.args
                    if params and params[0].arg == "self":
                        where = path.relative_to(ROOT)
                        found.append(f"{where}:{node.lineno} {node.name}")
    return found


def _mentions_any(annotation: ast.expr) -> bool:
    """Whether ``Any`` (or ``typing.Any``) is named anywhere in it, quoted parts too."""
    for node in ast.walk(annotation):
        if isinstance(node, ast.Name | ast.Attribute) and (
            getattr(node, "id", None) == "Any" or getattr(node, "attr", None) == "Any"
        ):
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                quoted = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                continue
            if _mentions_any(quoted):
                return True
    return False


def _public(name: str) -> bool:
    return not name.startswith("_") or name == "__init__"


def _signatures(body: list[ast.stmt], prefix: str) -> Iterator[tuple[str, int, list[ast.expr]]]:
    """(name, line, annotations) of every public function, method and class field in ``body``."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _public(node.name):
            args = node.args
            params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
            params += [a for a in (args.vararg, args.kwarg) if a is not None]
            notes = [p.annotation for p in params if p.annotation is not None]
            yield prefix + node.name, node.lineno, notes + ([node.returns] if node.returns else [])
        elif isinstance(node, ast.ClassDef) and _public(node.name):
            for field in node.body:
                if isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name):
                    yield f"{node.name}.{field.target.id}", field.lineno, [field.annotation]
            yield from _signatures(node.body, f"{node.name}.")


def any_in_signatures(folder: Path) -> list[str]:
    """``file:line name`` of each public signature of the modules in ``folder`` that says ``Any``."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for name, line, notes in _signatures(tree.body, ""):
            if any(_mentions_any(n) for n in notes):
                found.append(f"{path.relative_to(folder.parent)}:{line} {name}")
    return found


def main() -> int:
    circles = cross_folder_circles()
    for members in circles:
        print("import circle across folders: " + " <-> ".join(members))
    outside = functions_taking_self()
    for each in outside:
        print(f"function outside a class takes self: {each}")
    loose = any_in_signatures(CORE)
    for each in loose:
        print(f"Any in a public signature of the core: {each}")
    return 1 if circles or outside or loose else 0


if __name__ == "__main__":
    sys.exit(main())
