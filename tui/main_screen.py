"""The main screen: the applications, the focused one's attempts, its detail and its timeline.

Its keys are bound here, so they act only while it is the screen on top: over a log view,
``f`` follows the log and cannot fall through to fence the attempt behind it. What it shows is
the app's latest analysis (``SparkTUI.analysis``), drawn when the app says it changed
(``show``); what the keys act on is this screen's selection (``selection``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Tree

from kubectl_spark.app.text import escape
from kubectl_spark.core.model import App as SparkApp
from kubectl_spark.core.model import Attempt

from .filtering import AppFilter
from .widgets.apps_table import AppsTable, SortKey, app_key
from .widgets.attempt_tree import AttemptTree
from .widgets.banner import AlertsBanner
from .widgets.command import CommandBox, Names
from .widgets.detail import DetailPane
from .widgets.safe import safe
from .widgets.status import StatusBar
from .widgets.steady import SteadyStatic
from .widgets.timeline import Timeline

if TYPE_CHECKING:
    from .app import SparkTUI

ACTIONS = {"fence", "force_kill", "resubmit", "delete_pod"}
READONLY_KEYS = {"f": "fence", "K": "force-kill", "r": "resubmit", "ctrl+d": "delete pod"}
NARROW = 120  # columns
SHORT = 20  # lines: below it the timeline gives its room to the tree
LOW = 30  # lines: below it the alerts banner and the timeline take fewer


class MainScreen(Screen[None]):
    class Ready(Message):
        """The screen's widgets are there: the app may start its source and draw."""

    BINDINGS = [
        # The app's own two first, as the footer has always listed them (they work anywhere).
        Binding("q", "app.quit", "Quit"),
        Binding("question_mark", "app.help", "Help"),
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

    def __init__(self, names: Names | None, initial_filter: str, *, readonly: bool) -> None:
        super().__init__()
        self.names = names  # what :ctx and :ns alone offer to pick from
        self.readonly = readonly
        self.filtering = AppFilter(initial_filter)
        self.selected: str | None = None  # the key of the application the cursor is on
        self.mounted = False

    @property
    def tui(self) -> SparkTUI:
        return cast("SparkTUI", self.app)

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
        self.apps_table = self.query_one(AppsTable)
        self.attempt_tree = self.query_one(AttemptTree)
        self.alerts_banner = self.query_one(AlertsBanner)
        self.detail_pane = self.query_one(DetailPane)
        self.timeline_view = self.query_one(Timeline)
        self.status_bar = self.query_one(StatusBar)
        self.filter_box = self.query_one("#filter", Input)
        self.command_box = self.query_one(CommandBox)
        self.focus_line = self.query_one("#focus", SteadyStatic)
        self.mounted = True
        self.post_message(self.Ready())

    @property
    def narrow(self) -> bool:
        """Below this width the tree leaves out pod names (the detail pane has them)."""
        return self.app.size.width < NARROW

    def relayout(self) -> None:
        """The layout's classes (CSS cannot ask for the terminal's size), then a redraw."""
        if not self.mounted:  # on_mount lays out
            return
        size = self.app.size
        self.set_class(size.height < SHORT, "short")
        self.set_class(size.height < LOW, "low")
        self.query_one(Footer).compact = self.narrow
        if self.tui.analysis.apps:
            self.render_apps()
        if self.tui.source is not None:
            self.tui.say_status()

    # ---------------------------------------------------------------------- drawing
    def marks(self) -> tuple[str, ...]:
        """What narrows or reorders the list, named on the status bar while it is on."""
        return (*self.filtering.marks(), *self.apps_table.marks())

    def _visible(self) -> list[SparkApp]:
        return self.filtering.visible(self.tui.analysis.apps, self.tui.snapshot)

    def render_apps(self) -> None:
        """The table from the latest analysis, then the application under the cursor."""
        if not self.mounted:
            return
        table = self.apps_table
        # The cursor is the truth: a move the operator just made (its highlight event not yet
        # handled) must not be undone by a render that runs first.
        table.sync(self._visible(), self.tui.clock(), self.app.size.width)
        # What the tree and the detail show is what the cursor is on, and what Enter opens: an
        # application filtered out of sight hands the selection to the row under the cursor.
        self.selected = table.selected_key()
        self._render_app()

    def current_app(self) -> SparkApp | None:
        return next((a for a in self.tui.analysis.apps if app_key(a) == self.selected), None)

    def _render_app(self) -> None:
        app = self.current_app()
        self.alerts_banner.show(app)
        tree = self.attempt_tree
        tree.show(app, narrow=self.narrow)
        node = tree.cursor_node
        self.detail_pane.show(
            app, node.data if node is not None and node.data else self._default_selection(app)
        )
        width = max(20, self.app.size.width - 24)
        self.timeline_view.show(app, self.tui.clock(), width=width)
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
        if not self.mounted:
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
            self.render_apps()
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
        self.render_apps()

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
        self.render_apps()

    def action_command(self) -> None:
        self.command_box.open(self.tui.context)

    def action_reload(self) -> None:
        self.tui.start_source()

    def action_wide(self) -> None:
        """Every column of ``ls -o wide`` (the table scrolls sideways), or those that fit."""
        self.apps_table.wide = not self.apps_table.wide
        self.render_apps()
        self.tui.say_status()

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
        self.render_apps()
        self.tui.say_status()

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
        self.app.copy_to_clipboard(name)
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
        self.tui.views.owner_yaml(app.namespace, attempt.uid)

    # ----------------------------------------------------------------------- viewers
    def action_logs(self) -> None:
        self.tui.views.logs()

    def action_previous_logs(self) -> None:
        self.tui.views.previous_logs()

    def action_describe(self) -> None:
        self.tui.views.describe()

    def action_yaml(self) -> None:
        self.tui.views.yaml()

    def action_shell(self) -> None:
        self.tui.views.shell()

    def action_spark_ui(self) -> None:
        self.tui.views.spark_ui()

    # ------------------------------------------------------------------------ actions
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Which keys show and act: hidden, not merely disabled.

        The actions with --readonly; and every key of this screen but q and ? while a dialog
        covers it (its footer stays in sight, and must not offer what is not there).
        """
        if self.app.screen is not self:
            return action in ("app.quit", "app.help")
        return not (action in ACTIONS and self.readonly)

    def on_key(self, event: Any) -> None:
        """A hidden action's key says why nothing happens, instead of nothing."""
        if self.readonly and event.key in READONLY_KEYS and not isinstance(self.focused, Input):
            self.notify(
                f"read-only: {READONLY_KEYS[event.key]} is off (started with --readonly)",
                severity="warning",
            )

    def action_fence(self) -> None:
        self.tui.plans.make("fence", *self.selection()[:2])

    def action_force_kill(self) -> None:
        self.tui.plans.make("force-kill", *self.selection()[:2])

    def action_resubmit(self) -> None:
        self.tui.plans.make("resubmit", *self.selection()[:2])

    def action_delete_pod(self) -> None:
        self.tui.plans.delete_pod()
