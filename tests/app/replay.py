"""The one-answer property checked at each step of a scenario's replay (``played``).

``tests/conftest.py`` replays each scenario cluster once per run through ``replay_checked``;
``tests/app/test_one_answer.py`` asserts what it found and checks generated clusters with
``assert_one_answer``. A helper module, so that neither imports the other's tests.
"""

from __future__ import annotations

from typing import Any

import orjson

from kubectl_spark.app import describe, present
from kubectl_spark.app.summary import analysis_json, app_json
from kubectl_spark.app.view import Wanted, load
from kubectl_spark.core.incremental import LiveAnalysis
from kubectl_spark.core.inputs import Snapshot
from kubectl_spark.core.model import Analysis
from kubectl_spark.kube.client import Connection, connect
from kubectl_spark.sim import scenario as scenarios
from kubectl_spark.tui.widgets.apps_table import cells as tui_cells

from .oneanswer import expected, from_describe_text, from_row, from_summary


def assert_one_answer(analysis: Analysis, snapshot: Snapshot) -> None:
    """Every presenter of the one analysis, and the TUI's own (incremental) analysis of it."""
    now = snapshot.now
    doc = orjson.loads(orjson.dumps(analysis_json(analysis)))
    tui = {present.app_key(a): a for a in LiveAnalysis().update(snapshot, None).apps}
    assert len(tui) == len(analysis.apps)
    for app, item in zip(analysis.apps, doc["items"], strict=True):
        answer = expected(item)
        where = f"{app.namespace}/{app.name}"
        assert from_summary(item["summary"]) == answer, where
        assert from_summary(app_json(app)["summary"]) == answer, where
        row = present.row(app, now, all_namespaces=True, wide=False)
        assert from_row(row) == answer, (where, row)
        assert from_describe_text(describe.text(app, now, [])) == answer, where
        shown = [c.plain for c in tui_cells(tui[present.app_key(app)], now)][1:]  # no CONTEXT
        shown[1] = shown[1].removeprefix("! ")  # the TUI marks an application with alerts
        assert from_row(shown) == answer, (where, shown)


def checkpoints(scenario: scenarios.Scenario) -> list[float]:
    """Each step's time (the previous step's effects have shown by then), and the end.

    Whole seconds, as the steps are: replaying through them steps the clock exactly as
    ``Player.play()`` does, so the cluster at the end is the one every reader of ``played`` sees.
    """
    times = {1.0, scenario.duration, *(float(step.at) for step in scenario.steps)}
    return sorted(t for t in times if t <= scenario.duration)


def replay_checked(c: Any) -> list[str]:
    """Play a scenario cluster to its end, checking one answer at every checkpoint.

    ``played`` (tests/conftest.py) replays each scenario this way, once per run: the tests that
    only read a played cluster and this property share one replay. Failures are collected (the
    replay goes on) and asserted by the test below.
    """
    failures: list[str] = []
    for t in checkpoints(c.player.scenario):
        c.player.play_until(t)
        with connect(Connection(kubeconfig=str(c.kubeconfig))) as api:
            view = load(api, Wanted(namespace=None))
        try:
            assert_one_answer(view.analysis, view.snapshot)
        except AssertionError as exc:
            failures.append(f"at {t:g}s: {exc}")
    return failures
