"""``describe`` prints, for every loss it explains, the advice the TUI's detail pane shows."""

from __future__ import annotations

from typing import Any

import orjson

from kubectl_spark.app.advice import advice
from kubectl_spark.tui.app import SparkTUI
from kubectl_spark.tui.sources import StaticSource
from kubectl_spark.tui.widgets.detail import DetailPane
from tests.tui_pilot import SIZE, text_of


async def test_describe_and_the_tui_give_the_same_advice(played: Any, capsys: Any) -> None:
    from kubectl_spark.app.view import Wanted, load
    from kubectl_spark.cli.main import main
    from kubectl_spark.kube.client import Connection, connect

    c = played("mixed")
    ref = ["--kubeconfig", str(c.kubeconfig), "-n", "spark-prod", "describe", "nightly-etl"]
    assert main([*ref, "-o", "json"]) == 0
    doc = orjson.loads(capsys.readouterr().out)
    assert main(ref) == 0
    text = " ".join(capsys.readouterr().out.split())  # folded lines joined
    with connect(Connection(kubeconfig=str(c.kubeconfig))) as api:
        view = load(api, Wanted(namespace="spark-prod"))
    (app,) = [a for a in view.analysis.apps if a.name == "nightly-etl"]
    tui = SparkTUI(lambda *_: StaticSource(view.snapshot, namespace="spark-prod"))
    advised = 0
    async with tui.run_test(size=SIZE):
        pane = tui.query_one(DetailPane)
        for attempt in doc["attempts"]:
            for executor in attempt["executors"]:
                code = (executor["reason"] or {}).get("code")
                todo = advice(
                    next(e.reason for e in app.attempts[0].executors if e.id == executor["id"]),
                    app.attempts[0],
                )
                if code is None or todo is None:
                    continue
                if code == "NodeLost":  # its driver runs on node-b: fence would refuse
                    assert "fence it" not in todo and "nothing to fence" in todo, todo
                advised += 1
                assert f"To do: {todo}" in text, code
                pane.show(app, ("executor", attempt["number"], executor["id"]))
                shown = " ".join(text_of(pane).split())
                assert f"what to do: {todo}" in shown, code
    assert advised >= 3  # OOMKilled, JvmOutOfMemory, Evicted, NodeLost


def test_a_fenced_attempt_is_never_told_to_fence() -> None:
    """Issue 50, point 14: advice names only an action that will run."""
    from kubectl_spark.core.model import Attempt, Reason

    lost = Reason(
        category="cluster",
        code="NodeLost",
        exit_code=None,
        counts_as_failure=False,
        message="node unreachable: node node-a: Ready=Unknown",
    )
    fenced = Attempt(1, "d", "u", "node-a", "Running", "Fenced", None, None, None, 0, True, lost)
    todo = advice(lost, fenced, "driver")
    assert todo is not None and "fence it" not in todo and "force-kill --node-down" in todo
