"""``kubectl spark tui``: live, keyboard-driven, the place people go at 3 a.m.

The app composes the widgets and routes keys. Data comes from a source (watches on a live
cluster, or a fixed snapshot in tests); a timer notices new data and a thread worker runs the
core on it, then hands the result back to the UI thread. Workers never touch widgets.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Tree

from kubectl_spark.core import raw
from kubectl_spark.core.incremental import LiveAnalysis
from kubectl_spark.core.model import Analysis, Attempt
from kubectl_spark.core.model import App as SparkApp
from kubectl_spark.memory import freeze_long_lived

from .screens.help import HelpScreen
from .screens.plan import PlanScreen
from .screens.text import TextScreen
from .widgets.apps_table import AppsTable, app_key
from .widgets.attempt_tree import AttemptTree
from .widgets.banner import AlertsBanner
from .widgets.detail import DetailPane
from .widgets.status import StatusBar
from .widgets.timeline import Timeline

ACTIONS = {"fence", "force_kill", "resubmit"}
MakeSource = Callable[
    [str | None, str | None, bool], Any
]  # (namespace, context, all namespaces) → source


class SparkTUI(App[None]):
    CSS_PATH = "styles.tcss"
    TITLE = "kubectl spark"
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help"),
        Binding("slash", "filter", "Filter"),
        Binding("colon", "command", "Command", show=False),
        Binding("ctrl+z", "faults", "Faults only"),
        Binding("ctrl+r", "reload", "Reload", show=False),
        Binding("l", "logs", "Logs"),
        Binding("p", "previous_logs", "Prev logs", show=False),
        Binding("d", "describe", "Describe"),
        Binding("y", "yaml", "YAML", show=False),
        Binding("f", "fence", "Fence"),
        Binding("K", "force_kill", "Force-kill"),
        Binding("r", "resubmit", "Resubmit"),
        Binding("escape", "back", "Back", show=False),
    ]

    def __init__(
        self,
        make_source: MakeSource,
        *,
        namespace: str | None = None,
        context: str | None = None,
        all_namespaces: bool = False,
        readonly: bool = False,
        now: Callable[[], datetime] | None = None,
        initial_filter: str = "",
    ) -> None:
        super().__init__()
        self.make_source = make_source
        self.namespace, self.context, self.all_namespaces = namespace, context, all_namespaces
        self.readonly = readonly
        # Ages are read against the cluster's clock when the source knows it (a live cluster).
        self.clock = now or self._source_now
        self.filter_text = initial_filter
        self.faults_only = False
        self.analysis = Analysis()
        self.snapshot: Any = None
        self.seen_version = -1
        self.analyzing = False
        self.analyzed_at = time.monotonic()
        self.live_analysis = LiveAnalysis()
        self.full_runs_seen = 0
        self.full_next = True  # the first analysis, and the one after a failure, sees everything
        self.selected: str | None = None
        self.source: Any = None

    # ------------------------------------------------------------------------- layout
    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        yield AppsTable(id="apps")
        with Vertical(id="view"):
            yield AlertsBanner(id="banner")
            with Horizontal(id="lower"):
                yield AttemptTree("no application selected", id="tree")
                yield DetailPane(id="detail")
            yield Timeline(id="timeline")
        yield Input(placeholder="filter: text, -l key=val, ! to invert", id="filter")
        yield Input(placeholder=":ns NAME | :ns all | :ctx NAME", id="command")
        yield Footer()

    def on_mount(self) -> None:
        # References, not queries: a query searches the screen on top (a dialog, the help).
        self.apps_table = self.query_one(AppsTable)
        self.attempt_tree = self.query_one(AttemptTree)
        self.alerts_banner = self.query_one(AlertsBanner)
        self.detail_pane = self.query_one(DetailPane)
        self.timeline_view = self.query_one(Timeline)
        self.status_bar = self.query_one(StatusBar)
        self.filter_box = self.query_one("#filter", Input)
        self.command_box = self.query_one("#command", Input)
        self._loop = asyncio.get_running_loop()
        self._start_source()
        # Watches wake the app up at once (see _wake); the timer keeps the header's ages fresh.
        self.set_interval(0.25, self._poll)

    def _source_now(self) -> datetime:
        told = getattr(self.source, "now", None)
        return told() if callable(told) else datetime.now(UTC)

    def _wake(self) -> None:
        """Called from a watch thread when changes are waiting: poll on the UI thread now.

        A watch thread is not joined when the app closes: one that was mid-list can call this
        after the loop has closed, when there is nothing left to wake.
        """
        loop = self._loop
        if loop is None:  # not running (yet, or any more)
            return
        with contextlib.suppress(RuntimeError):  # the event loop is closed
            loop.call_soon_threadsafe(self._poll)

    def _start_source(self) -> None:
        if self.source is not None:
            self.source.stop()
        self.seen_version = -1
        self.analyzing = False
        self.full_next = True
        self.live_analysis = LiveAnalysis()
        self.full_runs_seen = 0
        self.source = self.make_source(self.namespace, self.context, self.all_namespaces)
        self._start_worker(self.source)

    @work(thread=True, exclusive=True, group="source")
    def _start_worker(self, source: Any) -> None:
        try:
            source.start(on_change=self._wake)
        except Exception as exc:  # noqa: BLE001 - shown, never fatal
            self.call_from_thread(
                self.notify, f"cannot connect: {exc}", severity="error", timeout=10
            )

    def on_unmount(self) -> None:
        if self.source is not None:
            self.source.stop()

    # ----------------------------------------------------------------------- data in
    def _poll(self) -> None:
        source = self.source
        if source is None:
            return
        version = source.version
        # Findings that depend on the time alone (churn windows) need a look now and then.
        stale = time.monotonic() - self.analyzed_at > self.live_analysis.max_age
        # One analysis at a time: each consumes the changes since the previous one, so two in
        # flight could each miss part of them, or finish out of order.
        if (version != self.seen_version or stale) and version > 0 and not self.analyzing:
            self.seen_version = version
            self.analyzing = True
            self._analyze(source)
        self._status()

    @work(thread=True, group="analyze")
    def _analyze(self, source: Any) -> None:
        """The core on the new data: only the touched applications when that is known."""
        changes, snapshot = source.take_changes()
        try:
            result = self.live_analysis.update(snapshot, None if self.full_next else changes)
            source.record(changes, snapshot)
        except Exception as exc:  # noqa: BLE001 - never freeze the screen on a bad object
            self.call_from_thread(self._failed, exc)
            return
        self.call_from_thread(self._show, snapshot, result)

    def _failed(self, exc: Exception) -> None:
        self.analyzing = False
        self.seen_version = -1  # analyze everything again on the next tick:
        self.full_next = True  # the changes this run consumed are gone
        self.notify(f"analysis failed: {exc}", severity="error")

    def _status(self) -> None:
        source = self.source
        apps = self.analysis.apps
        self.status_bar.show(
            context=getattr(source, "context", "") or (self.context or ""),
            namespace=getattr(source, "namespace", None) if not self.all_namespaces else None,
            state=source.state,
            last_event=source.last_event,
            apps=len(apps),
            alerts=sum(len(a.alerts) for a in apps),
            error=source.error,
        )

    def _show(self, snapshot: Any, result: Analysis) -> None:
        self.analyzing = False
        self.analyzed_at = time.monotonic()
        self.full_next = False
        self.snapshot = snapshot
        changed = result is not self.analysis
        self.analysis = result
        if self.live_analysis.full_runs != self.full_runs_seen:
            # Thousands of long-lived objects just arrived: keep the cyclic collector from
            # walking them on every collection (a pause the size of the cluster).
            self.full_runs_seen = self.live_analysis.full_runs
            freeze_long_lived()
        if changed:
            self._render()
        self._poll()  # changes that arrived meanwhile: one more batch at once

    def _visible(self) -> list[SparkApp]:
        apps = list(self.analysis.apps)
        if self.faults_only:
            apps = [
                a
                for a in apps
                if a.alerts or any(e.reason for t in a.attempts for e in t.executors)
            ]
        text = self.filter_text.strip()
        if not text:
            return apps
        invert = text.startswith("!")
        text = text.lstrip("!").strip()
        if text.startswith("-l"):
            key, _, value = text[2:].strip().partition("=")
            labels = {
                raw.uid(p): raw.labels(p) for p in (self.snapshot.pods if self.snapshot else [])
            }

            def hit(app: SparkApp) -> bool:
                uids = [t.uid for t in app.attempts] + [
                    e.uid for t in app.attempts for e in t.executors
                ]
                return any(labels.get(u or "", {}).get(key.strip()) == value.strip() for u in uids)
        else:

            def hit(app: SparkApp) -> bool:
                return (
                    text.lower()
                    in f"{app.namespace}/{app.name} {app.state} {' '.join(a.type for a in app.alerts)}".lower()
                )

        return [a for a in apps if hit(a) != invert]

    def _render(self) -> None:
        table = self.apps_table
        table.sync(self._visible(), self.clock())
        if self.selected is None:
            self.selected = table.selected_key()
        self._render_app()

    def current_app(self) -> SparkApp | None:
        return next((a for a in self.analysis.apps if app_key(a) == self.selected), None)

    def _render_app(self) -> None:
        app = self.current_app()
        self.alerts_banner.show(app)
        tree = self.attempt_tree
        tree.show(app)
        node = tree.cursor_node
        self.detail_pane.show(
            app, node.data if node is not None and node.data else self._default_selection(app)
        )
        self.timeline_view.show(app, self.clock(), width=max(20, self.size.width - 24))

    def _default_selection(self, app: SparkApp | None) -> tuple[str, int, str] | None:
        return ("attempt", app.attempts[-1].number, "") if app and app.attempts else None

    # --------------------------------------------------------------------- navigation
    @on(DataTable.RowHighlighted)
    def _row(self, event: DataTable.RowHighlighted) -> None:
        self.selected = str(event.row_key.value) if event.row_key is not None else None
        self._render_app()

    @on(DataTable.RowSelected)
    def _open(self, event: DataTable.RowSelected) -> None:
        self.attempt_tree.focus()

    @on(Tree.NodeHighlighted)
    def _node(self, event: Tree.NodeHighlighted[Any]) -> None:
        self.detail_pane.show(self.current_app(), event.node.data)

    def selection(self) -> tuple[SparkApp | None, Attempt | None, str | None]:
        """The app, attempt and executor id the cursor is on (attempt: the latest by default)."""
        app = self.current_app()
        if app is None or not app.attempts:
            return app, None, None
        node = self.attempt_tree.cursor_node
        data = node.data if node is not None else None
        if data:
            attempt = next((a for a in app.attempts if a.number == data[1]), app.attempts[-1])
            return app, attempt, data[2] or None
        return app, app.attempts[-1], None

    async def action_back(self) -> None:
        """Escape: close the filter or command box, clear a filter, or leave the tree."""
        for widget in (self.filter_box, self.command_box):
            if widget.has_class("visible"):
                widget.remove_class("visible")
                self.apps_table.focus()
                return
        if self.filter_text:
            self.filter_text = ""
            self._render()
            return
        self.apps_table.focus()

    def action_filter(self) -> None:
        box = self.filter_box
        box.value = self.filter_text
        box.add_class("visible")
        box.focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value
        self._render()

    @on(Input.Submitted, "#filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        event.input.remove_class("visible")
        self.apps_table.focus()

    def action_faults(self) -> None:
        self.faults_only = not self.faults_only
        self.notify(
            "showing applications with faults only"
            if self.faults_only
            else "showing all applications"
        )
        self._render()

    def action_command(self) -> None:
        box = self.command_box
        box.value = ""
        box.add_class("visible")
        box.focus()

    @on(Input.Submitted, "#command")
    def _command(self, event: Input.Submitted) -> None:
        event.input.remove_class("visible")
        words = event.value.strip().lstrip(":").split()
        if len(words) == 2 and words[0] == "ns":
            self.all_namespaces = words[1] == "all"
            self.namespace = None if self.all_namespaces else words[1]
        elif len(words) == 2 and words[0] == "ctx":
            self.context = words[1]
        else:
            self.notify(f"unknown command: {event.value}", severity="warning")
            return
        self.selected = None
        self.analysis = Analysis()
        self._start_source()
        self.apps_table.focus()

    def action_reload(self) -> None:
        self._start_source()

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    # ----------------------------------------------------------------------- viewers
    def _pod(self) -> tuple[str, str, str, bool] | None:
        """(namespace, pod, container, whether its node answers) of a selected pod that exists."""
        app, attempt, executor = self.selection()
        if app is None or attempt is None:
            return None
        if executor:
            found = next((e for e in attempt.executors if e.id == executor), None)
            if found is None or found.source != "cluster":
                return None  # gone: its log went with it
            return (
                app.namespace,
                found.pod,
                "spark-kubernetes-executor",
                self._answers(found.node),
            )
        return (
            (
                app.namespace,
                attempt.driver_pod,
                "spark-kubernetes-driver",
                self._answers(attempt.node),
            )
            if attempt.driver_pod and attempt.uid
            else None
        )

    def _answers(self, node: str | None) -> bool:
        """Whether the kubelet of ``node`` can serve a log (an unreachable one is asked once)."""
        from kubectl_spark.app.act import node_reachable

        return self.snapshot is None or node_reachable(self.snapshot, node)

    def action_logs(self) -> None:
        gone = self._gone_pod()
        if gone is not None:
            self._kept_logs(*gone, previous=False)
            return
        self._logs(self._pod(), previous=False)

    def _gone_pod(self) -> tuple[str, str, str] | None:
        """(namespace, pod, uid) of a selected executor or driver whose pod is gone."""
        from kubectl_spark.core.sparkview import only_kept

        app, attempt, executor = self.selection()
        if app is None or attempt is None:
            return None
        if executor:
            found = next((e for e in attempt.executors if e.id == executor), None)
            if found is None or found.source == "cluster" or not found.uid:
                return None
            return app.namespace, found.pod, found.uid
        pods = self.snapshot.pods if self.snapshot is not None else ()
        if not attempt.uid or not only_kept(pods, attempt.uid):
            return None
        return app.namespace, attempt.driver_pod or "?", attempt.uid

    @work(thread=True, exclusive=True, group="view")
    def _kept_logs(self, namespace: str, pod: str, uid: str, *, previous: bool) -> None:
        """What ``kubectl spark record`` kept of a gone pod's log, as ``logs [-p]`` prints it.

        The store is this TUI's own.
        """
        from kubectl_spark.app.logtext import KEEP_HINT, PREVIOUS_GONE
        from kubectl_spark.kube.logtails import run_said

        kept = self.source.kept_log(namespace, uid, previous=previous)
        if kept is None:
            self.call_from_thread(
                self.notify,
                f"pod {pod} is gone, and its "
                + (PREVIOUS_GONE if previous else f"log with it{KEEP_HINT}"),
                severity="warning",
            )
            return
        title = (
            f"last lines of {namespace}/{pod}, kept by kubectl spark record: the pod is gone "
            f"({run_said(kept, earlier=previous)})  (esc: back)"
        )
        self.call_from_thread(
            self.push_screen, TextScreen(title, str(kept.get("text") or "") or "(empty)")
        )

    def action_previous_logs(self) -> None:
        gone = self._gone_pod()
        if gone is not None:
            self._kept_logs(*gone, previous=True)
            return
        self._logs(self._pod(), previous=True)

    @work(thread=True, exclusive=True, group="view")
    def _logs(self, pod: tuple[str, str, str, bool] | None, *, previous: bool) -> None:
        """Workers get the selection from the UI thread; they never read widgets."""
        if pod is None:
            self.call_from_thread(self.notify, "select a pod that still exists", severity="warning")
            return
        namespace, name, container, answers = pod
        try:
            with self.source.connect() as api:
                query = [("container", container)] + ([("previous", "true")] if previous else [])
                response = api.request(
                    "GET",
                    f"/api/v1/namespaces/{namespace}/pods/{name}/log",
                    query=query,
                    stream=True,
                    what=f"logs of {name}" + ("" if answers else " (its node is unreachable)"),
                    retry=answers,
                )
                body = b"".join(response.stream(65536)).decode("utf-8", "replace")
        except Exception as exc:  # noqa: BLE001 - shown to the user
            self.call_from_thread(
                self.notify, getattr(exc, "message", str(exc)), severity="error", timeout=8
            )
            return
        title = f"{'previous ' if previous else ''}logs of {namespace}/{name}  (esc: back)"
        self.call_from_thread(self.push_screen, TextScreen(title, body or "(empty)"))

    def action_describe(self) -> None:
        from kubectl_spark.app.describe import text
        from kubectl_spark.app.events import app_events

        app = self.current_app()
        if app is None or self.snapshot is None:
            return
        now = self.clock()
        self.push_screen(
            TextScreen(
                f"describe {app.namespace}/{app.name}  (esc: back)",
                text(app, now, app_events(self.snapshot, app, now)),
            )
        )

    def action_yaml(self) -> None:
        self._yaml(self._pod())

    @work(thread=True, exclusive=True, group="view")
    def _yaml(self, pod: tuple[str, str, str, bool] | None) -> None:
        """The whole pod, read again: the live view keeps only the fields the core reads."""
        import yaml

        if pod is None:
            return
        namespace, name, _, _ = pod
        try:
            with self.source.connect() as api:
                found = api.request(
                    "GET", f"/api/v1/namespaces/{namespace}/pods/{name}", what=f"get pod {name}"
                )
        except Exception as exc:  # noqa: BLE001 - shown to the user
            self.call_from_thread(
                self.notify, getattr(exc, "message", str(exc)), severity="error", timeout=8
            )
            return
        self.call_from_thread(
            self.push_screen,
            TextScreen(
                f"YAML of pod {namespace}/{name}  (esc: back)",
                yaml.safe_dump(found, sort_keys=False),
            ),
        )

    # ------------------------------------------------------------------------ actions
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return not (action in ACTIONS and self.readonly)  # hidden, not merely disabled

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Help", "Show every key binding", self.action_help)
        yield SystemCommand(
            "Faults only", "Show only applications with alerts or losses", self.action_faults
        )
        if not self.readonly:
            yield SystemCommand(
                "Fence attempt",
                "Fence the selected attempt (shows the plan first)",
                self.action_fence,
            )
            yield SystemCommand(
                "Force-kill attempt",
                "Force-kill the selected attempt (shows the plan first)",
                self.action_force_kill,
            )
            yield SystemCommand(
                "Resubmit application",
                "Resubmit the selected application (shows the plan first)",
                self.action_resubmit,
            )

    def action_fence(self) -> None:
        self._plan("fence", *self.selection()[:2])

    def action_force_kill(self) -> None:
        self._plan("force-kill", *self.selection()[:2])

    def action_resubmit(self) -> None:
        self._plan("resubmit", *self.selection()[:2])

    @work(thread=True, exclusive=True, group="action")
    def _plan(self, action: str, chosen: SparkApp | None, chosen_attempt: Attempt | None) -> None:
        """Compute the plan with the same code as the command, then ask."""
        from kubectl_spark.app import act

        if chosen is None or self.readonly:
            return
        try:
            with self.source.connect() as api:
                snap, app, attempt = act.reread(api, chosen, chosen_attempt)
                if action == "fence" and attempt is not None:
                    plan = act.plan_fence(api, snap, app, attempt)
                elif action == "force-kill" and attempt is not None:
                    plan = act.plan_force_kill(api, snap, app, attempt, act.KillOptions())
                else:
                    plan = act.plan_resubmit(api, snap, app)
        except Exception as exc:  # noqa: BLE001 - shown to the user
            self.call_from_thread(
                self.notify, getattr(exc, "message", str(exc)), severity="error", timeout=8
            )
            return

        def decided(confirmed: bool | None) -> None:
            if confirmed:
                self._apply(plan)

        self.call_from_thread(self.push_screen, PlanScreen(plan), decided)

    @work(thread=True, exclusive=True, group="action")
    def _apply(self, plan: Any) -> None:
        from kubectl_spark.kube import actions

        try:
            with self.source.connect() as api:
                missing = actions.missing_permissions(api, plan)
                if missing:
                    self.call_from_thread(
                        self.notify,
                        "nothing changed: missing " + "; ".join(missing),
                        severity="error",
                        timeout=10,
                    )
                    return
                report = actions.apply(api, plan)
        except Exception as exc:  # noqa: BLE001 - shown to the user
            self.call_from_thread(
                self.notify, getattr(exc, "message", str(exc)), severity="error", timeout=10
            )
            return
        if report.failed is not None:
            op, failure = report.failed
            self.call_from_thread(
                self.notify,
                f"{plan.action} stopped at {op.verb} {op.target()}: {failure.message}; "
                f"{len(report.applied)} step(s) applied",
                severity="error",
                timeout=10,
            )
        else:
            self.call_from_thread(
                self.notify,
                f"{plan.action} {plan.app}"
                + (f"/{plan.attempt}" if plan.attempt else "")
                + ": done",
            )
