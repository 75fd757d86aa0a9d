"""Attempts → executors, each line with its state and loss reason (or why it waits)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from kubectl_spark.core.model import App, Reason

from .safe import safe
from .steady import looks

STATE_STYLE = {
    "Running": "green",
    "Lost": "red",
    "Failed": "red",
    "Fenced": "magenta",
    "Terminating": "yellow",
    "Pending": "yellow",
}


def _label(
    title: str, state: str, reason: Reason | None, waiting: Reason | None, where: str, narrow: bool
) -> Text:
    """State and reason before the pod's name: a narrow pane cuts the name, not the verdict.

    Narrow, the name and node are left out (the detail pane beside it has them), and the
    parts are one space apart.
    """
    gap = " " if narrow else "  "
    text = safe(title)
    text.append(gap)
    text.append_text(safe(state, STATE_STYLE.get(state, "")))
    if reason is not None:
        text.append(gap)
        text.append_text(
            safe(
                f"{reason.code} ({reason.category})",
                "red" if reason.category in ("app", "cluster") else "dim",
            )
        )
    elif waiting is not None:  # nothing lost, but it does not start (or keeps restarting)
        text.append(gap)
        text.append_text(safe(f"waiting: {waiting.code}", "yellow"))
    if where and not narrow:
        text.append("  ")
        text.append_text(safe(where, "dim"))
    return text


Key = tuple[str, int, str]
# title, state, reason, waiting, where (the pod and its node)
Line = tuple[str, str, Reason | None, Reason | None, str]


def _lines(app: App) -> list[tuple[Key, Line]]:
    out: list[tuple[Key, Line]] = []
    for attempt in app.attempts:
        where = attempt.driver_shown() + (f" on {attempt.node}" if attempt.node else "")
        line = (f"attempt {attempt.number}", attempt.state, attempt.reason, attempt.waiting, where)
        out.append((("attempt", attempt.number, ""), line))
        out.extend(
            (
                ("executor", attempt.number, executor.id),
                (
                    f"exec-{executor.id}",
                    executor.state,
                    executor.reason,
                    executor.waiting,
                    executor.pod,
                ),
            )
            for executor in attempt.executors
        )
    return out


class AttemptTree(Tree[Key]):
    """Updated in place while the application keeps its shape, so the cursor and scroll stay."""

    BINDINGS = [  # as the apps table's (AppsTable.BINDINGS)
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("g", "scroll_home", "First", show=False),
        Binding("G", "scroll_end", "Last", show=False),
    ]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.auto_expand = False  # enter drills down into a pod (space folds an attempt)
        self._tree_shape: tuple[str, tuple[Key, ...]] | None = None
        self._root_looks = looks(None)  # of the root label last set
        self._node_by_key: dict[Key, TreeNode[Key]] = {}
        self._line_by_key: dict[Key, Line] = {}
        self.narrow = False

    def show(self, app: App | None, *, narrow: bool = False) -> None:
        if app is None:
            self.clear()
            self._tree_shape = None
            self.root.set_label("no application selected")
            return
        lines = _lines(app)
        root = safe(f"{app.name} ({app.source}, {app.state})")
        shape = (f"{app.namespace}/{app.name}/{app.source}", tuple(k for k, _ in lines))
        relabel = narrow != self.narrow
        self.narrow = narrow
        if shape == self._tree_shape:
            if looks(root) != self._root_looks:  # a new root label redraws every line
                self.root.set_label(root)
                self._root_looks = looks(root)
            for key, line in lines:
                if relabel or self._line_by_key.get(key) != line:
                    self._node_by_key[key].set_label(_label(*line, narrow))
                    self._line_by_key[key] = line
            return
        self._rebuild(root, lines)
        self._tree_shape = shape

    def _rebuild(self, root: Text, lines: list[tuple[Key, Line]]) -> None:
        selected = self.cursor_node.data if self.cursor_node is not None else None
        self.clear()
        self.root.set_label(root)
        self._root_looks = looks(root)
        self.root.expand()
        self._node_by_key, self._line_by_key = {}, dict(lines)
        parent = self.root
        for key, line in lines:
            if key[0] == "attempt":
                parent = node = self.root.add(_label(*line, self.narrow), data=key, expand=True)
            else:
                node = parent.add_leaf(_label(*line, self.narrow), data=key)
            self._node_by_key[key] = node
        if selected in self._node_by_key:
            # A node knows its line only once the tree has laid its lines out (Textual does that
            # lazily, at the next refresh); until then move_cursor would put the cursor on the
            # root. Asking for a line lays them out now.
            self.get_node_at_line(0)
            self.move_cursor(self._node_by_key[selected])

    def select_attempt(self, number: int) -> None:
        """The cursor on an attempt's line (an executor's owner)."""
        node = self._node_by_key.get(("attempt", number, ""))
        if node is not None:
            self.get_node_at_line(0)  # lines laid out (see _rebuild)
            self.move_cursor(node)
