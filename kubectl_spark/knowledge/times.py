"""Times as the API writes them (RFC 3339), and kubectl's AGE column (``durations``).

The core, the emulator and the simulator all read and write the API's times: one set of rules.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import lru_cache
from typing import overload

from kubectl_spark.knowledge.durations import human_duration

__all__ = [
    "age",
    "human_duration",
    "parse",
    "parse_time",
    "rfc3339",
    "rfc3339_micro",
    "spark_time",
]


def parse(value: object) -> datetime | None:
    """A time the API sent, or None for anything missing or unreadable (never an error)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def spark_time(value: object) -> object:
    """A date of Spark's REST API as RFC 3339; anything else as it came.

    Spark writes its dates as ``yyyy-MM-dd'T'HH:mm:ss.SSS'GMT'`` in UTC (core/.../status/api/v1/
    JacksonMessageWriter.scala, ``JacksonMessageWriter.makeISODateFormat``), which no RFC 3339
    reader takes: read raw, an executor's removeTime looked like no time at all.
    """
    if isinstance(value, str) and value.endswith("GMT"):
        if _SPARK_DATE.fullmatch(value):
            return _spark_second(value[:19]) or value
        parsed = parse(value[: -len("GMT")] + "+00:00")
        if parsed is not None:
            return rfc3339(parsed)
    return value


# Spark's own shape of a date. Its milliseconds always parse and never change the whole second
# RFC 3339 keeps, so the second alone is read, once for all the executors added in it.
_SPARK_DATE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}GMT", re.ASCII)


@lru_cache(maxsize=4096)
def _spark_second(second: str) -> str | None:
    """``yyyy-MM-ddTHH:mm:ss`` of a Spark date as RFC 3339; None when it is no date."""
    return rfc3339(parse(second + "+00:00"))


def parse_time(value: str) -> datetime:
    """An RFC 3339 time the emulator or simulator wrote itself (with or without fractions)."""
    return datetime.fromisoformat(value)


@overload
def rfc3339(value: datetime) -> str: ...
@overload
def rfc3339(value: None) -> None: ...
@overload
def rfc3339(value: datetime | None) -> str | None: ...
def rfc3339(value: datetime | None) -> str | None:
    """Kubernetes' metav1.Time: whole seconds, UTC, trailing Z."""
    return None if value is None else value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc3339_micro(value: datetime) -> str:
    """Kubernetes' metav1.MicroTime (eventTime, Lease times)."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def age(created: datetime | None, now: datetime) -> str:
    """Kubectl's translateTimestampSince: <unknown> for a missing time."""
    if created is None:
        return "<unknown>"
    return human_duration((now - created).total_seconds())
