"""``kubectl spark ls``: one row per application."""

from __future__ import annotations

import dataclasses
import sys
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import typer

from kubectl_spark import errors
from kubectl_spark.cli import common, render
from kubectl_spark.cli import globals as cli_globals
from kubectl_spark.cli.terminal import escape
from kubectl_spark.core.model import Analysis, App, Attempt
from kubectl_spark.knowledge.times import age, parse

HEADERS = ("APP", "STATE", "ATTEMPT", "DRIVER", "EXECUTORS", "LOST", "RESTARTS", "ALERTS", "AGE")
WIDE = ("NODE", "APP-ID", "SOURCE")
NOT_LOST = {"Completed", "Decommissioned", "DeletedByDriver"}


def lost_summary(app: App) -> str:
    by_category: Counter[str] = Counter()
    for attempt in app.attempts:
        for executor in attempt.executors:
            if executor.reason is not None and executor.reason.code not in NOT_LOST:
                by_category[executor.reason.category] += 1
    if not by_category:
        return "0"
    order = ("app", "cluster", "driver", "user", "unknown")
    return ", ".join(f"{by_category[c]} {c}" for c in order if by_category[c])


INIT_EVIDENCE = "status.initContainerStatuses["


def driver_cell(attempt: Attempt | None) -> str:
    """The current driver's state, and why it waits, as kubectl's STATUS says it (no spaces).

    "Pending" alone sends the reader to `describe`; ``Pending:ImagePullFailure`` does not. A
    driver waiting after it ran restarts in place: kubectl's word for that is CrashLoopBackOff.
    One waiting on an init container (its evidence reads the init container's status) says
    ``Init:ExitCode``, ``Init:ImagePullFailure``: "Pending:ExitCode" hid that the Spark
    container never ran.
    """
    if attempt is None:
        return "-"
    waiting = attempt.waiting
    if waiting is None:
        return attempt.state
    if any(e.startswith(INIT_EVIDENCE) for e in waiting.evidence):
        return f"Init:{waiting.code}"  # kubectl's Init:… : the Spark container never started
    return f"Pending:{waiting.code}" if attempt.state == "Pending" else "CrashLoopBackOff"


def row(app: App, now: datetime, *, all_namespaces: bool, wide: bool) -> list[str]:
    current = app.current
    executors = current.executors if current else ()
    running = sum(1 for e in executors if e.state == "Running")
    restarts = sum(a.restarts + sum(e.restarts for e in a.executors) for a in app.attempts)
    alerts = ",".join(dict.fromkeys(a.type for a in app.alerts)) or "-"
    cells = [
        app.name,
        app.state,
        f"{current.number}/{len(app.attempts)}" if current else "0/0",
        driver_cell(current),
        f"{running}/{len(executors)}",
        lost_summary(app),
        str(restarts),
        alerts,
        age(parse(app.created_at), now),
    ]
    if all_namespaces:
        cells.insert(0, app.namespace)
    if wide:
        cells += [(current.node if current else None) or "-", app.app_id or "-", app.source]
    return cells


def headers(*, all_namespaces: bool, wide: bool) -> list[str]:
    out = list(HEADERS)
    if all_namespaces:
        out.insert(0, "NAMESPACE")
    if wide:
        out += list(WIDE)
    return out


def sort_key(app: App) -> tuple[str, str, str]:
    return (app.namespace, app.name, app.created_at or "")


def sorted_by(apps: list[App], path: str) -> list[App]:
    """Sorted as kubectl's --sort-by: by a JSONPath's value in each app's JSON (missing first)."""
    template = by_path(path)

    def key(app: App) -> tuple[int, Any]:
        values = template.results(app.to_json())
        value = values[0] if values else None
        if value is None:
            return (0, "")
        if isinstance(value, (bool, int, float)):
            return (1, float(value))
        if isinstance(value, str):
            return (2, value)
        return (3, str(value))

    return sorted(apps, key=key)


def by_path(path: str) -> Any:
    """A --sort-by path as a template; kubectl takes it with or without braces."""
    from kubectl_spark.cli.jsonpath import Template

    return Template(path if path.startswith("{") else "{" + path + "}")


def render_analysis(
    analysis: Analysis,
    output: str,
    *,
    all_namespaces: bool,
    no_headers: bool,
    now: datetime,
    sort_by: str = "",
) -> str:
    apps = sorted(analysis.apps, key=sort_key)
    if sort_by:
        apps = sorted_by(apps, sort_by)
    if render.is_document(output):
        doc = analysis.to_json()
        doc["items"] = [a.to_json() for a in apps]
        return render.document(doc, output, no_headers=no_headers)
    if output == "name":
        return "".join(f"sparkapp/{app.name}\n" for app in apps)
    wide = output == "wide"
    rows = [row(app, now, all_namespaces=all_namespaces, wide=wide) for app in apps]
    text = (
        render.table(headers(all_namespaces=all_namespaces, wide=wide), rows, no_headers=no_headers)
        if rows
        else ""
    )
    if analysis.ungrouped:
        text += f'\n{len(analysis.ungrouped)} Spark pod(s) fit no application (see -o json, "ungrouped"):\n'
        text += "".join(
            f"  {u.namespace}/{u.pod} ({u.role}): {u.why}\n" for u in analysis.ungrouped
        )
    return text


def run(
    output: str = typer.Option(
        "",
        "--output",
        "-o",
        help="Output format: wide, json, yaml, name, jsonpath=… or custom-columns=… (default: a table).",
    ),
    selector: str = typer.Option(
        "", "--selector", "-l", help="Label selector (=, ==, !=, in, notin, exists) on the pods."
    ),
    no_headers: bool = typer.Option(
        False, "--no-headers", help="Do not print the table's header line."
    ),
    group_by: str = typer.Option(
        "", "--group-by", help="Group pods into applications by this label instead."
    ),
    watch: bool = typer.Option(
        False, "--watch", "-w", help="Keep the table live: reprint rows as applications change."
    ),
    watch_only: bool = typer.Option(
        False, "--watch-only", help="Like --watch, without listing the applications first."
    ),
    sort_by: str = typer.Option(
        "", "--sort-by", help="Sort by a JSONPath into each application's JSON, e.g. .createdAt."
    ),
    field_selector: str = typer.Option(
        "",
        "--field-selector",
        help="Only applications with a pod matching this field selector, e.g. spec.nodeName=node-a.",
    ),
) -> None:
    """List Spark applications: attempts, executors, losses, alerts."""
    chosen = render.check_output(output)
    if sort_by:
        by_path(sort_by)  # a bad path is refused before anything is read
    everywhere = cli_globals.current().all_namespaces
    loaded = common.load(selector=selector or None, group_by=group_by or None, slim_pods=True)
    try:
        if field_selector:
            loaded.analysis = with_pods_matching(loaded, selector, field_selector)
        now = loaded.snapshot.now
        if watch_only:
            text = (
                "" if no_headers or chosen not in ("table", "wide") else _header(chosen, everywhere)
            )
        else:
            text = render_analysis(
                loaded.analysis,
                chosen,
                all_namespaces=everywhere,
                no_headers=no_headers,
                now=now,
                sort_by=sort_by,
            )
        if not loaded.analysis.apps and chosen in ("table", "wide") and not watch_only:
            where = "any namespace" if loaded.namespace is None else f"{loaded.namespace} namespace"
            sys.stderr.write(f"No Spark applications found in {where}.\n")
        sys.stdout.write(text)
        sys.stdout.flush()
        if watch or watch_only:
            view = _WatchView(
                chosen, everywhere, selector or None, group_by or None, field_selector
            )
            _watch(loaded, view)
    finally:
        loaded.api.close()


def with_pods_matching(
    loaded: common.Loaded, selector: str, field_selector: str, analysis: Analysis | None = None
) -> Analysis:
    """The applications (and ungrouped pods) with a pod the field selector matches.

    Whole applications are analyzed, then kept or not: a driver on another node still counts
    as its attempt's driver (filtering the pods themselves would make it look gone). The
    server matches the pods (one LIST of them, by field selector): its rules are the rules.
    """
    base = (
        "/api/v1/pods"
        if loaded.namespace is None
        else f"/api/v1/namespaces/{loaded.namespace}/pods"
    )
    matching, _ = loaded.api.list(
        base,
        label_selector="spark-role" + (f",{selector}" if selector else ""),
        field_selector=field_selector,
        what="list pods by field selector",
        keep=lambda pod: (pod.get("metadata") or {}).get("uid", ""),
    )
    uids = set(matching)

    def has_one(app: App) -> bool:
        return any(a.uid in uids or any(e.uid in uids for e in a.executors) for a in app.attempts)

    analysis = analysis or loaded.analysis
    return dataclasses.replace(
        analysis,
        apps=tuple(a for a in analysis.apps if has_one(a)),
        ungrouped=tuple(u for u in analysis.ungrouped if u.uid in uids),
    )


def _header(output: str, everywhere: bool) -> str:
    return render.table(headers(all_namespaces=everywhere, wide=output == "wide"), [])


class _Relist(Exception):
    """The watch answered 410: its resourceVersion is too old; list again."""


@dataclass(frozen=True)
class _WatchView:
    """What ``ls -w`` prints and what it follows, kept across a re-list."""

    output: str
    everywhere: bool
    selector: str | None
    group_by: str | None
    field_selector: str = ""


def _watch(loaded: common.Loaded, view: _WatchView) -> None:
    """Follow pod changes from a watch (not polling) and reprint the rows that changed.

    With a field selector, the watch still follows every Spark pod (an application is analyzed
    whole), and each burst of changes asks the server again which pods match.
    """
    api = loaded.api
    base = (
        "/api/v1/pods"
        if loaded.namespace is None
        else f"/api/v1/namespaces/{loaded.namespace}/pods"
    )
    pods: dict[str, Any] = {
        p["metadata"]["uid"]: p for p in loaded.snapshot.pods if isinstance(p, dict)
    }
    rv = loaded.snapshot.pods_resource_version
    shown = {
        (a.namespace, a.name): row(
            a, api.now(), all_namespaces=view.everywhere, wide=view.output == "wide"
        )
        for a in loaded.analysis.apps
    }
    while True:
        query = [
            ("watch", "true"),
            ("resourceVersion", rv),
            ("allowWatchBookmarks", "true"),
            ("labelSelector", "spark-role" + (f",{view.selector}" if view.selector else "")),
        ]
        try:
            for batch in api.watch(base, query, what="watch pods"):
                rv, changed = _apply(batch, pods, rv, api.now())
                if changed:
                    _reprint(loaded, pods, shown, view)
        except errors.ClusterUnreachable as exc:
            # Cut mid-stream: say so, and resume from the last resourceVersion seen.
            sys.stderr.write(f"reconnecting: {escape(exc.message)}\n")
            time.sleep(0.5)
        except _Relist:
            return _rewatch(loaded, view)


def _apply(
    batch: list[dict[str, Any]], pods: dict[str, Any], rv: str, now: datetime
) -> tuple[str, bool]:
    """One burst of watch events into ``pods``: (the new resourceVersion, anything changed?)."""
    from kubectl_spark.core.sparkview import kept_copy
    from kubectl_spark.knowledge.times import rfc3339

    changed = False
    for event in batch:
        obj = event.get("object") or {}
        kind = event.get("type")
        if kind == "ERROR":
            raise _Relist
        rv = str((obj.get("metadata") or {}).get("resourceVersion") or rv)
        if kind == "BOOKMARK":
            continue
        uid = (obj.get("metadata") or {}).get("uid", "")
        # A deleted pod's last state still explains its loss.
        pods[uid] = kept_copy(obj, "watch", rfc3339(now) or "") if kind == "DELETED" else obj
        changed = True
    return rv, changed


def _reprint(
    loaded: common.Loaded,
    pods: dict[str, Any],
    shown: dict[tuple[str, str], list[str]],
    view: _WatchView,
) -> None:
    """Analyze the pods as they are now and print the rows that changed."""
    from kubectl_spark.core.analyze import analyze

    now = loaded.api.now()
    fresh = analyze(
        dataclasses.replace(loaded.snapshot, pods=list(pods.values()), now=now),
        group_by=view.group_by,
    )
    if view.field_selector:
        fresh = with_pods_matching(loaded, view.selector or "", view.field_selector, fresh)
    output, everywhere = view.output, view.everywhere
    for app in sorted(fresh.apps, key=sort_key):
        cells = row(app, now, all_namespaces=everywhere, wide=output == "wide")
        key = (app.namespace, app.name)
        if shown.get(key, [])[:-1] != cells[:-1]:  # AGE alone changing is no news
            shown[key] = cells
            if render.is_document(output):  # a custom-columns header was printed with the list
                sys.stdout.write(render.document(app.to_json(), output, no_headers=True))
            else:
                sys.stdout.write(
                    render.table(
                        headers(all_namespaces=everywhere, wide=output == "wide"),
                        [cells],
                        no_headers=True,
                    )
                )
            sys.stdout.flush()


def _rewatch(loaded: common.Loaded, view: _WatchView) -> None:
    """A 410 on the watch: list again (a fresh snapshot) and watch from there."""
    fresh = common.load(selector=view.selector, group_by=view.group_by, slim_pods=True)
    loaded.api.close()
    try:
        _watch(fresh, view)
    finally:
        fresh.api.close()
