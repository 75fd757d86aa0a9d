"""Any -o jsonpath template, however broken, is rendered or refused with one line: never a crash."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_spark.cli.jsonpath import Template
from kubectl_spark.errors import UsageError

DOC = {"items": [{"a": 1, "b": [1, 2], "c": {"d": "x"}}, {"a": "s", "b": []}], "n": None}
PIECES = [
    *"{}[]().?@*$:,'\"=!<>- \\abn0123",
    "range ", "end", ".items", ".a", "[*]", "[?(@.a==1)]", "[0]", "[-1]", "[1:2:0]", "[::-1]", "..",
]  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12).map("".join))
def test_any_template_renders_or_is_refused_in_one_line(template: str) -> None:
    refusal = ""
    try:
        Template(template).render(DOC)
    except UsageError as exc:
        refusal = exc.message
    assert "\n" not in refusal


@pytest.mark.parametrize(
    ("template", "why"),
    [
        ("{.items[1:2:0]}", "step must be > 0"),
        ("{.items[::-1]}", "step must be > 0"),
        ("{.items[1:2:3:4]}", "invalid array index 1:2:3:4"),
        ("{.items[a:b]}", "invalid array index a:b"),
    ],
)
def test_a_bad_slice_is_refused(template: str, why: str) -> None:
    with pytest.raises(UsageError, match=why):
        Template(template).render(DOC)
