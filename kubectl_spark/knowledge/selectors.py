"""Label selectors with apimachinery's grammar and matching rules (``pkg/labels/selector.go``).

``=``, ``==``, ``!=``, ``in (a,b)``, ``notin (a,b)``, ``key`` (exists), ``!key``, ``key>N``,
``key<N``; a comma is AND. ``!=`` and ``notin`` also match objects without the key. The emulator
parses the query with it (and answers 400 with the message); the CLI applies a selector to what
the history store kept with the same rules.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


class SelectorError(ValueError):
    """A selector that does not parse; the message is kube-apiserver's."""


_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
LABEL_KEY = re.compile(
    rf"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?{_NAME}$"
)
LABEL_VALUE = re.compile(rf"^({_NAME})?$")


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
    if not LABEL_KEY.match(key) or len(key.rsplit("/", maxsplit=1)[-1]) > 63:
        raise SelectorError(f"unable to parse requirement: invalid label key {key!r} in {text!r}")


def _check_value(value: str, text: str) -> None:
    if len(value) > 63 or not LABEL_VALUE.match(value):
        raise SelectorError(
            f"unable to parse requirement: invalid label value {value!r} in {text!r}"
        )


_OPERATORS = {"=", "==", "!=", "in", "notin", ">", "<"}


def parse_label_selector(text: str | None) -> LabelSelector:
    """Parse a labelSelector query value; a ``SelectorError`` has kube-apiserver's message."""
    if text is None or not text.strip():
        return LabelSelector()
    lexer = _Lexer(text)
    reqs: list[Requirement] = []
    while True:
        reqs.append(_requirement(lexer, text))
        sep = lexer.take()
        if sep is None:
            return LabelSelector(tuple(reqs))
        if sep != ",":
            raise SelectorError(
                f"unable to parse requirement: found '{sep}', expected: ',' or 'end of string' in {text!r}"
            )


def _requirement(lexer: _Lexer, text: str) -> Requirement:
    tok = lexer.take()
    if tok is None:
        raise SelectorError(
            f"unable to parse requirement: found '', expected: identifier in {text!r}"
        )
    if tok == "!":
        key = lexer.take() or ""
        _check_key(key, text)
        return Requirement(key, "!")
    _check_key(tok, text)
    nxt = lexer.peek()
    if nxt is None or nxt == ",":
        return Requirement(tok, "exists")
    if nxt not in _OPERATORS:
        raise SelectorError(
            f"unable to parse requirement: found '{nxt}', expected: in, notin, =, ==, !=, gt, lt in {text!r}"
        )
    op = lexer.take() or ""
    if op in ("in", "notin"):
        return Requirement(tok, op, _value_set(lexer, text))
    return _comparison(tok, op, lexer, text)


def _value_set(lexer: _Lexer, text: str) -> tuple[str, ...]:
    """The ``(a, b)`` after in/notin."""
    if lexer.take() != "(":
        raise SelectorError(f"unable to parse requirement: found ')', expected: '(' in {text!r}")
    values: list[str] = []
    while True:
        val = lexer.take()
        if val is None:
            raise SelectorError(f"unable to parse requirement: found '', expected: ')' in {text!r}")
        if val == ")":
            return tuple(values)
        if val != ",":
            _check_value(val, text)
            values.append(val)


def _comparison(key: str, op: str, lexer: _Lexer, text: str) -> Requirement:
    """``key=v``, ``key!=v``, ``key>N``, ``key<N`` (an empty value where none follows)."""
    val = lexer.peek()
    if val is None or val in (",", ")", "(") or val in _OPERATORS - {"in", "notin"}:
        val = ""
    else:
        lexer.take()
    if op in (">", "<"):
        if not re.fullmatch(r"-?\d+", val):
            raise SelectorError(
                f"unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer in {text!r}"
            )
        return Requirement(key, "gt" if op == ">" else "lt", (val,))
    _check_value(val, text)
    return Requirement(key, "!=" if op == "!=" else "=", (val,))


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
