"""The TUI on pods the cluster forgot: what it records while open, what `record` kept, and
a stopped executor's last lines it kept itself."""

from __future__ import annotations

from typing import Any

from textual.widgets import RichLog

from kubectl_spark.tui.app import SparkTUI
from kubectl_spark.tui.screens.text import TextScreen
from kubectl_spark.tui.widgets.apps_table import AppsTable
from kubectl_spark.tui.widgets.attempt_tree import AttemptTree
from tests.recording import (
    driver_and_executor,
    exit_52,
    logs_kept,
    pod_deleted,
    start_record,
    stop_record,
)
from tests.tui_pilot import (
    SIZE,
    cursor_to,
    live_app,
    text_of,
    until,
)
from tests.waiting import wait_until


async def test_the_tui_records_while_open_and_shows_what_the_store_kept(
    cluster, capsys, tmp_path
) -> None:
    import json

    from kubectl_spark.cli.main import main

    c = cluster("s9-deleted-executors")
    c.player.scenario.apps["vanishing"].ui = False  # only the store can explain the losses
    db = tmp_path / "history.sqlite"
    app = live_app(c, history=db)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 0 and app.connected().version > 0)
        for t in range(10, 181, 10):
            c.player.play_until(t)
            await pilot.pause(0.05)
        await until(pilot, lambda: "OOMKilled" in str(app.analysis.to_json()))
    code = main(
        [
            "--kubeconfig",
            str(c.kubeconfig),
            "describe",
            "vanishing",
            "-o",
            "json",
            "--history-db",
            str(db),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    kept = {
        e["id"]: e["reason"]["code"]
        for a in json.loads(out)["attempts"]
        for e in a["executors"]
        if e["source"] == "history"
    }
    assert kept == {"1": "OOMKilled", "2": "Evicted", "3": "Preempted"}
    # A new TUI starts with what the store kept, marked as such.
    again = live_app(c, history=db)
    async with again.run_test(size=SIZE) as pilot:
        table = again.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 1)
        await until(pilot, lambda: "local history store" in str(again.analysis.to_json()))
        tree = again.query_one(AttemptTree)
        await until(pilot, lambda: bool(tree.root.children))
        lines = [str(n.label) for n in tree.root.children[0].children]
        assert any("exec-1" in line and "OOMKilled" in line for line in lines)


async def press_l_on_the_first_executor(pilot: Any, app: SparkTUI) -> AttemptTree:
    """The logs key on attempt 1's first executor; returns once a text screen shows."""
    tree = app.query_one(AttemptTree)
    tree.focus()
    await until(pilot, lambda: bool(tree.root.children and tree.root.children[0].children))
    await cursor_to(pilot, tree, tree.root.children[0].children[0])
    await pilot.press("l")
    await until(pilot, lambda: isinstance(app.screen, TextScreen))
    return tree


async def test_the_log_of_a_gone_pod_is_what_record_kept(
    emulator, kubeconfig, api, tmp_path
) -> None:
    """l on an executor Spark deleted, or on a gone driver: its last lines, from the store."""
    from types import SimpleNamespace

    from kubernetes import client

    core = client.CoreV1Api(api)
    uid = driver_and_executor(core).metadata.uid
    said = "java.lang.OutOfMemoryError: Java heap space\n"
    emulator.append_log("default", "vm-exec-1", "spark-kubernetes-executor", said)
    db = tmp_path / "history.sqlite"
    cluster = SimpleNamespace(kubeconfig=kubeconfig)
    proc = start_record(cluster, db)
    try:
        for name, container, kept in (
            ("vm-exec-1", "spark-kubernetes-executor", 1),
            ("vm-driver", "spark-kubernetes-driver", 2),
        ):
            exit_52(core, name, container)
            wait_until(lambda: logs_kept(db) == kept)  # noqa: B023 - waited for at once
            core.delete_namespaced_pod(
                name, "default", grace_period_seconds=0, _preload_content=False
            )
        wait_until(lambda: pod_deleted(db, uid))
    finally:
        stop_record(proc)
    app = live_app(cluster, history=db)  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 1)
        tree = await press_l_on_the_first_executor(pilot, app)
        title = text_of(app.screen.query_one("#text-title"))
        assert "default/vm-exec-1, kept by kubectl spark record" in title
        assert "kept by kubectl spark record: the pod is gone (last run, exit code 52)" in title
        lines = [str(line.text) for line in app.screen.query_one("#text-body", RichLog).lines]
        assert "java.lang.OutOfMemoryError: Java heap space" in lines
        await pilot.press("escape")
        # p, as logs -p: the run before the last. It ran once, so none was kept: said, not shown.
        await pilot.press("p")

        def told() -> list[str]:
            return [n.message for n in app._notifications]

        await until(pilot, lambda: any("no run before its last was kept" in m for m in told()))
        assert not isinstance(app.screen, TextScreen)
        assert not any("still exists" in m for m in told()), told()
        await cursor_to(pilot, tree, tree.root.children[0])  # attempt 1: its driver is gone too
        await pilot.press("l")
        await until(pilot, lambda: "vm-driver" in text_of(app.screen.query_one("#text-title")))
        assert "the pod is gone (last run, exit code 52)" in text_of(
            app.screen.query_one("#text-title")
        )


async def test_the_tui_keeps_a_stopped_executors_last_lines_itself(
    emulator, kubeconfig, api, tmp_path
) -> None:
    """No record running: the open TUI asks for the lines before Spark deletes the pod."""
    from types import SimpleNamespace

    from kubernetes import client

    core = client.CoreV1Api(api)
    driver_and_executor(core)
    said = "java.lang.OutOfMemoryError: GC overhead limit exceeded\n"
    emulator.append_log("default", "vm-exec-1", "spark-kubernetes-executor", said)
    db = tmp_path / "history.sqlite"
    app = live_app(SimpleNamespace(kubeconfig=kubeconfig), history=db)  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 1)
        exit_52(core, "vm-exec-1")
        await until(pilot, lambda: logs_kept(db) == 1)
        core.delete_namespaced_pod(
            "vm-exec-1", "default", grace_period_seconds=0, _preload_content=False
        )
        await until(pilot, lambda: "kept from a watch" in str(app.analysis.to_json()))
        await press_l_on_the_first_executor(pilot, app)
        lines = [str(line.text) for line in app.screen.query_one("#text-body", RichLog).lines]
        assert "java.lang.OutOfMemoryError: GC overhead limit exceeded" in lines
