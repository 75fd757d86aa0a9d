"""What every read command does first: connect, read the snapshot, analyze, find the app."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubectl_spark.cli import globals as cli_globals
from kubectl_spark.core.model import Analysis, App, Attempt, Executor
from kubectl_spark.errors import NotFound, UsageError


@dataclass
class Loaded:
    analysis: Analysis
    namespace: str | None  # None: all namespaces
    api: Any
    snapshot: Any


def connection() -> Any:
    """The connection the global flags describe: each Connection field is the flag of its name."""
    from kubectl_spark.kube.client import Connection

    g = cli_globals.current()
    return Connection(**{f.name: getattr(g, f.name) for f in dataclasses.fields(Connection)})


def load(
    *,
    selector: str | None = None,
    group_by: str | None = None,
    all_namespaces: bool | None = None,
    history: bool = True,
    slim_pods: bool = False,
) -> Loaded:
    """Read the cluster (plus, for reading commands, the local history store) and analyze it.

    Actions pass ``history=False``: a plan is made from the cluster as it is, nothing else.
    ``slim_pods`` (``ls``) keeps only the fields the core reads of each pod.
    """
    from kubectl_spark.core.analyze import analyze
    from kubectl_spark.kube import snapshot
    from kubectl_spark.kube.client import connect

    g = cli_globals.current()
    api = connect(connection())
    everywhere = g.all_namespaces if all_namespaces is None else all_namespaces
    namespace = None if everywhere else api.namespace
    try:
        snap = snapshot.read(api, namespace, selector=selector, slim_pods=slim_pods)
        if history and not g.no_history:
            snap = with_history(api, snap, namespace, selector)
    except BaseException:
        api.close()
        raise
    return Loaded(analyze(snap, group_by=group_by), namespace, api, snap)


def history_path() -> Any:
    from kubectl_spark.history.store import default_path

    g = cli_globals.current()
    return Path(g.history_db).expanduser() if g.history_db else default_path()


def with_history(api: Any, snap: Any, namespace: str | None, selector: str | None) -> Any:
    """Merge what ``kubectl spark record`` kept (never creating a store that is not there)."""
    from kubectl_spark.core import raw
    from kubectl_spark.core.sparkview import merge_kept
    from kubectl_spark.history.store import HistoryStore
    from kubectl_spark.knowledge.selectors import parse_label_selector
    from kubectl_spark.kube.client import history_scope

    # The server already checked the selector's syntax; the same parser applies it here.
    wanted = parse_label_selector(selector)
    with HistoryStore(history_path(), create=False) as store:
        scope = history_scope(api)
        pods = [
            (obj, deleted or seen)
            for obj, seen, deleted in store.load(scope, "pods", namespace)
            if wanted.matches(raw.labels(obj))
        ]
        events = [obj for obj, _, _ in store.load(scope, "events", namespace)]
    return merge_kept(snap, pods, events)


def find_app(analysis: Analysis, reference: str) -> App:
    """An application by name (the newest of that name) or by app id."""
    by_id = [a for a in analysis.apps if a.app_id == reference]
    if by_id:
        return by_id[-1]
    named = [a for a in analysis.apps if a.name == reference]
    if named:
        return max(named, key=lambda a: a.created_at or "")
    by_pod = [a for a in analysis.apps if any(t.driver_pod == reference for t in a.attempts)]
    if by_pod:
        return by_pod[0]
    names = sorted({a.name for a in analysis.apps})
    listing = ", ".join(names[:10]) + (" …" if len(names) > 10 else "") if names else "none here"
    raise NotFound(f'application "{reference}" not found (applications: {listing})', status=404)


def find_attempt(analysis: Analysis, reference: str) -> tuple[App, Attempt]:
    """``<app>/<n>``, ``<app>/latest`` or a driver pod name."""
    app_ref, slash, which = reference.partition("/")
    if not slash:
        for app in analysis.apps:
            for attempt in app.attempts:
                if attempt.driver_pod == reference:
                    return app, attempt
        app = find_app(analysis, reference)
        which = "latest"
    else:
        app = find_app(analysis, app_ref)
    if not app.attempts:
        raise NotFound(f"application {app.name} has no driver attempts", status=404)
    if which in ("latest", ""):
        return app, app.attempts[-1]
    if not which.isdecimal() or not 1 <= int(which) <= len(app.attempts):
        candidates = ", ".join(f"{app.name}/{a.number}" for a in app.attempts)
        raise UsageError(
            f'attempt "{which}" of {app.name} not found: candidates are {candidates}, {app.name}/latest'
        )
    return app, app.attempts[int(which) - 1]


def find_executor(app: App, attempt: Attempt, reference: str) -> Executor:
    """The executor a reference names; an error that says whether it existed, when it is not here.

    Spark numbers a driver's executors 1, 2, 3…: an id below the highest one seen was this
    attempt's, and its pod (with its log) is gone; one above it never was.
    """
    wanted = reference.removeprefix("exec-")
    for executor in attempt.executors:
        if executor.id == wanted or executor.pod == reference:
            return executor
    from kubectl_spark.core.sparkview import exec_number, exec_numbers

    numbers = exec_numbers({e.id for e in attempt.executors})
    number = exec_number(wanted)
    if number is not None and numbers and number < max(numbers):
        raise UsageError(
            f"executor {wanted} of {app.name}/{attempt.number} is gone (Spark numbered it before "
            f"exec-{max(numbers)}): its pod was deleted, and its log with it; "
            f"`kubectl spark describe {app.name}` says why it was lost"
        )
    candidates = (
        ", ".join(f"{app.name}/{attempt.number}/exec-{e.id}" for e in attempt.executors) or "none"
    )
    raise UsageError(
        f'executor "{reference}" not found in {app.name}/{attempt.number}: '
        f"candidates are {candidates}"
    )


@contextmanager
def session() -> Iterator[Loaded]:
    """Read the cluster for an action (no history: plans use the cluster as it is)."""
    loaded = load(history=False)
    try:
        yield loaded
    finally:
        loaded.api.close()


@contextmanager
def one_app(reference: str, *, spark_api: bool = True) -> Iterator[tuple[Loaded, App]]:
    """Read the cluster and find one application (with Spark's executor list, unless not needed)."""
    from kubectl_spark.core.analyze import analyze
    from kubectl_spark.kube.sparkapi import read_views

    loaded = load()
    try:
        app = find_app(loaded.analysis, reference)
        views = read_views(loaded.api, app, list(loaded.snapshot.pods)) if spark_api else {}
        if views:  # Spark's own executor list, for this one application's live drivers
            snap = dataclasses.replace(loaded.snapshot, spark_views=views)
            loaded = Loaded(analyze(snap), loaded.namespace, loaded.api, snap)
            app = find_app(loaded.analysis, reference)
        yield loaded, app
    finally:
        loaded.api.close()
