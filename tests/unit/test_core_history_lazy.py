"""An application's timeline is built when first read, once, and reads as the tuple it was."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_spark.core import analyze as analysis
from kubectl_spark.core.analyze import analyze
from kubectl_spark.core.history import build_history
from kubectl_spark.core.model import History, HistoryEntry
from tests.core_pods import NOW, mk, printed, typed_snapshot

ENTRY = HistoryEntry("2026-03-01T00:00:00Z", "AttemptStarted", 1, None, "attempt 1 started")


def test_a_history_is_built_on_first_read_and_only_once() -> None:
    calls: list[int] = []

    def build() -> tuple[HistoryEntry, ...]:
        calls.append(1)
        return (ENTRY,)

    history = History(build)
    assert calls == []
    assert list(history) == [ENTRY] and len(history) == 1 and history[0] == ENTRY
    assert history[:1] == (ENTRY,) and history == (ENTRY,)
    assert (ENTRY,) == history  # noqa: SIM300 - a tuple on the left asks History back
    assert calls == [1]
    assert History(lambda: ()) == () and History(lambda: ()) != (ENTRY,)


def test_an_analysis_builds_no_timeline_until_one_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """``ls`` of 10,000 pods shows no timeline: building every application's cost a sixth of it."""
    built: list[str] = []
    real = build_history

    def counting(app: Any, group: Any, index: Any) -> tuple[HistoryEntry, ...]:
        built.append(app.name)
        return real(app, group, index)

    monkeypatch.setattr(analysis, "build_history", counting)
    driver = mk("a-driver", "driver", "2026-03-01T00:00:00Z", labels={"spark-app-selector": "a"})
    executor = mk(
        "a-exec-1",
        "executor",
        "2026-03-01T00:00:05Z",
        labels={"spark-app-selector": "a", "spark-exec-id": "1"},
        owner={"kind": "Pod", "uid": "uid-a-driver", "name": "a-driver", "controller": True},
    )
    (app,) = analyze(typed_snapshot(pods=[driver, executor], now=NOW)).apps
    assert built == []
    kinds = [h.kind for h in app.history]
    assert kinds == ["AttemptStarted", "ExecutorAdded"]
    assert printed(app)["history"][1]["message"] == "executor 1 added: a-exec-1"
    assert built == ["a"]
