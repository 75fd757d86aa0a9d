"""Label and field selectors with apimachinery's grammar and matching rules.

Label selectors: ``=``, ``==``, ``!=``, ``in (a,b)``, ``notin (a,b)``, ``key`` (exists), ``!key``,
``gt``/``lt`` are ``key>N``/``key<N``; a comma is AND. ``!=`` and ``notin`` also match objects
without the key, as in ``pkg/labels/selector.go``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import bad_request

_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_KEY_RE = re.compile(
    rf"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?{_NAME}$"
)
_VALUE_RE = re.compile(rf"^({_NAME})?$")


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!", "gt", "lt"
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        has = self.key in labels
        value = labels.get(self.key)
        if self.op == "=":
            return has and value == self.values[0]
        if self.op == "in":
            return has and value in self.values
        if self.op == "!=":
            return not has or value != self.values[0]
        if self.op == "notin":
            return not has or value not in self.values
        if self.op == "exists":
            return has
        if self.op == "!":
            return not has
        if not has or value is None:
            return False
        try:
            number = int(value)
        except ValueError:
            return False
        bound = int(self.values[0])
        return number > bound if self.op == "gt" else number < bound


@dataclass(frozen=True)
class LabelSelector:
    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements


class _Lexer:
    """Tokens of a label selector: identifiers and the operators (, ) , = == != ! > <."""

    _TOKEN = re.compile(r"\s*(==|!=|\(|\)|,|=|!|>|<|[^\s(),=!<>]+)")

    def __init__(self, text: str) -> None:
        self.tokens: list[str] = []
        pos = 0
        text = text.strip()
        while pos < len(text):
            m = self._TOKEN.match(text, pos)
            if not m:
                break
            self.tokens.append(m.group(1))
            pos = m.end()
            while pos < len(text) and text[pos].isspace():
                pos += 1
        self.i = 0

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> str | None:
        tok = self.peek()
        self.i += 1
        return tok


def _check_key(key: str, text: str) -> None:
    if not _KEY_RE.match(key) or len(key.rsplit("/", maxsplit=1)[-1]) > 63:
        raise bad_request(f"unable to parse requirement: invalid label key {key!r} in {text!r}")


def _check_value(value: str, text: str) -> None:
    if len(value) > 63 or not _VALUE_RE.match(value):
        raise bad_request(f"unable to parse requirement: invalid label value {value!r} in {text!r}")


_OPERATORS = {"=", "==", "!=", "in", "notin", ">", "<"}


def parse_label_selector(text: str | None) -> LabelSelector:
    """Parse a labelSelector query value; raise a 400 ApiError the way kube-apiserver does."""
    if text is None or not text.strip():
        return LabelSelector()
    lexer = _Lexer(text)
    reqs: list[Requirement] = []
    while True:
        tok = lexer.take()
        if tok is None:
            raise bad_request(
                f"unable to parse requirement: found '', expected: identifier in {text!r}"
            )
        if tok == "!":
            key = lexer.take() or ""
            _check_key(key, text)
            reqs.append(Requirement(key, "!"))
        else:
            key = tok
            _check_key(key, text)
            nxt = lexer.peek()
            if nxt is None or nxt == ",":
                reqs.append(Requirement(key, "exists"))
            elif nxt in _OPERATORS:
                op = lexer.take() or ""
                if op in ("in", "notin"):
                    if lexer.take() != "(":
                        raise bad_request(
                            f"unable to parse requirement: found ')', expected: '(' in {text!r}"
                        )
                    values: list[str] = []
                    while True:
                        val = lexer.take()
                        if val is None:
                            raise bad_request(
                                f"unable to parse requirement: found '', expected: ')' in {text!r}"
                            )
                        if val == ")":
                            break
                        if val == ",":
                            continue
                        _check_value(val, text)
                        values.append(val)
                    reqs.append(Requirement(key, op, tuple(values)))
                else:
                    val = lexer.peek()
                    if val is None or val in (",", ")", "(") or val in _OPERATORS - {"in", "notin"}:
                        val = ""
                    else:
                        lexer.take()
                    if op in (">", "<"):
                        if not re.fullmatch(r"-?\d+", val):
                            raise bad_request(
                                f"unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer in {text!r}"
                            )
                        reqs.append(Requirement(key, "gt" if op == ">" else "lt", (val,)))
                    else:
                        _check_value(val, text)
                        reqs.append(Requirement(key, "!=" if op == "!=" else "=", (val,)))
            else:
                raise bad_request(
                    f"unable to parse requirement: found '{nxt}', expected: in, notin, =, ==, !=, gt, lt in {text!r}"
                )
        sep = lexer.take()
        if sep is None:
            break
        if sep != ",":
            raise bad_request(
                f"unable to parse requirement: found '{sep}', expected: ',' or 'end of string' in {text!r}"
            )
    return LabelSelector(tuple(reqs))


def selector_from_match(spec: Mapping[str, Any] | None) -> LabelSelector:
    """A metav1.LabelSelector (matchLabels + matchExpressions), as in a Job or NetworkPolicy."""
    if not spec:
        return LabelSelector()
    reqs = [Requirement(k, "=", (str(v),)) for k, v in (spec.get("matchLabels") or {}).items()]
    ops = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}
    for expr in spec.get("matchExpressions") or []:
        op = ops.get(str(expr.get("operator")))
        if op:
            reqs.append(Requirement(str(expr.get("key")), op, tuple(expr.get("values") or ())))
    return LabelSelector(tuple(reqs))


# ------------------------------------------------------------------------------------ fields
FieldGetter = Callable[[Mapping[str, Any]], str | None]


@dataclass(frozen=True)
class FieldRequirement:
    field: str
    negate: bool
    value: str


@dataclass(frozen=True)
class FieldSelector:
    requirements: tuple[FieldRequirement, ...] = ()

    def matches(self, obj: Mapping[str, Any], getters: Mapping[str, FieldGetter]) -> bool:
        for req in self.requirements:
            actual = getters[req.field](obj)
            actual = "" if actual is None else actual
            if (actual == req.value) == req.negate:
                return False
        return True

    @property
    def empty(self) -> bool:
        return not self.requirements

    def exact(self, name: str) -> str | None:
        """The value this selector pins ``name`` to, if any (used to narrow lookups)."""
        for req in self.requirements:
            if req.field == name and not req.negate:
                return req.value
        return None


def _unescape_field_value(value: str) -> str:
    out: list[str] = []
    escaped = False
    for ch in value:
        if escaped:
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        else:
            out.append(ch)
    return "".join(out)


def parse_field_selector(text: str | None, supported: Mapping[str, FieldGetter]) -> FieldSelector:
    """Parse a fieldSelector; unsupported fields are a 400, as kube-apiserver answers."""
    if text is None or not text.strip():
        return FieldSelector()
    reqs: list[FieldRequirement] = []
    for raw_part in re.split(r"(?<!\\),", text):
        part = raw_part.strip()
        if not part:
            continue
        m = re.match(r"^([^=!]+?)\s*(==|!=|=)\s*(.*)$", part)
        if not m:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{part}'")
        field, op, value = m.group(1).strip(), m.group(2), _unescape_field_value(m.group(3).strip())
        if field not in supported:
            raise bad_request(f"field label not supported: {field}")
        reqs.append(FieldRequirement(field, op == "!=", value))
    return FieldSelector(tuple(reqs))


def path_getter(*path: str) -> FieldGetter:
    def get(obj: Mapping[str, Any]) -> str | None:
        cur: Any = obj
        for key in path:
            if not isinstance(cur, Mapping):
                return None
            cur = cur.get(key)
        if cur is None:
            return None
        if isinstance(cur, bool):
            return "true" if cur else "false"
        return str(cur)

    return get


def validate_labels(labels: Any, field: str) -> list[tuple[str, str, str]]:
    """Label key/value validation errors as (reason, field, message) causes."""
    causes: list[tuple[str, str, str]] = []
    if labels is None:
        return causes
    if not isinstance(labels, Mapping):
        return [("FieldValueInvalid", field, "Invalid value: must be a map of strings")]
    for key, value in labels.items():
        if not isinstance(key, str) or not _KEY_RE.match(key) or len(key.split("/")[-1]) > 63:
            causes.append(
                (
                    "FieldValueInvalid",
                    field,
                    f"Invalid value: \"{key}\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
                )
            )
        if not isinstance(value, str) or len(value) > 63 or not _VALUE_RE.match(value):
            causes.append(
                (
                    "FieldValueInvalid",
                    f"{field}",
                    f"Invalid value: \"{value}\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
                )
            )
    return causes
