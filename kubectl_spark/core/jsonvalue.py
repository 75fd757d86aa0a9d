"""The types of JSON the core writes: its output contract (``-o json``) and its plans' bodies.

What the core reads is the API's JSON, untrusted, typed ``raw.RawObject`` and read through
``raw``'s accessors; what it writes is built here from known values, so mypy checks that every
value put into an answer is JSON (no dataclass, set or datetime slips into ``-o json``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeAlias

JsonValue: TypeAlias = bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"] | None
JsonObject: TypeAlias = dict[str, JsonValue]
# A request's body as a plan built it: known values and copies of the API's objects, which
# hold whatever the API sent (hence object). Read-only once built: the transport serializes it.
Body: TypeAlias = Mapping[str, object]


def json_of(value: object) -> JsonValue:
    """``value`` as JSON, checked: a body put into an answer (a plan's ``-o json``).

    A body holds copies of the API's objects, typed ``object``; anything in it that is not JSON
    is a bug of the plan that built it, so it is raised, not printed some other way.
    """
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Mapping):
        return {str(k): json_of(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_of(v) for v in value]
    raise TypeError(f"not JSON: {type(value).__name__}")
