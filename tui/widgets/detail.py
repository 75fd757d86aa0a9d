"""The selected attempt's or executor's loss reason: category, failure rule, evidence, what to do."""

from __future__ import annotations

import re
import textwrap

from rich.text import Text
from textual import events

from kubectl_spark.app.advice import advice
from kubectl_spark.app.describe import counters
from kubectl_spark.core.model import App, Attempt, HistoryEntry, Reason

from .safe import safe
from .steady import SteadyStatic

MAX_RUNS = 5  # the latest restarts in place shown; the history (describe, history) has them all


def _restarts(app: App, attempt: int, executor: str | None) -> list[HistoryEntry]:
    """The restarts in place of an attempt's driver (``executor`` None) or of one executor."""
    return [
        e
        for e in app.history
        if e.kind == "ContainerRestarted" and e.attempt == attempt and e.executor == executor
    ]


class _FieldPathWrapper(textwrap.TextWrapper):
    """Folds a field path after ``.``, ``=``, ``]``, ``/`` or ``,``, and before ``[``, as at spaces.

    ``textwrap`` breaks a token longer than the line wherever the line ends, which splits a name
    in two (``exitCod`` / ``e=0``); a break after a separator keeps each name whole.
    """

    wordsep_simple_re = re.compile(r"(\s+|(?<=[.=\]/,])(?=\S)|(?=\[))")


class DetailPane(SteadyStatic):
    _shown: tuple[App | None, tuple[str, int, str] | None] = (None, None)

    def on_resize(self, _event: events.Resize) -> None:
        self.show(*self._shown)  # evidence is folded to the pane's width: fold it again

    def show(self, app: App | None, selection: tuple[str, int, str] | None) -> None:
        self._shown = (app, selection)
        if app is None or selection is None or not app.attempts:
            self.update(
                Text("Select an attempt or an executor to see why it stopped.", style="dim")
            )
            return
        kind, number, exec_id = selection
        attempt = next((a for a in app.attempts if a.number == number), None)
        if attempt is None:
            self.update("")
            return
        if kind == "executor":
            executor = next((e for e in attempt.executors if e.id == exec_id), None)
            if executor is None:
                self.update("")
                return
            head = safe(
                f"exec-{executor.id} {executor.pod} on {executor.node or '-'}: {executor.state}, {executor.restarts} restart(s)",
                "bold",
            )
            runs = _restarts(app, number, executor.id)
            self.update(
                self._runs(
                    self._reason(
                        head, executor.reason, executor.waiting, runs, "executor", attempt
                    ),
                    runs,
                )
            )
            return
        head = safe(
            f"attempt {attempt.number} {attempt.driver_shown()} on {attempt.node or '-'}: {attempt.state}"
            + (" [fenced]" if attempt.fenced else ""),
            "bold",
        )
        runs = _restarts(app, number, None)
        text = self._runs(
            self._reason(head, attempt.reason, attempt.waiting, runs, "driver", attempt), runs
        )
        if app.notes and not text.plain.endswith("\n"):
            text.append("\n")
        for note in app.notes:  # what could not be read or explained: the answer is partial
            text.append_text(safe(f"note: {note}\n", "dim"))
        self.update(text)

    def _reason(
        self,
        head: Text,
        reason: Reason | None,
        waiting: Reason | None = None,
        runs: list[HistoryEntry] | None = None,
        role: str = "executor",
        attempt: Attempt | None = None,
    ) -> Text:
        text = head.copy()
        text.append("\n")
        if reason is None and waiting is not None:
            text.append_text(safe(f"waiting, {waiting.code}: {waiting.message}\n", "bold yellow"))
            text.append_text(safe(f"category: {waiting.category}; nothing is lost yet\n"))
            return self._evidence_and_advice(text, waiting, attempt, role)
        if reason is None and runs:
            text.append(
                f"No loss: it runs, after its container restarted in place {len(runs)} time(s).\n",
                style="yellow",
            )
            return text
        if reason is None:
            text.append("No loss: it runs (or waits) unharmed.", style="green")
            return text
        text.append_text(
            safe(
                f"{reason.code}: {reason.message}\n",
                "bold red" if reason.category in ("app", "cluster") else "bold",
            )
        )
        text.append_text(
            safe(
                f"category: {reason.category}; {counters(reason, role)}"
                + (f"; exit code {reason.exit_code}" if reason.exit_code is not None else "")
                + "\n"
            )
        )
        return self._evidence_and_advice(text, reason, attempt, role)

    def _runs(self, text: Text, runs: list[HistoryEntry]) -> Text:
        """The restarts in place, oldest first, each with its reason (the history's entries)."""
        if not runs:
            return text
        if not text.plain.endswith("\n"):
            text.append("\n")
        text.append("restarts:\n", style="underline")
        for entry in runs[-MAX_RUNS:]:
            text.append_text(self._bullet(f"{entry.time or '<unknown>'}: {entry.message}"))
        return text

    def _evidence_and_advice(
        self, text: Text, reason: Reason, attempt: Attempt | None, role: str
    ) -> Text:
        text.append("evidence:\n", style="underline")
        for item in reason.evidence:
            text.append_text(self._bullet(item))
        todo = advice(reason, attempt, role)
        if todo:
            text.append("what to do: ", style="bold")
            text.append_text(safe(todo))
        return text

    def _bullet(self, item: str) -> Text:
        """One evidence item, folded under its bullet.

        Evidence is often one long token (``status.containerStatuses[…].state.terminated.reason=…``):
        wrapped by words, it would leave its bullet alone on a line and start below it.
        """
        line = safe(item).plain.replace("\n", " ")  # escaped: cluster text
        width = self.content_size.width
        if width < 12:  # not laid out yet
            return Text(f"  • {line}\n")
        folded = _FieldPathWrapper(
            width=width, initial_indent="  • ", subsequent_indent="    ", break_on_hyphens=False
        ).wrap(line)
        return Text("\n".join(folded or ["  •"]) + "\n")
