"""A list page's continue token is read before its items are decoded, and only from a list."""

from __future__ import annotations

import pytest

from kubectl_spark.kube.paging import _continue_of


@pytest.mark.parametrize(
    ("data", "token"),
    [
        (
            b'{"kind":"PodList","metadata":{"continue":"abc","resourceVersion":"7"},"items":[]}',
            "abc",
        ),
        (b'{"items":[{"metadata":{"continue":"not-this"}}],"metadata":{"continue":"x"}}', "x"),
        (b'{"kind":"PodList","metadata":{"resourceVersion":"7"},"items":[{"a":1}]}', ""),
        (b'{"metadata":{"continue":7},"items":[]}', ""),  # not text: the decoding tells
        (b'{"metadata":[],"items":[]}', ""),
        (b'[{"metadata":{"continue":"abc"}}]', ""),  # not a list answer
        (b"not json", ""),
        (b'{"metadata":{"continue":"abc"', ""),  # cut short
    ],
)
def test_the_continue_token_is_read_from_a_list_answer_alone(data: bytes, token: str) -> None:
    assert _continue_of(data) == token
