"""One label read on its own says what reading them all says, whatever the object holds."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_spark.core import raw

from .test_core_grouping import json_value

KEY = "spark-exec-inactive"
label_values = st.one_of(json_value, st.just("true"), st.just(True), st.just(1), st.just(None))
labels = st.one_of(
    st.dictionaries(st.sampled_from([KEY, "spark-role", "x"]), label_values, max_size=3),
    json_value,
)
objects = st.one_of(
    st.fixed_dictionaries({"metadata": st.fixed_dictionaries({"labels": labels})}),
    st.fixed_dictionaries({"metadata": json_value}),
    json_value,
)


@settings(max_examples=500, deadline=None)
@given(objects)
def test_one_label_reads_as_all_labels_do(obj: Any) -> None:
    assert raw.label(obj, KEY) == raw.labels(obj).get(KEY, "")


KEYS = st.sampled_from(["phase", "reason", "x", ""])


@settings(max_examples=500, deadline=None)
@given(st.one_of(json_value, st.dictionaries(KEYS, json_value, max_size=3)), KEYS)
def test_one_key_read_in_line_reads_as_the_general_path_does(obj: Any, key: str) -> None:
    """``text``, ``number`` and ``mapping`` read one key of a dict without ``get``'s loop."""
    wrapped = {"wrapper": obj}  # two keys: the general path
    assert raw.text(obj, key) == raw.text(wrapped, "wrapper", key)
    assert raw.number(obj, key) == raw.number(wrapped, "wrapper", key)
    assert raw.mapping(obj, key) == raw.mapping(wrapped, "wrapper", key)
