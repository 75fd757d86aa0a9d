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
        # Read from the head before the items, as the API server writes a list:
        (b'{"kind": "PodList", "metadata": {"continue": "abc"}, "items": [1, 2]}', "abc"),
        (b'{"metadata":{"continue":"abc"},"items":[{"cut short', "abc"),  # the decoding tells
        # "items" met before the answer's own: read from the whole answer
        (b'{"metadata":{"items":1,"continue":"a"},"items":[]}', "a"),
        (b'{"metadata":{"x":{"items":1},"continue":"a"},"items":[]}', "a"),
        (b'{"metadata":{"x":"' + b"y" * 5000 + b'","continue":"a"},"items":[]}', "a"),
        (b'{"metadata":null,"items":[]}', ""),
    ],
)
def test_the_continue_token_is_read_from_a_list_answer_alone(data: bytes, token: str) -> None:
    assert _continue_of(data) == token
