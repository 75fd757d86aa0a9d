"""Field selectors, and label selectors as the API server answers them (400 on a bad one).

The label grammar itself is Kubernetes knowledge the CLI shares: ``kubectl_spark.knowledge.selectors``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kubectl_spark.knowledge.selectors import (
    LABEL_KEY,
    LABEL_VALUE,
    LabelSelector,
    Requirement,
    SelectorError,
    selector_from_match,
)
from kubectl_spark.knowledge.selectors import parse_label_selector as _parse_labels

from .errors import bad_request

__all__ = ["LabelSelector", "Requirement", "parse_label_selector", "selector_from_match"]


def parse_label_selector(text: str | None) -> LabelSelector:
    """A labelSelector query value; a bad one is the 400 kube-apiserver answers."""
    try:
        return _parse_labels(text)
    except SelectorError as exc:
        raise bad_request(str(exc)) from exc


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
        if not isinstance(key, str) or not LABEL_KEY.match(key) or len(key.split("/")[-1]) > 63:
            causes.append(
                (
                    "FieldValueInvalid",
                    field,
                    f"Invalid value: \"{key}\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
                )
            )
        if not isinstance(value, str) or len(value) > 63 or not LABEL_VALUE.match(value):
            causes.append(
                (
                    "FieldValueInvalid",
                    f"{field}",
                    f"Invalid value: \"{value}\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
                )
            )
    return causes
