"""A cluster view: the snapshot read once, and the one analysis every front end shows.

``ls``, ``describe``, ``history``, the actions and the TUI's first paint all load it here, with
the same sources in the same order: the cluster's objects, what the local history store kept
(``kubectl spark record``, or a TUI that was open) and an in-cluster recorder kept (``kubectl
spark recorder``, read through the API server as an aggregated API), and Spark's own executor lists from the
running drivers. Reading the same sources is what makes their answers the same.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubectl_spark.app.spark_lists import keep_and_recall
from kubectl_spark.core import raw
from kubectl_spark.core.analyze import analyze
from kubectl_spark.core.inputs import Snapshot
from kubectl_spark.core.model import Analysis, App
from kubectl_spark.core.selecting import select_apps
from kubectl_spark.core.sparkview import merge_kept
from kubectl_spark.errors import UsageError
from kubectl_spark.knowledge.selectors import LabelSelector, SelectorError, parse_label_selector
from kubectl_spark.kube import snapshot as reading
from kubectl_spark.kube import trace
from kubectl_spark.kube.client import Api, history_scope
from kubectl_spark.kube.incluster import Discovery
from kubectl_spark.kube.sparkapi import ViewReads

if TYPE_CHECKING:
    from kubectl_spark.errors import KubectlSparkError


@dataclass(frozen=True)
class Wanted:
    """What to read, and from where."""

    namespace: str | None  # None: every namespace
    selector: str | None = None
    group_by: str | None = None
    history: Path | None = None  # the history store to merge (None: none)
    slim_pods: bool = False  # keep only what the core reads of each pod (not for plans)
    spark_api: bool = True  # ask running drivers for Spark's executor list
    # A Spark History Server for finished drivers' executor lists: a URL, NAMESPACE/NAME of its
    # Service, auto (found by its label), none (None: not asked)
    history_server: str | None = None
    recorder: str | None = None  # an in-cluster recorder: auto, NAMESPACE/NAME (None: not asked)
    # A running driver's UI outside the cluster (Spark's client mode): its URL (None: none)
    spark_ui: str | None = None


@dataclass
class ClusterView:
    analysis: Analysis
    namespace: str | None  # None: all namespaces
    api: Api
    snapshot: Snapshot

    def close(self) -> None:
        self.api.close()


def label_selector(text: str | None) -> LabelSelector:
    """``-l``'s selector, refused before anything is read when it does not parse."""
    try:
        return parse_label_selector(text)
    except SelectorError as exc:
        raise UsageError(f"invalid label selector {text!r}: {exc}") from None


def load(api: Api, wanted: Wanted) -> ClusterView:
    """Read and analyze; the connection stays open for what the caller does next.

    ``-l`` selects applications (``core.selecting``): every Spark pod is read, so that a
    selected application is shown whole, and the selector is matched against its objects.
    """
    selector = label_selector(wanted.selector)
    spark = ViewReads(api) if wanted.spark_api else None  # asked while the pods are listed
    snap, index = reading.read_indexed(
        api, wanted.namespace, slim_pods=wanted.slim_pods, spark=spark
    )
    discovery = Discovery(api)  # the recorder and the History Server found by one list
    if wanted.history is not None or wanted.recorder:
        snap = with_history(api, snap, wanted, discovery)
    if spark is not None:
        # The drivers among the pods the cluster listed (kept copies of gone pods have no UI)
        drivers = snap.pods if index is None else index.drivers
        snap = dataclasses.replace(snap, spark_views=spark.views(drivers, snap.nodes))
        if wanted.history is not None:  # what they said is kept for when they are gone
            snap = keep_and_recall(api, snap, wanted.history, wanted.namespace)
    if wanted.history_server and wanted.history_server != "none":
        snap = dataclasses.replace(
            snap, finished_views=_finished_views(api, snap, wanted.history_server, discovery)
        )
    if wanted.spark_ui:
        from kubectl_spark.kube.historyserver import read_running_ui

        told = read_running_ui(wanted.spark_ui)
        for note in (v["note"] for k, v in told.items() if not k and "note" in v):
            api.note(note)
        views = {k: v for k, v in told.items() if k}
        snap = dataclasses.replace(snap, finished_views={**snap.finished_views, **views})
    analysis = select_apps(analyze(snap, group_by=wanted.group_by), snap, selector)
    return ClusterView(analysis, wanted.namespace, api, snap)


def applications(api: Api, namespace: str | None) -> list[App]:
    """What the cluster's objects alone show (no keepers, no Spark asked): completion's offer."""
    return list(analyze(reading.read(api, namespace)).apps)


def _finished_views(
    api: Api, snap: Snapshot, history_server: str, discovery: Discovery
) -> dict[str, dict[str, Any]]:
    """Ended attempts' executor lists from a Spark History Server.

    Read at its URL, or through the service proxy (its Service named, or found by its label).
    """
    from kubectl_spark.kube import historyserver

    ids = historyserver.finished_app_ids(snap)
    if not ids:
        return {}
    if history_server.startswith(("http://", "https://")):
        views, where = historyserver.read_finished(history_server, ids), history_server
    else:
        ref = historyserver.find(api, history_server, discovery)
        if ref is None:
            return {}
        views = historyserver.read_finished_through(api, ref, ids)
        where = f"{ref} (service proxy)"
    if api.verbosity >= trace.REQUESTS:  # where each answer came from, as -v=6 promises
        for app_id, view in views.items():
            told = view.get("note") or f"{len(view.get('executors') or [])} executor(s)"
            trace.line("view.py", f"Spark History Server {where}: {app_id}: {told}")
    return views


def with_history(
    api: Api, snap: Snapshot, wanted: Wanted, discovery: Discovery | None = None
) -> Snapshot:
    """Merge what the history store and the in-cluster recorder kept (``kept``)."""
    pods, events = kept(api, wanted.namespace, wanted.history, wanted.recorder, discovery)
    for source in ("history", "recorder"):
        chosen = [(o, seen) for o, seen, s in pods if s == source]
        snap = merge_kept(snap, chosen, events if source == "history" else [], source)
    return snap


def kept(
    api: Api,
    namespace: str | None,
    history: Path | None,
    recorder: str | None,
    discovery: Discovery | None = None,
) -> tuple[list[tuple[dict[str, Any], str, str]], list[dict[str, Any]]]:
    """(pod, seen at, "history" or "recorder") and the Events the two keepers kept.

    The same pod kept by both is taken from whichever saw it last (the higher
    resourceVersion; the local store on a tie). Neither is created or required: a store that is
    not there and a recorder that is not deployed add nothing. The TUI seeds its watches with
    the same.
    """
    local = _local_kept(api, namespace, history) if history is not None else ([], [])
    remote = _recorder_kept(api, namespace, recorder, discovery) if recorder else ([], [])
    return newest_kept(local, remote)


Kept = tuple[list[tuple[dict[str, Any], str]], list[dict[str, Any]]]


def newest_kept(
    local: Kept, remote: Kept
) -> tuple[list[tuple[dict[str, Any], str, str]], list[dict[str, Any]]]:
    """Each pod once, from whichever keeper saw it last; the Events of both, each once."""
    newest: dict[str, tuple[int, dict[str, Any], str, str]] = {}
    for source, (found, _) in (("history", local), ("recorder", remote)):
        for obj, seen in found:
            uid = raw.uid(obj)
            version = _rv(obj)
            if uid and (uid not in newest or version > newest[uid][0]):
                newest[uid] = (version, obj, seen, source)
    events = {raw.uid(e): e for e in (*local[1], *remote[1]) if raw.uid(e)}
    return [(o, seen, s) for _, o, seen, s in newest.values()], list(events.values())


def _rv(obj: dict[str, Any]) -> int:
    text = raw.text(obj, "metadata", "resourceVersion")
    return int(text) if text.isdecimal() else 0


def _local_kept(api: Api, namespace: str | None, history: Path) -> Kept:
    from kubectl_spark.localstore import LocalStore

    with LocalStore(history, create=False) as store:
        scope = history_scope(api)
        pods = [
            (obj, deleted or seen) for obj, seen, deleted in store.load(scope, "pods", namespace)
        ]
        events = [obj for obj, _, _ in store.load(scope, "events", namespace)]
    if api.verbosity >= trace.REQUESTS:
        trace.line(
            "view.py",
            f"history store {history}: {len(pods)} pod state(s) and {len(events)} "
            f"Event(s) kept for {scope.context}",
        )
    return pods, events


def _recorder_silent(api: Api, ref: object, exc: KubectlSparkError) -> None:
    from kubectl_spark.errors import Forbidden

    # A refusal is the cluster's RBAC speaking (the recorder answers only what its caller
    # may read: kube/delegation.py), not a recorder that is down.
    told = "refused you" if isinstance(exc, Forbidden) else "did not answer"
    api.note(
        f"the recorder {ref} {told} ({exc.message}): what it kept is not shown "
        "(--recorder none skips it)"
    )


def _recorder_kept(
    api: Api, namespace: str | None, recorder: str, discovery: Discovery | None
) -> Kept:
    """What the in-cluster recorder kept; a warning, and nothing, when it does not answer."""
    from kubectl_spark.errors import KubectlSparkError, NotFound, UsageError
    from kubectl_spark.kube import recorder_api

    ref = recorder_api.find(api, recorder, discovery)
    if ref is None:
        return [], []
    try:
        pods = [
            (obj, deleted or seen)
            for obj, seen, deleted in recorder_api.kept(api, ref, "pods", namespace)
        ]
        events = [obj for obj, _, _ in recorder_api.kept(api, ref, "events", namespace)]
    except NotFound as exc:
        if recorder not in (recorder_api.AUTO, ""):
            # A recorder the user named that is not there is bad input, not a passing fault.
            raise UsageError(
                f"--recorder {recorder}: no such recorder ({exc.message}); name one with "
                "NAMESPACE/NAME, or --recorder none"
            ) from exc
        _recorder_silent(api, ref, exc)
        return [], []
    except KubectlSparkError as exc:
        _recorder_silent(api, ref, exc)
        return [], []
    if api.verbosity >= trace.REQUESTS:
        trace.line(
            "view.py",
            f"recorder {ref} (aggregated API): {len(pods)} pod state(s) and {len(events)} "
            "Event(s) kept",
        )
    return pods, events
