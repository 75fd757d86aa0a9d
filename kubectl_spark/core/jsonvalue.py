"""The types of JSON the core writes: its output contract (``-o json``) and its plans' bodies.

What the core reads is the API's JSON, untrusted, typed ``raw.RawObject`` and read through
``raw``'s accessors; what it writes is built here from known values, so mypy checks that every
value put into an answer is JSON (no dataclass, set or datetime slips into ``-o json``).
"""

from __future__ import annotations

from typing import TypeAlias

JsonValue: TypeAlias = bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"] | None
JsonObject: TypeAlias = dict[str, JsonValue]
