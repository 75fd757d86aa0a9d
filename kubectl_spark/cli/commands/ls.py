"""``kubectl spark ls``: one row per application."""

from __future__ import annotations

import dataclasses
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import typer

from kubectl_spark.app.present import (
    app_labels,
    headers,
    label_cells,
    label_headers,
    row,
    sort_key,
)
from kubectl_spark.app.summary import analysis_json, app_json
from kubectl_spark.app.text import escape
from kubectl_spark.app.view import label_selector
from kubectl_spark.cli import clusters, common, render
from kubectl_spark.cli import globals as cli_globals
from kubectl_spark.core.model import Analysis, App
from kubectl_spark.core.pod import Pod
from kubectl_spark.core.selecting import select_apps
from kubectl_spark.errors import KubectlSparkError, UsageError

if TYPE_CHECKING:
    from kubectl_spark.app.follow import Follow
    from kubectl_spark.app.session import Connection


@dataclass(frozen=True)
class LabelView:
    """``-L``/``--label-columns`` and ``--show-labels``, as ``kubectl get`` has them.

    An application's labels are its current driver pod's; the columns come after AGE (and the
    wide columns), as kubectl puts them after its own.
    """

    columns: tuple[str, ...] = ()
    show: bool = False

    @classmethod
    def of(cls, label_columns: list[str], show_labels: bool) -> LabelView:
        columns = tuple(c.strip() for given in label_columns for c in given.split(","))
        if any(not c for c in columns):
            raise UsageError("-L/--label-columns takes label keys, e.g. -L team,spark-version")
        return cls(columns, show_labels)

    def headers(self) -> list[str]:
        return label_headers(self.columns, self.show)

    def index(self, pods: Sequence[Pod]) -> Mapping[str, Mapping[str, str]]:
        """Each pod's labels by uid, read once per listing (and not at all without -L)."""
        if not self.columns and not self.show:
            return {}
        return {p.metadata.uid: p.metadata.labels for p in pods}

    def cells(self, app: App, labels_by_uid: Mapping[str, Mapping[str, str]]) -> list[str]:
        if not self.columns and not self.show:
            return []
        return label_cells(app_labels(app, labels_by_uid), self.columns, self.show)


def sorted_by(apps: list[App], path: str) -> list[App]:
    """Sorted as kubectl's --sort-by: by a JSONPath's value in each app's JSON (missing first).

    As kubectl (``sorter.go``), a path that no application has is an error, not a silent
    no-op: ``.createdAt`` sorts, ``.createdat`` says so.
    """
    template = by_path(path)
    keys = {}
    for app in apps:
        values = template.results(app_json(app))
        keys[id(app)] = values[0] if values else None
    if apps and all(v is None for v in keys.values()):
        raise UsageError(
            f'couldn\'t find any field with path "{template.source}" in the list of applications'
        )

    def key(app: App) -> tuple[int, Any]:
        value = keys[id(app)]
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
    labels: LabelView = LabelView(),
    pods: Sequence[Pod] = (),
    clocks: Mapping[str, datetime] | None = None,
) -> str:
    """The listing, one row per application.

    With ``clocks`` (each context's time) it lists several clusters: a CONTEXT column first,
    and each application's AGE by its own cluster's clock.
    """
    apps = sorted(analysis.apps, key=lambda app: (app.context, *sort_key(app)))
    if sort_by:
        apps = sorted_by(apps, sort_by)
    if render.is_document(output):
        doc = analysis_json(analysis, apps)
        return render.document(doc, output, no_headers=no_headers)
    if output == "name":
        return "".join(f"{kubectl_name(app)}\n" for app in apps)
    wide = output == "wide"
    labels_by_uid = labels.index(pods)
    rows = [
        ([app.context] if clocks is not None else [])
        + row(
            app,
            clocks.get(app.context, now) if clocks else now,
            all_namespaces=all_namespaces,
            wide=wide,
        )
        + labels.cells(app, labels_by_uid)
        for app in apps
    ]
    text = (
        render.table(
            (["CONTEXT"] if clocks is not None else [])
            + headers(all_namespaces=all_namespaces, wide=wide)
            + labels.headers(),
            rows,
            no_headers=no_headers,
        )
        if rows
        else ""
    )
    if analysis.ungrouped:
        import humanize

        count = humanize.intcomma(len(analysis.ungrouped))
        text += f'\n{count} Spark pod(s) fit no application (see -o json, "ungrouped"):\n'
        text += "".join(
            f"  {u.context + ': ' if u.context else ''}{u.namespace}/{u.pod} ({u.role}): {u.why}\n"
            for u in analysis.ungrouped
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
        "",
        "--selector",
        "-l",
        help="Label selector (=, ==, !=, in, notin, exists): the applications any of whose pods, "
        "Job or SparkApplication match, each shown whole.",
    ),
    no_headers: bool = typer.Option(
        False, "--no-headers", help="Do not print the table's header line."
    ),
    group_by: str = typer.Option(
        "",
        "--group-by",
        help="Group pods into applications by this label instead (applications with different "
        "Spark names that share a value are VALUE:NAME).",
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
    label_columns: list[str] = typer.Option(
        [],
        "--label-columns",
        "-L",
        help="A column for each of these labels of the driver pod (comma-separated or repeated).",
    ),
    show_labels: bool = typer.Option(
        False, "--show-labels", help="A last column with all of the driver pod's labels."
    ),
) -> None:
    """List Spark applications: attempts, executors, losses, alerts."""
    chosen = render.check_output(output)
    labels = LabelView.of(label_columns, show_labels)
    if sort_by:
        by_path(sort_by)  # a bad path is refused before anything is read
    everywhere = cli_globals.current().all_namespaces
    contexts = clusters.asked()
    if contexts:
        following = watch or watch_only
        listing = _ManyListing(selector, group_by, field_selector, following)
        readings = clusters.read_each(contexts, listing.read)
        text = listing.render(
            readings,
            chosen,
            everywhere=everywhere,
            no_headers=no_headers,
            sort_by=sort_by,
            labels=labels,
        )
        if watch_only:
            text = (
                ""
                if no_headers or chosen not in ("table", "wide")
                else _header(chosen, everywhere, labels, contexts=True)
            )
        sys.stdout.write(text)
        sys.stdout.flush()
        if following:  # the contexts that answered are followed; the others were named
            if listing.failure is not None:
                sys.stderr.write(f"error: {escape(listing.failure.message)}\n")
            view = _WatchView(
                chosen, everywhere, selector or None, group_by or None, field_selector, labels, True
            )
            _follow([(r.context, r.answer) for r in readings if r.answer is not None], view)
        failed = listing.failure
        if failed is not None:
            raise failed
        return
    loaded = common.load(selector=selector or None, group_by=group_by or None, slim_pods=True)
    try:
        if field_selector:
            loaded.analysis = with_pods_matching(loaded, field_selector)
        now = loaded.snapshot.now
        if watch_only:
            text = (
                ""
                if no_headers or chosen not in ("table", "wide")
                else _header(chosen, everywhere, labels)
            )
        else:
            text = render_analysis(
                loaded.analysis,
                chosen,
                all_namespaces=everywhere,
                no_headers=no_headers,
                now=now,
                sort_by=sort_by,
                labels=labels,
                pods=loaded.snapshot.pods,
            )
        if not loaded.analysis.apps and chosen in ("table", "wide") and not watch_only:
            where = "any namespace" if loaded.namespace is None else f"{loaded.namespace} namespace"
            sys.stderr.write(f"No Spark applications found in {where}.\n")
        sys.stdout.write(text)
        sys.stdout.flush()
        if watch or watch_only:
            view = _WatchView(
                chosen, everywhere, selector or None, group_by or None, field_selector, labels
            )
            _watch(loaded, view)
    finally:
        loaded.api.close()


@dataclass
class _Part:
    """What one context's read leaves for the listing (its connection closed unless followed)."""

    analysis: Analysis
    pods: Sequence[Pod]
    namespace: str | None
    now: datetime
    followed: _Followed | None = None  # ls -w: the view read, and how to connect again


@dataclass
class _ManyListing:
    """``ls`` over several contexts: each read as ``ls --context NAME`` reads it, listed as one."""

    selector: str
    group_by: str
    field_selector: str
    following: bool = False
    failure: KubectlSparkError | None = None

    def read(self) -> _Part:
        """One context's applications (in its own thread: cli/clusters.py)."""
        loaded = common.load(
            selector=self.selector or None, group_by=self.group_by or None, slim_pods=True
        )
        try:
            analysis = (
                with_pods_matching(loaded, self.field_selector)
                if self.field_selector
                else loaded.analysis
            )
        except BaseException:
            loaded.api.close()
            raise
        followed = _Followed(loaded, common.connection()) if self.following else None
        if followed is None:
            loaded.api.close()
        return _Part(
            analysis, loaded.snapshot.pods, loaded.namespace, loaded.snapshot.now, followed
        )

    def render(
        self,
        readings: list[clusters.Reading[_Part]],
        output: str,
        *,
        everywhere: bool,
        no_headers: bool,
        sort_by: str,
        labels: LabelView,
    ) -> str:
        parts = [(r.context, r.answer) for r in readings if r.answer is not None]
        self.failure = clusters.failure(readings)
        marked = [part.analysis.in_context(name) for name, part in parts]
        merged = Analysis(
            tuple(a for each in marked for a in each.apps),
            tuple(u for each in marked for u in each.ungrouped),
        )
        clocks = {name: part.now for name, part in parts}
        if not merged.apps and output in ("table", "wide"):
            where = ", ".join(
                f"{name} ({'all namespaces' if part.namespace is None else part.namespace})"
                for name, part in parts
            )
            if where:
                sys.stderr.write(f"No Spark applications found in {where}.\n")
        return render_analysis(
            merged,
            output,
            all_namespaces=everywhere,
            no_headers=no_headers,
            now=max(clocks.values(), default=datetime.now(UTC)),
            sort_by=sort_by,
            labels=labels,
            pods=[p for _, part in parts for p in part.pods],
            clocks=clocks,
        )


def with_pods_matching(
    loaded: common.Loaded, field_selector: str, analysis: Analysis | None = None
) -> Analysis:
    """The applications (and ungrouped pods) with a pod the field selector matches.

    Whole applications are analyzed, then kept or not: a driver on another node still counts
    as its attempt's driver (filtering the pods themselves would make it look gone). The
    server matches the pods (one LIST of them, by field selector): its rules are the rules.
    ``-l`` has already chosen the applications (``core.selecting``): each selects on its own.
    """
    base = (
        "/api/v1/pods"
        if loaded.namespace is None
        else f"/api/v1/namespaces/{loaded.namespace}/pods"
    )
    matching, _ = loaded.api.list(
        base,
        label_selector="spark-role",
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


def _header(output: str, everywhere: bool, labels: LabelView, *, contexts: bool = False) -> str:
    return render.table(
        (["CONTEXT"] if contexts else [])
        + headers(all_namespaces=everywhere, wide=output == "wide")
        + labels.headers(),
        [],
    )


@dataclass(frozen=True)
class _WatchView:
    """What ``ls -w`` prints and what it follows."""

    output: str
    everywhere: bool
    selector: str | None
    group_by: str | None
    field_selector: str = ""
    labels: LabelView = LabelView()
    contexts: bool = False  # several clusters followed: a CONTEXT column first

    def row(
        self, app: App, now: datetime, labels_by_uid: Mapping[str, Mapping[str, str]]
    ) -> list[str]:
        return (
            ([app.context] if self.contexts else [])
            + row(app, now, all_namespaces=self.everywhere, wide=self.output == "wide")
            + self.labels.cells(app, labels_by_uid)
        )

    def headers(self) -> list[str]:
        return (
            (["CONTEXT"] if self.contexts else [])
            + headers(all_namespaces=self.everywhere, wide=self.output == "wide")
            + self.labels.headers()
        )

    def age(self) -> int:
        """Where AGE is in a row: its changing alone is no news."""
        return self.headers().index("AGE")


def _watch(loaded: common.Loaded, view: _WatchView) -> None:
    """Follow one cluster (``_follow``), from what ``ls`` printed."""
    followed = _Followed(loaded, common.connection())
    _follow(
        [("", _Part(loaded.analysis, (), loaded.namespace, loaded.snapshot.now, followed))], view
    )


@dataclass
class _Followed:
    """One cluster ``ls -w`` follows: the view it printed, and how to connect again."""

    loaded: common.Loaded
    connection: Connection
    follow: Follow | None = None  # once following
    said: str = ""  # the last reconnecting error said
    caught_up: bool = False

    @property
    def following(self) -> Follow:
        assert self.follow is not None, "asked before following"
        return self.follow


def _follow(parts: list[tuple[str, _Part]], view: _WatchView) -> None:
    """Follow each cluster with the TUI's watch engine (``kube.live``); reprint changed rows.

    The engine lists, watches with bookmarks, lists again on 410 and reconnects with backoff;
    each starts from what ``ls`` printed (the kept pods and Events included), so only what
    changes is printed. With a field selector each burst asks the server again which pods
    match. Several contexts (``--context a,b``) are followed side by side: one that is cut is
    named on stderr while the others go on, and said again when it is back.
    """
    from kubectl_spark.app.follow import Follow
    from kubectl_spark.core.analyze import analyze

    wake = threading.Event()
    selector = label_selector(view.selector)  # applications, as ls selected them
    shown: dict[tuple[str, str, str], list[str]] = {}
    followed: list[tuple[str, _Followed]] = []
    for name, part in parts:
        f = part.followed
        if f is None:
            continue
        f.loaded.api.lift_deadline()  # the first answer is printed: following has no end
        f.follow = Follow(f.connection, f.loaded.namespace)
        f.follow.seed_snapshot(f.loaded.snapshot)
        labels_by_uid = view.labels.index(f.loaded.snapshot.pods)
        for a in part.analysis.in_context(name).apps:
            shown[(name, a.namespace, a.name)] = view.row(a, part.now, labels_by_uid)
        followed.append((name, f))
    for _, f in followed:
        f.following.start(wake.set)
    try:
        while True:
            woke = wake.wait(timeout=0.5)
            wake.clear()
            for name, f in followed:
                _say_state(name, f)
                # Until every resource is listed, a row would be news that is not; once it
                # is, look once (changes made while it listed woke nobody), then on each change.
                if not f.following.ready.is_set() or (f.caught_up and not woke):
                    continue
                f.caught_up = True
                _, snap = f.following.take_changes()  # also re-arms on_change
                fresh = select_apps(analyze(snap, group_by=view.group_by), snap, selector)
                if view.field_selector:
                    fresh = with_pods_matching(f.loaded, view.field_selector, fresh)
                labels_by_uid = view.labels.index(snap.pods)
                _reprint(fresh.in_context(name), snap.now, shown, view, labels_by_uid)
    finally:
        for _, f in followed:
            f.following.stop()
            f.loaded.api.close()


def _say_state(name: str, f: _Followed) -> None:
    """A cut cluster on stderr, once per reason; with several, its return too."""
    where = f"context {name}: " if name else ""
    if f.following.state == "reconnecting" and f.following.error != f.said:
        f.said = f.following.error
        sys.stderr.write(f"reconnecting: {escape(where + f.following.error)}\n")
    elif f.following.state == "live" and f.said:
        f.said = ""
        if name:
            sys.stderr.write(f"{escape(where)}watching again\n")


def _reprint(
    fresh: Analysis,
    now: datetime,
    shown: dict[tuple[str, str, str], list[str]],
    view: _WatchView,
    labels_by_uid: Mapping[str, Mapping[str, str]],
) -> None:
    """Print the rows that changed (AGE alone changing is no news)."""
    output = view.output
    age = view.age()
    for app in sorted(fresh.apps, key=sort_key):
        cells = view.row(app, now, labels_by_uid)
        key = (app.context, app.namespace, app.name)
        before = shown.get(key)
        if (
            before is not None
            and before[:age] + before[age + 1 :] == cells[:age] + cells[age + 1 :]
        ):
            continue
        shown[key] = cells
        if render.is_document(output):  # a custom-columns header was printed with the list
            sys.stdout.write(render.document(app_json(app), output, no_headers=True))
        else:
            sys.stdout.write(render.table(view.headers(), [cells], no_headers=True))
        sys.stdout.flush()


# The object kubectl reads each application as, by what launched it: ``-o name`` prints
# ``resource.group/name`` as kubectl's does, so that ``kubectl get`` takes each line (a bare
# ``sparkapp/`` is the Apache operator's short name where both operators are installed).
KUBECTL_RESOURCES = {
    "job": "job.batch",
    "sparkapplication": "sparkapplication.sparkoperator.k8s.io",
    "apache-operator": "sparkapplication.spark.apache.org",
    "spark-cluster": "sparkcluster.spark.apache.org",
}


def kubectl_name(app: Any) -> str:
    """The owner, else (spark-submit) the newest attempt's driver pod, else one of its pods."""
    resource = KUBECTL_RESOURCES.get(app.source)
    if resource is not None:
        return f"{resource}/{app.owner or app.name}"
    newest = app.attempts[-1] if app.attempts else None
    pods = [newest.driver_pod] if newest is not None else []
    pods += [e.pod for e in newest.executors] if newest is not None else []
    return f"pod/{next((p for p in pods if p), app.name)}"
