"""What narrows the applications list: the filter box's text and "faults only"."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kubectl_spark.core.inputs import Snapshot
from kubectl_spark.core.model import App
from kubectl_spark.core.selecting import selected_ids
from kubectl_spark.knowledge.names import shown
from kubectl_spark.knowledge.selectors import SelectorError, parse_label_selector


@dataclass
class AppFilter:
    """The filter box's text (words, ``-l SELECTOR`` as the CLI's, ``!`` to invert) and faults only.

    Both are named on the status bar while on (``marks``): an empty or short list must never
    be mistaken for the cluster's.
    """

    text: str = ""
    faults_only: bool = False

    def visible(self, apps: Sequence[App], snapshot: Snapshot | None) -> list[App]:
        kept = list(apps)
        if self.faults_only:
            kept = [
                a
                for a in kept
                if a.alerts or any(e.reason for t in a.attempts for e in t.executors)
            ]
        text = self.text.strip()
        if not text:
            return kept
        invert = text.startswith("!")
        text = text.lstrip("!").strip()
        if text.startswith("-l"):
            # The CLI's -l: applications any of whose objects match (core.selecting).
            try:
                selector = parse_label_selector(text[2:].strip())
            except SelectorError:
                return []  # still being typed: nothing matches yet
            ids = selected_ids(kept, snapshot or Snapshot(), selector)
            return [a for a in kept if (id(a) in ids) != invert]
        words = text.lower()

        def hit(app: App) -> bool:
            said = f"{app.context} {app.namespace}/{app.name} {app.state} "
            return words in (said + " ".join(a.type for a in app.alerts)).lower()

        return [a for a in kept if hit(a) != invert]

    def marks(self) -> tuple[str, ...]:
        text = self.text.strip()
        return (
            *([f"filter: {shown(text, 40)}"] if text else []),
            *(["faults only"] if self.faults_only else []),
        )
