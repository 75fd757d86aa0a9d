"""Protobuf bodies decoded by a table of field numbers: a Job as ``kubectl create job`` sends it.

Field numbers are those of ``k8s.io/api``'s ``generated.proto`` (batch/v1 Job, JobSpec; core/v1
PodTemplateSpec, PodSpec, Container, EnvVar, ResourceRequirements; apimachinery ObjectMeta,
OwnerReference, LabelSelector, Quantity). Go's generated marshallers write every field that is
not a pointer, set or not (an empty string, a zero, an empty struct); such zero values of a field
the table does not list are what an unset field looks like, and are skipped. Any other field the
table does not list is refused (415), never dropped: an object is kept whole or not at all.
"""

from __future__ import annotations

from typing import Any

from .errors import ApiError
from .protowire import Fields, fields

# A field: (JSON name, kind, the message's own table for msg / msgs). Kinds:
#   str / strs   a string (left out when empty) / repeated strings
#   int          an integer, kept when sent (a pointer in Go: zero is a value)
#   bool         a boolean, kept when sent (a pointer in Go); flag: left out when false
#   msg / msgs   a message / repeated messages; map: map<string, string>
#   quantities   map<string, Quantity> (a Quantity is its string form, field 1)
Table = dict[int, tuple[str, str, Any]]

OWNER_REFERENCE: Table = {
    1: ("kind", "str", None),
    3: ("name", "str", None),
    4: ("uid", "str", None),
    5: ("apiVersion", "str", None),
    6: ("controller", "bool", None),
    7: ("blockOwnerDeletion", "bool", None),
}
OBJECT_META: Table = {
    1: ("name", "str", None),
    2: ("generateName", "str", None),
    3: ("namespace", "str", None),
    11: ("labels", "map", None),
    12: ("annotations", "map", None),
    13: ("ownerReferences", "msgs", OWNER_REFERENCE),
    14: ("finalizers", "strs", None),
}
LABEL_SELECTOR: Table = {
    1: ("matchLabels", "map", None),
    2: (
        "matchExpressions",
        "msgs",
        {1: ("key", "str", None), 2: ("operator", "str", None), 3: ("values", "strs", None)},
    ),
}
CONTAINER: Table = {
    1: ("name", "str", None),
    2: ("image", "str", None),
    3: ("command", "strs", None),
    4: ("args", "strs", None),
    5: ("workingDir", "str", None),
    7: ("env", "msgs", {1: ("name", "str", None), 2: ("value", "str", None)}),
    8: (
        "resources",
        "msg",
        {1: ("limits", "quantities", None), 2: ("requests", "quantities", None)},
    ),
    13: ("terminationMessagePath", "str", None),
    14: ("imagePullPolicy", "str", None),
    16: ("stdin", "flag", None),
    17: ("stdinOnce", "flag", None),
    18: ("tty", "flag", None),
    20: ("terminationMessagePolicy", "str", None),
}
POD_SPEC: Table = {
    2: ("containers", "msgs", CONTAINER),
    3: ("restartPolicy", "str", None),
    4: ("terminationGracePeriodSeconds", "int", None),
    5: ("activeDeadlineSeconds", "int", None),
    6: ("dnsPolicy", "str", None),
    7: ("nodeSelector", "map", None),
    8: ("serviceAccountName", "str", None),
    9: ("serviceAccount", "str", None),
    10: ("nodeName", "str", None),
    16: ("hostname", "str", None),
    17: ("subdomain", "str", None),
    19: ("schedulerName", "str", None),
    20: ("initContainers", "msgs", CONTAINER),
    24: ("priorityClassName", "str", None),
    25: ("priority", "int", None),
}
JOB_SPEC: Table = {
    1: ("parallelism", "int", None),
    2: ("completions", "int", None),
    3: ("activeDeadlineSeconds", "int", None),
    4: ("selector", "msg", LABEL_SELECTOR),
    5: ("manualSelector", "bool", None),
    6: ("template", "msg", {1: ("metadata", "msg", OBJECT_META), 2: ("spec", "msg", POD_SPEC)}),
    7: ("backoffLimit", "int", None),
    8: ("ttlSecondsAfterFinished", "int", None),
    9: ("completionMode", "str", None),
    10: ("suspend", "bool", None),
    12: ("backoffLimitPerIndex", "int", None),
    13: ("maxFailedIndexes", "int", None),
    14: ("podReplacementPolicy", "str", None),
}
# kind → (apiVersion, the object's table: metadata = 1, spec = 2, status = 3 left to the server)
KINDS: dict[str, tuple[str, Table]] = {
    "Job": ("batch/v1", {1: ("metadata", "msg", OBJECT_META), 2: ("spec", "msg", JOB_SPEC)}),
}


def decode_object(kind: str, raw: bytes) -> dict[str, Any]:
    """The JSON form of a ``kind`` in ``KINDS``, from the bytes of its message."""
    api_version, table = KINDS[kind]
    return {"apiVersion": api_version, "kind": kind, **_message(fields(raw), table, kind)}


def _message(found: Fields, table: Table, where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for number, values in found.items():
        if number not in table:
            if all(_zero(v) for v in values):
                continue  # what Go writes for a field left unset
            raise ApiError(
                415,
                "UnsupportedMediaType",
                f"the emulator cannot decode field {number} of {where} from protobuf; "
                "send application/json",
            )
        name, kind, inner = table[number]
        value = _value(values, kind, inner, f"{where}.{name}")
        if value is not None:
            out[name] = value
    return out


def _value(values: list[Any], kind: str, inner: Any, where: str) -> Any:
    last = values[-1]
    if kind == "str":
        return bytes(last).decode() or None
    if kind == "strs":
        return [bytes(v).decode() for v in values]
    if kind == "int":
        return last - (1 << 64) if last >= 1 << 63 else last  # int32/int64: two's complement
    if kind == "bool":
        return bool(last)
    if kind == "flag":
        return True if last else None
    if kind == "msg":
        return _message(fields(bytes(last)), inner, where)
    if kind == "msgs":
        return [_message(fields(bytes(v)), inner, where) for v in values]
    entries = [fields(bytes(v)) for v in values]  # map entries: key = 1, value = 2
    if kind == "map":
        return {_text(e, 1): _text(e, 2) for e in entries}
    assert kind == "quantities", kind
    return {_text(e, 1): _text(fields(bytes(e[2][0])), 1) if 2 in e else "" for e in entries}


def _text(found: Fields, number: int) -> str:
    return bytes(found[number][-1]).decode() if number in found else ""


def _zero(value: Any) -> bool:
    """An empty string or struct, a zero, or a struct whose fields are all zero (a zero Time)."""
    if isinstance(value, int):
        return value == 0
    data = bytes(value)
    if not data:
        return True
    try:
        return all(_zero(v) for vs in fields(data).values() for v in vs)
    except (ValueError, IndexError):
        return False  # not a message: a string or bytes that are set
