"""Times: parsing the API's RFC 3339 strings, and kubectl's AGE column.

``human_duration`` is a port of apimachinery's ``duration.HumanDuration`` (what kubectl's
``translateTimestampSince`` prints), so AGE reads exactly as in ``kubectl get``.
"""

from __future__ import annotations

from datetime import UTC, datetime


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


def human_duration(seconds: float) -> str:
    """Apimachinery HumanDuration for a positive duration."""
    s = int(seconds)  # Go's int(d.Seconds()) truncates toward zero
    if s < -1:
        return "<invalid>"  # 2 s or more in the future
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rest = (s % 3600) // 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        rest = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if rest == 0 else f"{hours // 24 // 365}y{rest}d"
    return f"{hours // 24 // 365}y"


def age(created: datetime | None, now: datetime) -> str:
    """Kubectl's translateTimestampSince: <unknown> for a missing time."""
    if created is None:
        return "<unknown>"
    return human_duration((now - created).total_seconds())
