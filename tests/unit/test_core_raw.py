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
