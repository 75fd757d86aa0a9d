"""Where an Event the API aggregated sits in a timeline, and what its entry says of the repeats."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_spark.core.history import _aggregated

A, B = "2026-03-01T00:00:00Z", "2026-03-01T00:05:00Z"


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        ({"count": 1, "firstTimestamp": A, "lastTimestamp": A}, (A, "")),
        ({"lastTimestamp": B}, (B, "")),  # no count: once
        ({"count": 3, "firstTimestamp": A, "lastTimestamp": B}, (A, f" (x3, the last at {B})")),
        ({"count": 2, "firstTimestamp": A, "lastTimestamp": A}, (A, " (x2)")),
        # events.k8s.io's form, as the core API shows it: eventTime and a series
        (
            {
                "eventTime": "2026-03-01T00:00:00.123456Z",
                "series": {"count": 4, "lastObservedTime": B},
            },
            (A, f" (x4, the last at {B})"),
        ),
        ({"count": 5, "lastTimestamp": B}, (B, " (x5)")),  # no first time: at the last one
        (
            {"count": "x", "firstTimestamp": A, "lastTimestamp": B, "series": []},
            (B, ""),
        ),  # malformed
    ],
)
def test_an_aggregated_event_sits_at_its_first_time(event: dict[str, Any], expected: Any) -> None:
    assert _aggregated(event) == expected
