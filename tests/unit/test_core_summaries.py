"""Spark's executor lists read from their bytes answer as the lists parsed whole do.

``summaries_from`` decodes the six fields the analysis reads and skips the rest; whatever it
takes, its answer must be ``read_summaries(answers.parse(data))``, and whatever it refuses is
parsed whole by its caller. ``spark_time`` reads Spark's own date shape by its second.
"""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_spark.core.summaries import (
    SUMMARY_FIELDS,
    ReadList,
    summaries_from,
    summaries_of,
)
from kubectl_spark.knowledge.times import parse, rfc3339, spark_time
from kubectl_spark.kube import answers
from tests.hostile import hostile, json_value
from tests.spark_lists import real_list, real_summary


def _whole(data: bytes) -> list[object] | None:
    """What a caller read before: the answer parsed whole, then its summaries."""
    return summaries_of(answers.parse(data))


def _agrees(data: bytes) -> ReadList | None:
    read = summaries_from(data)
    if read is not None:
        assert read.summaries == _whole(data)
        assert [list(s) for s in read.summaries if isinstance(s, dict)] == [
            list(s) for s in _whole(data) or [] if isinstance(s, dict)
        ]  # the same fields in the same order: the local store keeps them as JSON
    return read


def test_a_real_drivers_list_is_read_from_its_bytes_as_parsed_whole() -> None:
    read = _agrees(real_list(99))
    assert read is not None  # the fast way was taken
    assert all(set(s) <= set(SUMMARY_FIELDS) for s in read.summaries if isinstance(s, dict))
    assert read.summaries[9] == {
        "id": "9",
        "hostPort": "10.244.0.9:7079",
        "isActive": False,
        "addTime": "2026-12-04T10:00:01Z",
        "removeTime": "2026-12-04T10:10:09Z",
        "removeReason": "The executor with id 9 exited with exit code 137(SIGKILL, possible "
        "container OOM).",
    }


def test_what_the_decoder_does_not_take_is_left_to_the_whole_parse() -> None:
    good = real_summary(9, removed=True)
    refused = [
        b"",
        b"{}",
        b'"a string"',
        orjson.dumps({"kind": "Status", "code": 503}),
        orjson.dumps([good, "not an object"]),
        orjson.dumps([{**good, "id": 7}]),  # a read field of another type
        orjson.dumps([{**good, "isActive": "false"}]),
        orjson.dumps([{**good, "removeTime": None}]),
        b'[{"id": 123456789012345678901234567890}]',  # parsed whole it is a float
        b'[{"id": "1", "junk": NaN}]',
        b'[{"id": "1", "junk": "\\ud800"}]',
        b'[{"id": "1", "junk": ' + b"[" * 5000 + b"]" * 5000 + b"}]",
        b'\xef\xbb\xbf[{"id": "1"}]',
        # bytes that are not UTF-8 where the decoder would only skip: the whole answer is text
        b'[{"id": "1", "junk": "\xff"}]',
    ]
    for data in refused:
        assert summaries_from(data) is None, data
    assert _whole(b'[{"id": "1", "junk": "\xff"}]') is None  # as before: no list at all


def test_what_the_parser_reads_only_at_its_last_resort_is_read_alike() -> None:
    for data in (
        b'[{"id": "1", "junk": 1e400}]',  # the parser's last resort reads infinity
        b'[{"id": "1", "junk": "\xed\xa0\x80"}]',  # a surrogate written as UTF-8
        b'[{"id": "1", "junk": ' + b"[" * 1100 + b"]" * 1100 + b"}]",
        b'[{"id": "1", "id": "2", "isActive": true}] \n',
    ):
        _agrees(data)


summary_value = st.one_of(hostile, json_value, st.sampled_from(["2026-12-04T10:01:02.345GMT"]))
summary = st.dictionaries(
    st.one_of(st.sampled_from(SUMMARY_FIELDS), st.text(max_size=6)), summary_value, max_size=8
)
typed_summary = st.fixed_dictionaries(
    {},
    optional={
        "id": hostile,
        "hostPort": hostile,
        "isActive": st.booleans(),
        "addTime": st.one_of(hostile, st.sampled_from(["2026-12-04T10:01:02.345GMT"])),
        "removeTime": hostile,
        "removeReason": hostile,
        "peakMemoryMetrics": json_value,
        "junk": json_value,
    },
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(typed_summary, summary, json_value), max_size=6))
def test_any_list_is_read_from_its_bytes_as_parsed_whole(listed: list[Any]) -> None:
    try:
        data = orjson.dumps(listed)
    except (TypeError, orjson.JSONEncodeError):
        return  # not JSON (a lone surrogate): no server sends it so
    read = _agrees(data)
    if all(isinstance(s, dict) and s.keys() <= set(SUMMARY_FIELDS) for s in listed) and all(
        isinstance(s[k], bool) if k == "isActive" else isinstance(s[k], str)
        for s in listed
        for k in s
    ):
        assert read is not None  # Spark's own shape takes the fast way


# Pieces of bytes a field may hold: ASCII, UTF-8, a surrogate as UTF-8, bytes that are no
# UTF-8 at all, a broken escape; joined at random, most stay a string JSON can hold.
pieces = st.sampled_from([b"a", b"\xc3\xa9", b"\xed\xa0\x80", b"\xff", b"\xc3", b"\\u", b'"'])
junk_bytes = st.one_of(st.binary(max_size=40), st.lists(pieces, max_size=6).map(b"".join))


@settings(max_examples=300, deadline=None)
@given(junk_bytes, st.integers(0, 2))
def test_any_bytes_inside_a_list_are_read_alike(junk: bytes, where: int) -> None:
    text = [b'[{"id": "1", "x": "', b'"}, {"isActive": true, "y": ', b"}]"]
    text.insert(where + 1, junk)
    _agrees(b"".join(text))


@given(
    st.from_regex(
        r"\A[0-9]{4}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-6][0-9]:[0-6][0-9]\.[0-9]{3}GMT\Z"
    )
)
def test_spark_dates_are_read_by_their_second_as_the_whole_date_is(value: str) -> None:
    whole = parse(value[: -len("GMT")] + "+00:00")
    assert spark_time(value) == (rfc3339(whole) if whole is not None else value)


@given(
    st.one_of(
        hostile, st.from_regex(r"\A[0-9\u0660-\u0669]{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d*)?GMT\Z")
    )
)
def test_any_text_is_read_as_spark_dates_were(value: str) -> None:
    whole = parse(value[: -len("GMT")] + "+00:00") if value.endswith("GMT") else None
    assert spark_time(value) == (rfc3339(whole) if whole is not None else value)
