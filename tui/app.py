"""``kubectl spark tui``: live, keyboard-driven, the place people go at 3 a.m.

The app holds the data: a source (watches on a live cluster, or a fixed snapshot in tests),
a timer that notices new data, and a thread worker that runs the core on it and hands the
result back to the UI thread; workers never touch widgets. The main screen (``MainScreen``)
draws it and owns the keys that act on it.
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
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from kubectl_spark.app.text import escape
from kubectl_spark.core.model import Analysis
from kubectl_spark.core.model import App as SparkApp
from kubectl_spark.knowledge.names import shown
from kubectl_spark.memory import freeze_long_lived

from .main_screen import MainScreen
from .many import ManySource
from .plan_flow import PlanFlow
from .pod_views import PodViews
from .screens.help import HelpScreen
from .sources import Analyzer, Source, Target, one_cluster, why_not_started
from .widgets.command import CommandBox, Names

MakeSource = Callable[[str | None, str | None, bool], Source]  # (namespace, context, -A)


class SparkTUI(App[None]):
    """The source, the analysis and its workers; the main screen draws them (``MainScreen``).

    Only quit and help are bound here: every other key is the main screen's, or the screen
    on top of it's.
    """

    CSS_PATH = "styles.tcss"
    TITLE = "kubectl spark"
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help"),
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
        self.make_source = make_source
        self.namespace, self.context, self.all_namespaces = namespace, context, all_namespaces
        self.readonly = readonly
        self.demo = demo  # the status bar says that the cluster is a simulation
        # Ages are read against the cluster's clock when the source knows it (a live cluster).
        self.clock = now or self._source_now
        self.main = MainScreen(names, initial_filter, readonly=readonly)
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
        self.source: Source | None = None
        self.switch_error = ""  # why the last :ns or :ctx left the view as it was
        self.ui_forwards: dict[tuple[str, str], Any] = {}  # (namespace, driver) → UiForward
        self._loop: asyncio.AbstractEventLoop | None = None

    def get_default_screen(self) -> Screen[Any]:
        return self.main

    @on(MainScreen.Ready)
    def _main_ready(self) -> None:
        """The main screen is there: lay it out, start the source, and keep it fresh."""
        self._loop = asyncio.get_running_loop()
        self.main.relayout()
        self.start_source()
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

    def start_source(self) -> None:
        """(Re)connect with what the view asks for now (ctrl+r, and at start)."""
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
        self.main.apps_table.contexts = isinstance(source, ManySource)

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
            self.main.render_apps()

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
        self.say_status()

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

    def say_status(self) -> None:
        """The status bar: where, how connected, how many, and what narrows the list."""
        source = self.connected()
        apps = self.analysis.apps
        self.main.status_bar.show(
            context=source.context or (self.context or ""),
            namespace=source.namespace if not self.all_namespaces else None,
            state=source.state,
            last_event=source.last_event,
            apps=len(apps),
            alerts=sum(len(a.alerts) for a in apps),
            error=source.error or self.switch_error,
            marks=self.main.marks(),
            demo=self.demo,
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
            self.main.render_apps()
        self._poll()  # changes that arrived meanwhile: one more batch at once

    def on_resize(self) -> None:
        # Called before App's own handler takes the new size: lay out once it has.
        self.call_later(self.main.relayout)

    # ------------------------------------------------------------ :ctx and :ns
    @on(CommandBox.Asked)
    def _command(self, event: CommandBox.Asked) -> None:
        self.main.apps_table.focus()
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
            self.say_status()
            return
        self.namespace, self.context, self.all_namespaces = astuple(target)
        self._use(candidate)
        self.main.selected = None
        self.analysis = Analysis()
        self.main.apps_table.focus()
        self._poll()

    def action_help(self) -> None:
        self.push_screen(HelpScreen(readonly=self.readonly))

    # ------------------------------------------------------------------ command palette
    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Help", "Show every key binding", self.action_help)
        yield SystemCommand(
            "Faults only", "Show only applications with alerts or losses", self.main.action_faults
        )
        if not self.readonly:
            for title, what, action in (
                ("Fence attempt", "Fence the selected attempt", self.main.action_fence),
                (
                    "Force-kill attempt",
                    "Force-kill the selected attempt",
                    self.main.action_force_kill,
                ),
                (
                    "Resubmit application",
                    "Resubmit the selected application",
                    self.main.action_resubmit,
                ),
            ):
                yield SystemCommand(title, f"{what} (shows the plan first)", action)
