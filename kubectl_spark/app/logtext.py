"""A gone pod's log: the last lines a keeper kept, and what ``logs`` and the TUI say about them.

Spark deletes a lost executor's pod, and its log with it, within a second; ``kubectl spark
record`` (the local store) and the in-cluster recorder keep the last lines of containers that
stop with an error. ``logs`` and the TUI's log view ask them in the same order, here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubectl_spark.errors import KubectlSparkError
from kubectl_spark.kube import recorder_api, trace
from kubectl_spark.kube.client import Api, history_scope
from kubectl_spark.kube.logtails import kept_tail
from kubectl_spark.kube.recorder_api import RecorderRef
from kubectl_spark.localstore import LocalStore

KEEP_HINT = " (`kubectl spark record` keeps the last lines of containers that stop with an error)"
PREVIOUS_GONE = (
    "log went with it, and no run before its last was kept (`kubectl spark record` keeps each "
    "run that stops with an error; without -p, the last run's lines if kept)"
)
LOCAL_KEEPER = "kubectl spark record"


@dataclass(frozen=True)
class KeptLines:
    """The lines one keeper kept of one run (``kube.logtails``'s document), and who kept them."""

    doc: dict[str, Any]
    keeper: str  # "kubectl spark record", or "the recorder NAMESPACE/NAME"

    @property
    def text(self) -> str:
        return str(self.doc.get("text") or "")

    def run_said(self, *, earlier: bool = False) -> str:
        """Which run the lines are of: "last run, exit code 52".

        ``earlier``: they were asked for as the run before the last (``logs -p``).
        """
        if earlier:
            which = "the run before the last"
        else:
            which = "previous run" if self.doc.get("previous") is True else "last run"
        return f"{which}, exit code {self.doc.get('exitCode')}"


def kept_lines(
    api: Api,
    namespace: str,
    uid: str,
    *,
    previous: bool,
    store: LocalStore | Path | None,
    recorder: RecorderRef | str | None,
    warn: Callable[[str], None] | None = None,
) -> KeptLines | None:
    """The last lines kept of the gone pod ``uid``: the local store's first, then a recorder's.

    ``store``: an open store, or the path of one (not created when missing); ``recorder``: one
    found, or what ``--recorder`` asks (auto, none, NAMESPACE/NAME). A recorder that does not
    answer is ``warn``-ed (when given) and counts as one that kept nothing. With ``previous``,
    the run before the last.
    """
    doc = _kept_locally(api, store, namespace, uid, previous) if store is not None else None
    if doc is not None:
        return KeptLines(doc, LOCAL_KEEPER)
    ref = recorder_api.find(api, recorder) if isinstance(recorder, str) else recorder
    if ref is None:
        return None
    try:
        doc = recorder_api.log_tail(api, ref, namespace, uid, previous=previous)
    except KubectlSparkError as exc:
        if warn is not None:
            warn(f"the recorder {ref} did not answer ({exc.message}): its kept lines are not shown")
        return None
    if doc is None:
        return None
    if api.verbosity >= trace.REQUESTS:
        trace.line("logs.py", f"recorder {ref} (aggregated API): the kept lines of pod {uid}")
    return KeptLines(doc, f"the recorder {ref}")


def _kept_locally(
    api: Api, store: LocalStore | Path, namespace: str, uid: str, previous: bool
) -> dict[str, Any] | None:
    if isinstance(store, LocalStore):
        return kept_tail(store, history_scope(api), namespace, uid, previous=previous)
    with LocalStore(store, create=False) as opened:
        return kept_tail(opened, history_scope(api), namespace, uid, previous=previous)
