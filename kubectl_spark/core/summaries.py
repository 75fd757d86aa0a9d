"""Spark's executor list as a running driver's REST API answers it, kept as the analysis reads it.

``GET …/api/v1/applications/<app id>/allexecutors`` (through the pod proxy, ``kube.sparkapi``;
from a History Server, ``kube.historyserver``) answers a list of ExecutorSummary; what is kept
of each is the fields below, with Spark's dates as the API's (``times.spark_time``). The
analysis of those lists is ``core.sparkview``'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from types import GenericAlias

import msgspec

from kubectl_spark.knowledge.times import spark_time

from . import slim

# What the analysis reads of each of Spark's ExecutorSummary (Spark's
# core/src/main/scala/org/apache/spark/status/api/v1/api.scala). The rest of it (memoryUsed,
# activeTasks, totalDuration, peakMemoryMetrics…) moves with every task a driver runs: kept, it
# would turn every poll of a busy driver into a change to analyse again, and hold memory that
# no answer reads.
# Each with the JSON type Spark writes it as: an empty Option is left out, never null (its
# status/api/v1/JacksonMessageWriter.scala: serialization inclusion NON_ABSENT).
_SUMMARY_TYPES: dict[str, type] = {
    "id": str,
    "hostPort": str,
    "isActive": bool,
    "addTime": str,
    "removeTime": str,
    "removeReason": str,
}
SUMMARY_FIELDS = tuple(_SUMMARY_TYPES)
# A list of them decoded from its bytes: the fields above, the rest skipped without being built.
_SUMMARIES = msgspec.json.Decoder(
    GenericAlias(list, (slim.shape("ExecutorSummary", _SUMMARY_TYPES),))
)


@dataclasses.dataclass(frozen=True)
class ReadList:
    """An executor list ``summaries_from`` read from its bytes: ``read_summaries``' answer."""

    summaries: list[object]


def summaries_from(data: bytes) -> ReadList | None:
    """Spark's executor list read from an answer's bytes, or None: the caller parses it whole.

    A real driver's ExecutorSummary carries some thirty fields (memory and GC metrics, log
    URLs, task counters) of which the analysis reads six: parsed whole, most of a list's cost is
    building what is thrown away (``benchmarks/spark_ui_lists.py``), as it was for the pods
    (``slim.pod_page``). The answer is ``read_summaries(answers.parse(data))`` or None: None
    for anything the decoder does not take as it is (not a list of objects, a read field of
    another type, JSON it refuses, nesting past its depth), and for bytes that are not UTF-8
    where it does not read (it skips them; the parser refuses the whole answer), so that the
    caller's parse decides as it did.
    """
    if not data.isascii():
        try:
            data.decode("utf-8", "surrogatepass")  # what the parser's last resort accepts
        except UnicodeDecodeError:
            return None
    try:
        found = _SUMMARIES.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return None
    return ReadList(read_summaries(found))


def summaries_of(found: object) -> list[object] | None:
    """An answer's executor list as the analysis reads it; None when the answer is no list."""
    if isinstance(found, ReadList):
        return found.summaries
    return read_summaries(found) if isinstance(found, list) else None


def read_summaries(found: Sequence[object]) -> list[object]:
    """Spark's executor list as the analysis reads it (``SUMMARY_FIELDS``); readers keep this.

    An item that is not an object is kept as it came: the analysis passes over it.
    """
    return [
        {k: _read_field(k, s[k]) for k in SUMMARY_FIELDS if k in s} if isinstance(s, Mapping) else s
        for s in found
    ]


def _read_field(key: str, value: object) -> object:
    """Spark's REST dates (``2026-12-04T10:01:02.345GMT``) as the API's RFC 3339, others as given."""
    return spark_time(value) if key in ("addTime", "removeTime") else value
