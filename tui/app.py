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
from dataclasses import astuple
from datetime import UTC, datetime
from typing import Any

from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Tree

from kubectl_spark.app.text import escape
from kubectl_spark.core.model import Analysis, Attempt
from kubectl_spark.core.model import App as SparkApp
from kubectl_spark.knowledge.names import shown
from kubectl_spark.memory import freeze_long_lived

from .filtering import AppFilter
from .many import ManySource
from .plan_flow import PlanFlow
from .pod_views import PodViews
from .screens.help import HelpScreen
from .sources import Analyzer, Source, Target, one_cluster, why_not_started
from .widgets.apps_table import AppsTable, SortKey, app_key
from .widgets.attempt_tree import AttemptTree
from .widgets.banner import AlertsBanner
from .widgets.command import CommandBox, Names
from .widgets.detail import DetailPane
from .widgets.safe import safe
from .widgets.status import StatusBar
from .widgets.steady import SteadyStatic
from .widgets.timeline import Timeline

ACTIONS = {"fence", "force_kill", "resubmit", "delete_pod"}
READONLY_KEYS = {"f": "fence", "K": "force-kill", "r": "resubmit", "ctrl+d": "delete pod"}
NARROW = 120  # columns
SHORT = 20  # lines: below it the timeline gives its room to the tree
LOW = 30  # lines: below it the alerts banner and the timeline take fewer
MakeSource = Callable[[str | None, str | None, bool], Source]  # (namespace, context, -A)


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
        Binding("s", "shell", "Shell", show=False),
        Binding("f", "fence", "Fence"),
        Binding("K", "force_kill", "Force-kill"),
        Binding("r", "resubmit", "Resubmit"),
        Binding("ctrl+d", "delete_pod", "Delete pod", show=False),
        Binding("escape", "back", "Back", show=False),
        Binding("w", "wide", "Wide", show=False),
        Binding("N", "sort('APP')", "Sort by name", show=False),
        Binding("A", "sort('AGE')", "Sort by age", show=False),
        Binding("S", "sort('STATE')", "Sort by state", show=False),
        Binding("L", "sort('LOST')", "Sort by lost", show=False),
        Binding("c", "copy", "Copy name", show=False),
        Binding("o", "owner", "Owner", show=False),
        Binding("u", "spark_ui", "Spark UI", show=False),
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
        demo: bool = False,
        names: Names | None = None,
    ) -> None:
        super().__init__()
        self.names = names  # what :ctx and :ns alone offer to pick from
        self.make_source = make_source
        self.namespace, self.context, self.all_namespaces = namespace, context, all_namespaces
        self.readonly = readonly
        self.demo = demo  # the status bar says that the cluster is a simulation
        # Ages are read against the cluster's clock when the source knows it (a live cluster).
        self.clock = now or self._source_now
        self.filtering = AppFilter(initial_filter)
        self.plans = PlanFlow(self)  # the action keys: plan, show, apply once confirmed
        self.views = PodViews(self)  # logs, describe, YAML, shell, Spark UI
        self.analysis = Analysis()
        self.snapshot: Any = None
        self.seen_version = -1
        self.analyzing = False
        self.analyzed_at = time.monotonic()
        self.live_analysis: Analyzer = one_cluster()
        self.full_runs_seen = 0
        self.full_next = True  # the first analysis, and the one after a failure, sees everything
        self.selected: str | None = None
        self.source: Source | None = None
        self.switch_error = ""  # why the last :ns or :ctx left the view as it was
        self.ui_forwards: dict[tuple[str, str], Any] = {}  # (namespace, driver) → UiForward

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
        yield CommandBox(self.names, id="command")
        yield SteadyStatic(id="focus")
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
        self.command_box = self.query_one(CommandBox)
        self.focus_line = self.query_one("#focus", SteadyStatic)
        self._loop = asyncio.get_running_loop()
        self._relayout()
        self._start_source()
        # Watches wake the app up at once (see _wake); the timer keeps the header's ages fresh.
        self.set_interval(0.25, self._poll)
        # Relative times (AGE, "5m ago", the timeline's now) move on with no cluster change:
        # redrawn once a second from the analysis already made, never analysing again.
        self._drawn_at = -1
        self.set_interval(1.0, self._tick)

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

    def connected(self) -> Source:
        """The source the TUI shows; it exists from mount to unmount."""
        if self.source is None:
            raise RuntimeError("the TUI has no source before it is mounted")
        return self.source

    def source_of(self, app: SparkApp | None) -> Source:
        """What a key on ``app`` acts through: its own cluster's source when several are shown."""
        return self.connected().member(app.context if app is not None else "")

    def _start_source(self) -> None:
        self._use(self.make_source(self.namespace, self.context, self.all_namespaces))
        self._start_worker(self.connected())

    def _use(self, source: Source) -> None:
        """Show ``source`` from now on: the one before stops, the analysis starts again."""
        if self.source is not None:
            self.source.stop()
        self.seen_version = -1
        self.analyzing = False
        self.full_next = True
        self.live_analysis = source.analyzer()
        self.full_runs_seen = 0
        self.source = source
        self.apps_table.contexts = isinstance(source, ManySource)

    @work(thread=True, exclusive=True, group="source")
    def _start_worker(self, source: Source) -> None:
        failure = why_not_started(source, self._wake)  # the status bar says it too
        if failure:
            said = escape(shown(f"cannot connect: {failure}", 200))
            self.call_from_thread(self.notify, said, severity="error", timeout=10)

    def on_unmount(self) -> None:
        if self.source is not None:
            self.source.stop()
        for forward in self.ui_forwards.values():
            forward.stop()

    # ----------------------------------------------------------------------- data in
    def _tick(self) -> None:
        second = int(self.clock().timestamp())
        if second != self._drawn_at and self.analysis.apps:
            self._drawn_at = second
            self._render()

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
    def _analyze(self, source: Source) -> None:
        """The core on the new data: only the touched applications when that is known."""
        changes, snapshot = source.take_changes()
        try:
            result = self.live_analysis.update(snapshot, None if self.full_next else changes)
            source.record(changes, snapshot)
        except Exception as exc:  # noqa: BLE001 - never freeze the screen on a bad object
            self.call_from_thread(self._failed, exc)
            return
        self.call_from_thread(self._show, snapshot, result)
        try:
            # After a full analysis, what the next change needs is indexed while the operator
            # reads the screen, not before it is drawn.
            self.live_analysis.prepare()
        except Exception as exc:  # noqa: BLE001 - the next change then analyses everything
            self.call_from_thread(self.notify, f"analysis failed: {exc}", severity="error")

    def _failed(self, exc: Exception) -> None:
        self.analyzing = False
        self.seen_version = -1  # analyze everything again on the next tick:
        self.full_next = True  # the changes this run consumed are gone
        self.notify(f"analysis failed: {exc}", severity="error")

    def _status(self) -> None:
        source = self.connected()
        apps = self.analysis.apps
        self.status_bar.show(
            context=source.context or (self.context or ""),
            namespace=source.namespace if not self.all_namespaces else None,
            state=source.state,
            last_event=source.last_event,
            apps=len(apps),
            alerts=sum(len(a.alerts) for a in apps),
            error=source.error or self.switch_error,
            marks=self._marks(),
            demo=self.demo,
        )

    def _marks(self) -> tuple[str, ...]:
        """What narrows or reorders the list, named on the status bar while it is on."""
        return (*self.filtering.marks(), *self.apps_table.marks())

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
        return self.filtering.visible(self.analysis.apps, self.snapshot)

    def _render(self) -> None:
        table = self.apps_table
        # The cursor is the truth: a move the operator just made (its highlight event not yet
        # handled) must not be undone by a render that runs first.
        table.sync(self._visible(), self.clock(), self.size.width)
        # What the tree and the detail show is what the cursor is on, and what Enter opens: an
        # application filtered out of sight hands the selection to the row under the cursor.
        self.selected = table.selected_key()
        self._render_app()

    @property
    def narrow(self) -> bool:
        """Below this width the tree leaves out pod names (the detail pane has them)."""
        return self.size.width < NARROW

    def on_resize(self) -> None:
        # Called before App's own handler takes the new size: lay out once it has.
        self.call_later(self._relayout)

    def _relayout(self) -> None:
        # The layout's classes are set here, CSS cannot ask for the terminal's size.
        if not hasattr(self, "apps_table"):  # not mounted yet: on_mount renders
            return
        main = self.screen_stack[0]  # the main screen, even under a dialog or a text view
        main.set_class(self.size.height < SHORT, "short")
        main.set_class(self.size.height < LOW, "low")
        main.query_one(Footer).compact = self.narrow
        if self.analysis.apps:
            self._render()
        if self.source is not None:
            self._status()

    def current_app(self) -> SparkApp | None:
        return next((a for a in self.analysis.apps if app_key(a) == self.selected), None)

    def _render_app(self) -> None:
        app = self.current_app()
        self.alerts_banner.show(app)
        tree = self.attempt_tree
        tree.show(app, narrow=self.narrow)
        node = tree.cursor_node
        self.detail_pane.show(
            app, node.data if node is not None and node.data else self._default_selection(app)
        )
        self.timeline_view.show(app, self.clock(), width=max(20, self.size.width - 24))
        self._say_focus()

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
        self._say_focus()

    @on(Tree.NodeSelected)
    def _drill(self, event: Tree.NodeSelected[Any]) -> None:
        """Enter on an attempt or an executor: down to its pod (``describe pod``, esc back)."""
        self.action_describe()

    def on_descendant_focus(self) -> None:
        self._say_focus()

    def crumbs(self) -> str:
        """Where the keys act, as a path: context, application, attempt, executor."""
        app, attempt, executor = self.selection()
        if app is None:
            return "no application selected"
        parts = [*([app.context] if app.context else []), f"{app.namespace}/{app.name}"]
        parts += [f"attempt {attempt.number}"] if attempt is not None else []
        parts += [f"executor {executor}"] if executor else []
        return " ▸ ".join(parts)

    def _say_focus(self) -> None:
        """The line above the footer: what is focused, and so what the keys act on."""
        if not hasattr(self, "focus_line"):
            return
        tree = ("tree", "enter: its pod, d: describe pod")
        where, hint = tree if self.attempt_tree.has_focus else ("apps", "enter: its attempts")
        self.focus_line.update(safe(f"▸ {where}: {self.crumbs()}  ({hint})", "dim"))

    def selection(self) -> tuple[SparkApp | None, Attempt | None, str | None]:
        """What keys act on: the tree's line while it is focused, else the latest attempt."""
        app = self.current_app()
        if app is None or not app.attempts:
            return app, None, None
        node = self.attempt_tree.cursor_node if self.attempt_tree.has_focus else None
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
        if self.filtering.text:
            self.filtering.text = ""
            self._render()
            return
        self.apps_table.focus()

    def action_filter(self) -> None:
        box = self.filter_box
        box.value = self.filtering.text
        box.add_class("visible")
        box.focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filtering.text = event.value
        self._render()

    @on(Input.Submitted, "#filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        event.input.remove_class("visible")
        self.apps_table.focus()

    def action_faults(self) -> None:
        self.filtering.faults_only = not self.filtering.faults_only
        self.notify(
            "showing applications with faults only"
            if self.filtering.faults_only
            else "showing all applications"
        )
        self._render()

    def action_command(self) -> None:
        self.command_box.open(self.context)

    @on(CommandBox.Asked)
    def _command(self, event: CommandBox.Asked) -> None:
        self.apps_table.focus()
        target = Target.asked(
            event.words, Target(self.namespace, self.context, self.all_namespaces)
        )
        if target is None:
            return
        # Tried first: a context or namespace that cannot be read leaves the view as it was,
        # with the reason on the status bar (issue 48), rather than a failed, empty screen.
        candidate = self.make_source(target.namespace, target.context, target.all_namespaces)
        self._try_source(candidate, target, f":{' '.join(event.words)}")

    @work(thread=True, exclusive=True, group="switch")
    def _try_source(self, candidate: Source, target: Target, asked: str) -> None:
        failure = why_not_started(candidate, self._wake)
        self.call_from_thread(self._switched, candidate, target, asked, failure)

    def _switched(self, candidate: Source, target: Target, asked: str, failure: str) -> None:
        self.switch_error = f"{asked}: {failure}" if failure else ""
        if failure:
            candidate.stop()
            self.notify(escape(shown(self.switch_error, 200)), severity="error", timeout=10)
            self._status()
            return
        self.namespace, self.context, self.all_namespaces = astuple(target)
        self._use(candidate)
        self.selected = None
        self.analysis = Analysis()
        self.apps_table.focus()
        self._poll()

    def action_wide(self) -> None:
        """Every column of ``ls -o wide`` (the table scrolls sideways), or those that fit."""
        self.apps_table.wide = not self.apps_table.wide
        self._render()
        self._status()

    def action_sort(self, column: str) -> None:
        """By ``column``; the same key again reverses; a third time, back to alerts first."""
        table = self.apps_table
        current = table.sort_key
        if current is None or current.column != column:
            table.sort_key = SortKey(column)
        elif not current.descending:
            table.sort_key = SortKey(column, descending=True)
        else:
            table.sort_key = None
        self._render()
        self._status()

    def action_copy(self) -> None:
        """The selected pod's name (in the tree) or the application's, to the clipboard.

        Through the terminal (OSC 52), as Textual copies: it works over ssh and in tmux with
        set-clipboard on; the name is also shown, for terminals that ignore it.
        """
        app, attempt, executor = self.selection()
        if app is None:
            return
        name = app.name
        if self.focused is self.attempt_tree and attempt is not None:
            found = next((e for e in attempt.executors if e.id == executor), None)
            name = (found.pod if found else attempt.driver_pod) or name
        self.copy_to_clipboard(name)
        self.notify(f"copied {escape(name)}")

    def action_owner(self) -> None:
        """k9s's jump to the owner.

        An executor's owner is its driver's attempt; an attempt's is what created its driver
        (a Job, a SparkApplication …), shown as YAML.
        """
        app, attempt, executor = self.selection()
        if app is None or attempt is None:
            return
        if executor:
            self.attempt_tree.focus()
            self.attempt_tree.select_attempt(attempt.number)
            return
        self.views.owner_yaml(app.namespace, attempt.uid)

    def action_reload(self) -> None:
        self._start_source()

    def action_help(self) -> None:
        self.push_screen(HelpScreen(readonly=self.readonly))

    # ----------------------------------------------------------------------- viewers
    def action_logs(self) -> None:
        self.views.logs()

    def action_previous_logs(self) -> None:
        self.views.previous_logs()

    def action_describe(self) -> None:
        self.views.describe()

    def action_yaml(self) -> None:
        self.views.yaml()

    def action_shell(self) -> None:
        self.views.shell()

    def action_spark_ui(self) -> None:
        self.views.spark_ui()

    # ------------------------------------------------------------------------ actions
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if len(self.screen_stack) > 1 and action in MAIN_ONLY:
            # Over a text view, the main screen's keys are off: f follows a log there, it
            # must not fall through to fence the attempt behind it.
            return False
        return not (action in ACTIONS and self.readonly)  # hidden, not merely disabled

    def on_key(self, event: Any) -> None:
        """A hidden action's key says why nothing happens, instead of nothing."""
        if self.readonly and event.key in READONLY_KEYS and not isinstance(self.focused, Input):
            self.notify(
                f"read-only: {READONLY_KEYS[event.key]} is off (started with --readonly)",
                severity="warning",
            )

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Help", "Show every key binding", self.action_help)
        yield SystemCommand(
            "Faults only", "Show only applications with alerts or losses", self.action_faults
        )
        if not self.readonly:
            for title, what, action in (
                ("Fence attempt", "Fence the selected attempt", self.action_fence),
                ("Force-kill attempt", "Force-kill the selected attempt", self.action_force_kill),
                ("Resubmit application", "Resubmit the selected application", self.action_resubmit),
            ):
                yield SystemCommand(title, f"{what} (shows the plan first)", action)

    def action_fence(self) -> None:
        self.plans.make("fence", *self.selection()[:2])

    def action_force_kill(self) -> None:
        self.plans.make("force-kill", *self.selection()[:2])

    def action_resubmit(self) -> None:
        self.plans.make("resubmit", *self.selection()[:2])

    def action_delete_pod(self) -> None:
        self.plans.delete_pod()


# The main screen's own keys (not quit, help, or Textual's), off over a text view.
MAIN_ONLY = {
    str(b.action).partition("(")[0]
    for b in SparkTUI.BINDINGS
    if isinstance(b, Binding) and b.action not in ("quit", "help")
}
