"""Times: parsing the API's RFC 3339 strings, and kubectl's AGE column (``durations``)."""

from __future__ import annotations

from datetime import UTC, datetime

from kubectl_spark.durations import human_duration

__all__ = ["age", "human_duration", "parse", "rfc3339"]


def parse(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def rfc3339(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def age(created: datetime | None, now: datetime) -> str:
    """Kubectl's translateTimestampSince: <unknown> for a missing time."""
    if created is None:
        return "<unknown>"
    return human_duration((now - created).total_seconds())
