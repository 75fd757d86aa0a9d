r"""kubectl's JSONPath templates (``-o jsonpath=…``, ``-o custom-columns=…``), for scripts.

kubectl's dialect is not the JSONPath of Python libraries: a template mixes literal text with
``{…}`` actions (paths, ``{range …}…{end}``, quoted literals such as ``{"\n"}``), a missing key
prints nothing, several results of one action are joined by spaces, and values print as kubectl
prints them (``true``, ``null``, maps and lists as compact JSON with sorted keys). What is
supported: ``$``/``@``/``.`` roots, ``.field`` (``\.`` escapes a dot), ``['field']``, ``..field``,
``*``, ``[n]`` (negative too), ``[a:b:c]``, ``[n,m]``, and filters ``[?(@.path)]`` and
``[?(@.path OP literal)]`` with ``== != < > <= >=``. Errors read as kubectl's do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from kubectl_spark.app.text import escape
from kubectl_spark.errors import UsageError

Step = Callable[[list[Any]], list[Any]]
_MISSING = object()
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<=": lambda a, b: a <= b,
    ">=": lambda a, b: a >= b,
    "<": lambda a, b: a < b,
    ">": lambda a, b: a > b,
}
_FILTER = re.compile(
    r"\?\(\s*@(?P<path>[^=!<>]*?)\s*(?:(?P<op>==|!=|<=|>=|<|>)\s*(?P<lit>.+?))?\s*\)"
)


@dataclass(frozen=True)
class Path:
    from_root: bool  # $ (else the current object: the document, or the range's element)
    steps: tuple[Step, ...]

    def values(self, root: Any, current: Any) -> list[Any]:
        found = [root if self.from_root else current]
        for step in self.steps:
            found = step(found)
        return found


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Range:
    path: Path
    body: tuple[Text | Path | Range, ...]


Node = Text | Path | Range


class Template:
    """A parsed template; ``render`` fills it from a JSON document."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.nodes, _ = _parse_nodes(source, _actions(source), top=True)

    def render(self, doc: Any, *, escaped: bool = True) -> str:
        """The filled template; ``escaped=False`` for a pipe, where kubectl prints data as is."""
        try:
            return "".join(_render(self.nodes, doc, doc, text if escaped else plain))
        except _ExecError as exc:
            raise UsageError(f'error executing jsonpath "{self.source}": {exc}') from None

    def results(self, doc: Any) -> list[Any]:
        """Every value the template's paths select (custom-columns' cells)."""
        try:
            return [v for n in self.nodes if isinstance(n, Path) for v in n.values(doc, doc)]
        except _ExecError as exc:
            raise UsageError(f'error executing jsonpath "{self.source}": {exc}') from None


class _ExecError(Exception):
    pass


def _parse_error(source: str, why: str) -> UsageError:
    return UsageError(f"error parsing jsonpath {source}, {why}")


def _actions(source: str) -> list[tuple[str, str]]:
    """The template as ("text", …) and ("action", …) pieces; quotes inside actions respected."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(source):
        start = source.find("{", i)
        if start < 0:
            out.append(("text", source[i:]))
            break
        if start > i:
            out.append(("text", source[i:start]))
        j, quote = start + 1, ""
        while j < len(source) and (quote or source[j] != "}"):
            if quote and source[j] == "\\":
                j += 1
            elif source[j] in "\"'" and (not quote or quote == source[j]):
                quote = "" if quote else source[j]
            j += 1
        if quote:
            raise _parse_error(source, "unterminated quoted string")
        if j >= len(source):
            raise _parse_error(source, "unclosed action")
        out.append(("action", source[start + 1 : j].strip()))
        i = j + 1
    return out


def _parse_nodes(
    source: str, pieces: list[tuple[str, str]], *, top: bool
) -> tuple[tuple[Node, ...], list[tuple[str, str]]]:
    nodes: list[Node] = []
    while pieces:
        kind, body = pieces.pop(0)
        if kind == "text":
            nodes.append(Text(body))
        elif body == "end":
            if top:
                raise _parse_error(source, "not in range, nothing to end")
            return tuple(nodes), pieces
        elif body.startswith("range "):
            inner, pieces = _parse_nodes(source, pieces, top=False)
            nodes.append(Range(_path(source, body[len("range ") :].strip()), inner))
        elif body[:1] == '"':
            try:
                nodes.append(Text(str(json.loads(body))))
            except ValueError:
                raise _parse_error(source, f"invalid quoted string {body}") from None
        else:
            nodes.append(_path(source, body))
    if not top:
        raise _parse_error(source, "unclosed range, expect {end}")
    return tuple(nodes), pieces


def _path(source: str, text: str) -> Path:
    from_root = text.startswith("$")
    i = 1 if text[:1] in ("$", "@") else 0
    steps: list[Step] = []
    while i < len(text):
        if text.startswith("..", i):
            name, i = _name(text, i + 2)
            steps.append(_recursive(name))
        elif text[i] == ".":
            name, i = _name(text, i + 1)
            if name:
                steps.append(_wildcard if name == "*" else _field(name))
        elif text[i] == "[":
            end = _closing(text, i)
            if end < 0:
                raise _parse_error(source, "unterminated array")
            steps.append(_subscript(source, text[i + 1 : end].strip()))
            i = end + 1
        else:
            raise _parse_error(source, f"unrecognized character in action: {text[i]!r}")
    return Path(from_root, tuple(steps))


def _name(text: str, i: int) -> tuple[str, int]:
    out = []
    while i < len(text) and text[i] not in ".[":
        if text[i] == "\\" and i + 1 < len(text):
            i += 1
        out.append(text[i])
        i += 1
    return "".join(out), i


def _closing(text: str, i: int) -> int:
    """The index of the ``]`` closing the ``[`` at i (brackets and quotes inside skipped)."""
    depth, quote = 0, ""
    for j in range(i, len(text)):
        c = text[j]
        if quote:
            quote = "" if c == quote else quote
        elif c in "\"'":
            quote = c
        elif c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                return j
    return -1


def _subscript(source: str, inner: str) -> Step:
    if inner == "*":
        return _wildcard
    if inner.startswith("?"):
        return _filter(source, inner)
    if inner[:1] in "\"'":
        names = [part.strip()[1:-1] for part in inner.split(",")]
        return lambda found: [d[n] for d in found if isinstance(d, dict) for n in names if n in d]
    if ":" in inner:
        try:
            bounds = [int(p) if p.strip() else None for p in inner.split(":")]
        except ValueError:
            raise _parse_error(source, f"invalid array index {inner}") from None
        if len(bounds) > 3:
            raise _parse_error(source, f"invalid array index {inner}")
        window = slice(*bounds)
        return lambda found: [v for d in found if isinstance(d, list) for v in _sliced(d, window)]
    try:
        indexes = [int(p) for p in inner.split(",")]
    except ValueError:
        raise _parse_error(source, f"invalid array index {inner}") from None
    return lambda found: [v for d in found if isinstance(d, list) for v in _indexed(d, indexes)]


def _sliced(items: list[Any], window: slice) -> list[Any]:
    if window.step is not None and window.step <= 0:
        raise _ExecError("step must be > 0")
    return items[window]


def _indexed(items: list[Any], indexes: list[int]) -> Iterator[Any]:
    for index in indexes:
        if not -len(items) <= index < len(items):
            raise _ExecError(f"array index out of bounds: index {index}, length {len(items)}")
        yield items[index]


def _field(name: str) -> Step:
    return lambda found: [d[name] for d in found if isinstance(d, dict) and name in d]


def _wildcard(found: list[Any]) -> list[Any]:
    out: list[Any] = []
    for d in found:
        if isinstance(d, dict):
            out.extend(d[k] for k in sorted(d))
        elif isinstance(d, list):
            out.extend(d)
    return out


def _recursive(name: str) -> Step:
    def walk(value: Any, out: list[Any]) -> None:
        if isinstance(value, dict):
            if name in value:
                out.append(value[name])
            for key in sorted(value):
                walk(value[key], out)
        elif isinstance(value, list):
            for item in value:
                walk(item, out)

    def step(found: list[Any]) -> list[Any]:
        out: list[Any] = []
        for d in found:
            walk(d, out)
        return out

    return step


def _filter(source: str, inner: str) -> Step:
    match = _FILTER.fullmatch(inner)
    if match is None:
        raise _parse_error(source, f"invalid filter {inner}")
    path = _path(source, match["path"] or "")
    op, literal = match["op"], _literal(source, match["lit"]) if match["lit"] else _MISSING

    def keep(item: Any) -> bool:
        try:
            values = path.values(item, item)
        except _ExecError:
            return True  # kubectl keeps an element whose filter path fails (e.g. [0] of [])
        if op is None:
            return bool(values)
        if not values:
            return False
        value = values[0]
        numbers = all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in (value, literal)
        )
        if not numbers and type(value) is not type(literal):
            raise _ExecError("incompatible types for comparison")
        return _COMPARE[op](value, literal)

    return lambda found: [v for d in found if isinstance(d, list) for v in d if keep(v)]


def _literal(source: str, text: str) -> Any:
    text = text.strip()
    if text[:1] in "\"'" and text[-1:] == text[:1] and len(text) >= 2:
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise _parse_error(source, f"invalid filter literal {text}") from None


def _render(
    nodes: tuple[Node, ...], root: Any, current: Any, shown: Callable[[Any], str]
) -> Iterator[str]:
    for node in nodes:
        if isinstance(node, Text):
            yield node.text
        elif isinstance(node, Range):
            for item in node.path.values(root, current):
                elements = item if isinstance(item, list) else [item]
                for element in elements:
                    yield from _render(node.body, root, element, shown)
        else:
            yield " ".join(shown(v) for v in node.values(root, current))


def text(value: Any) -> str:
    """One value as kubectl prints it, with terminal control characters escaped."""
    return escape(plain(value))


def plain(value: Any) -> str:
    """One value as kubectl prints it, as it is (for a pipe)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if isinstance(value, (dict, list)):
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    return str(value)
