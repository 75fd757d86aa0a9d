"""Several clusters at once: ``--context a,b`` and ``--all-contexts`` (``ls``, ``tui``).

Platform teams run Spark on several clusters; kubectl reads one context per command. Each
context is read in a thread of its own, as ``--context NAME`` alone would read it, under a
deadline of its own (``--request-timeout``, else ``DEADLINE_SECONDS``), so a cluster that is
slow or gone is named with its reason and never holds up the others' answers.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from kubectl_spark.cli import globals as cli_globals
from kubectl_spark.errors import ContextsFailed, KubectlSparkError

T = TypeVar("T")

# A context read without --request-timeout still ends: one cluster that accepts and never
# answers must not hold up the answer of every other (a dead one ends at the 10 s connect
# timeout of kube/client.py already).
DEADLINE_SECONDS = 30.0
# What a reading thread is given past its deadline to say so itself (its last request is cut
# at the deadline by kube/client.py) before it is named here as late.
GRACE_SECONDS = 2.0


@dataclass
class Reading(Generic[T]):
    """One context's answer, or why there is none."""

    context: str
    answer: T | None = None
    error: str = ""


def asked() -> tuple[str, ...]:
    """The contexts the flags name: () when they name one cluster, as before."""
    g = cli_globals.current()
    if g.all_contexts:
        from kubectl_spark.app.session import context_names

        return tuple(context_names(g.kubeconfig))
    return tuple(dict.fromkeys(g.contexts()))  # a name given twice is read once


def deadline() -> float:
    """The seconds each context is given."""
    return cli_globals.current().request_timeout or DEADLINE_SECONDS


def read_each(contexts: tuple[str, ...], read: Callable[[], T]) -> list[Reading[T]]:
    """``read`` once per context, in parallel, each as if given ``--context NAME`` alone.

    The flags are a context variable: each thread runs in a copy of this one's, with its own
    context and its own --request-timeout, which bounds the whole of its reads.
    """
    base = cli_globals.current()
    seconds = deadline()
    readings = [Reading[T](name) for name in contexts]

    def one(reading: Reading[T]) -> None:
        cli_globals.use(
            replace(base, context=reading.context, all_contexts=False, request_timeout=seconds)
        )
        try:
            reading.answer = read()
        except KubectlSparkError as exc:
            reading.error = exc.message

    threads = [
        threading.Thread(
            target=contextvars.copy_context().run,
            args=(one, reading),
            name=f"context-{reading.context}",
            daemon=True,  # one still stuck when the answer is printed does not hold the exit
        )
        for reading in readings
    ]
    for thread in threads:
        thread.start()
    end = time.monotonic() + seconds + GRACE_SECONDS
    for thread, reading in zip(threads, readings, strict=True):
        thread.join(max(0.0, end - time.monotonic()))
        if thread.is_alive():
            reading.error = f"no answer within {seconds:g} s"
    return readings


def failure(readings: list[Reading[T]]) -> ContextsFailed | None:
    """Why the command fails after the others' answer is printed; None: every context answered."""
    failed = [(r.context, r.error) for r in readings if r.error]
    return ContextsFailed.of(failed, len(readings)) if failed else None
