"""Property: ``ls`` (row and JSON), ``describe`` (JSON and text) and the TUI give one answer.

For every scenario at every step of its replay, and for generated clusters, each front end's
own output is read back (``tests.app.oneanswer``) and compared with the answer worked out from
the application's JSON: state, attempt, executors running/total, losses by category (unknown
included) and alerts. At the end of each replay the commands themselves run
(``kubectl spark ls -A``, ``ls -A -o json``, ``describe -o json`` and its text) through the
real entry point; they read the cluster again, Spark's executor lists included.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_spark.core.analyze import analyze
from kubectl_spark.core.inputs import Snapshot
from kubectl_spark.core.node import nodes_of
from kubectl_spark.kube.client import Connection, connect
from kubectl_spark.sim import scenario as scenarios
from tests.core_pods import typed_snapshot

from .oneanswer import (
    expected,
    from_describe_text,
    from_row,
    from_summary,
    from_table,
)
from .replay import assert_one_answer


@contextmanager
def cli(kubeconfig: Path, capsys: Any) -> Iterator[Any]:
    from kubectl_spark.cli.main import main

    def run(*args: str) -> str:
        capsys.readouterr()
        code = main(["--kubeconfig", str(kubeconfig), *args])
        out = capsys.readouterr().out
        assert code == 0, (args, out)
        return out

    yield run


def assert_commands_agree(kubeconfig: Path, capsys: Any) -> None:
    with cli(kubeconfig, capsys) as run:
        items = orjson.loads(run("ls", "-A", "-o", "json"))["items"]
        table = from_table(run("ls", "-A"))
        assert set(table) == {(i["namespace"], i["name"]) for i in items}
        for item in items:
            answer = expected(item)
            key = (item["namespace"], item["name"])
            assert from_summary(item["summary"]) == answer, key
            assert table[key] == answer, key
            ref = ["-n", item["namespace"], item["appId"] or item["name"]]
            described = orjson.loads(run("describe", *ref, "-o", "json"))
            assert expected(described) == answer, key
            assert from_summary(described["summary"]) == answer, key
            assert from_describe_text(run("describe", *ref)) == answer, key


def matching_objects(kubeconfig: Path, selector: str) -> tuple[set[str], set[tuple[str, str]]]:
    """What the API server says ``selector`` matches: pod uids, and Jobs' and SparkApplications'
    (namespace, name). The oracle for ``-l``, read apart from the product's selection code."""
    with connect(Connection(kubeconfig=str(kubeconfig))) as api:
        pods, _ = api.list("/api/v1/pods", label_selector=selector)
        owners: set[tuple[str, str]] = set()
        for path in (
            "/apis/batch/v1/jobs",
            "/apis/sparkoperator.k8s.io/v1beta2/sparkapplications",
            "/apis/spark.apache.org/v1/sparkapplications",
            "/apis/spark.apache.org/v1/sparkclusters",
        ):
            try:
                found, _ = api.list(path, label_selector=selector)
            except Exception:
                found = []
            owners |= {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in found}
    return {p["metadata"]["uid"] for p in pods}, owners


def selectors_for(items: list[dict[str, Any]]) -> list[str]:
    """Selectors that pick some objects of an application and not others, and other apps'."""
    chosen = ["spark-role=driver", "spark-role=executor", "spark-role!=driver"]
    chosen += [f"spark-app-selector={i['appId']}" for i in items[:2] if i["appId"]]
    return chosen


def assert_label_selection(kubeconfig: Path, capsys: Any) -> None:
    """``ls -l`` selects applications, as kubectl's ``-l`` selects objects (issue 50, point 11):
    an application any of whose pods, Job or SparkApplication match is shown whole, with the
    answer it has unfiltered; none is shown that nothing of it matches."""
    with cli(kubeconfig, capsys) as run:
        whole = {
            (i["namespace"], i["name"]): i
            for i in orjson.loads(run("ls", "-A", "-o", "json"))["items"]
        }
        for selector in selectors_for(list(whole.values())):
            shown = orjson.loads(run("ls", "-A", "-l", selector, "-o", "json"))["items"]
            pods, owners = matching_objects(kubeconfig, selector)
            wanted = {
                key
                for key, item in whole.items()
                if key in owners
                or any(
                    a["uid"] in pods or any(e["uid"] in pods for e in a["executors"])
                    for a in item["attempts"]
                )
            }
            assert {(i["namespace"], i["name"]) for i in shown} == wanted, selector
            for item in shown:
                key = (item["namespace"], item["name"])
                assert expected(item) == expected(whole[key]), (selector, key)


@pytest.mark.parametrize("name", scenarios.available())
def test_one_answer_at_every_step_of_every_scenario(name: str, played: Any, capsys: Any) -> None:
    c = played(name)  # replayed with replay_checked
    assert c.one_answer == [], "\n".join(c.one_answer)
    assert_commands_agree(c.kubeconfig, capsys)  # at the end: each command reads on its own
    assert_label_selection(c.kubeconfig, capsys)


NOW = datetime(2026, 3, 1, 3, 0, tzinfo=UTC)
ENDS = [
    {"phase": "Running", "state": {"running": {}}},
    {"phase": "Failed", "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}},
    {"phase": "Failed", "state": {"terminated": {"exitCode": 52, "reason": "Error"}}},
    {"phase": "Failed", "state": {"terminated": {"exitCode": 1, "reason": "Error"}}},
    {"phase": "Succeeded", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
    {"phase": "Failed", "reason": "Evicted", "state": {"terminated": {"exitCode": 137}}},
    {"phase": "Pending", "state": {"waiting": {"reason": "ImagePullBackOff"}}},
    {"phase": "Running", "deleting": True, "state": {"running": {}}},
]


def _pod(name: str, role: str, app: str, at: int, end: dict[str, Any], **more: Any) -> Any:
    container = "spark-kubernetes-driver" if role == "driver" else "spark-kubernetes-executor"
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "ns",
        "uid": f"uid-{name}",
        "creationTimestamp": f"2026-03-01T02:{at:02d}:00Z",
        "labels": {"spark-role": role, "spark-app-selector": app, **more.pop("labels", {})},
        **more,
    }
    if end.get("deleting"):
        meta["deletionTimestamp"] = "2026-03-01T02:59:00Z"
    status = {
        "phase": end["phase"],
        "containerStatuses": [{"name": container, "state": end["state"], "restartCount": 0}],
    }
    if end.get("reason"):
        status["reason"] = end["reason"]
    return {"metadata": meta, "spec": {"nodeName": more.get("node", "n1")}, "status": status}


@st.composite
def spark_clusters(draw: st.DrawFn) -> Snapshot:
    """One or two applications, each with one to three driver attempts and their executors."""
    pods: list[Any] = []
    for a in range(draw(st.integers(1, 2))):
        app = f"spark-{a}"
        for n in range(draw(st.integers(1, 3))):
            driver = f"app{a}-d{n}"
            pods.append(_pod(driver, "driver", app, n * 10, draw(st.sampled_from(ENDS))))
            # Ids with gaps: an id below the highest seen that no pod explains is a loss of
            # unknown cause (its pod was deleted, and nothing kept it).
            ids = draw(st.lists(st.integers(0, 5), max_size=4, unique=True))
            for e in sorted(ids):
                owner = {"kind": "Pod", "name": driver, "uid": f"uid-{driver}", "controller": True}
                pods.append(
                    _pod(
                        f"app{a}-d{n}-exec-{e + 1}",
                        "executor",
                        app,
                        n * 10 + 1,
                        draw(st.sampled_from(ENDS)),
                        labels={"spark-exec-id": str(e + 1)},
                        ownerReferences=[owner] if draw(st.booleans()) else [],
                    )
                )
    ready = draw(st.sampled_from(["True", "Unknown"]))
    nodes = [
        {"metadata": {"name": "n1"}, "status": {"conditions": [{"type": "Ready", "status": ready}]}}
    ]
    return typed_snapshot(pods=pods, nodes=nodes_of(nodes), now=NOW)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spark_clusters())
def test_one_answer_for_generated_clusters(snapshot: Snapshot) -> None:
    assert_one_answer(analyze(snapshot), snapshot)


@pytest.mark.parametrize("name", ["s9-deleted-executors", "s4-executor-losses"])
def test_the_demos_printout_is_the_commands(name: str, played: Any, capsys: Any) -> None:
    """``demo --no-tui`` prints what ``kubectl spark ls -A`` says of the same cluster (issue 50,
    point 15): it ran a second analysis of its own, without Spark's executor lists, and said
    "3 unknown" for s9 where the command says "2 app, 1 cluster"."""
    import subprocess
    import sys

    demo = subprocess.run(
        [sys.executable, "-m", "kubectl_spark.cli.main", "demo", "--no-tui", "--scenario", name],
        capture_output=True,
        text=True,
        check=True,
        env={**__import__("os").environ, "KUBECTL_SPARK_WARM": "off"},
    ).stdout
    printed = demo.split("$ kubectl spark ls -A\n", 1)[1].split("\n\n", 1)[0] + "\n"
    with cli(played(name).kubeconfig, capsys) as run:
        assert from_table(printed) == from_table(run("ls", "-A"))


@pytest.mark.parametrize("name", ["s4-executor-losses", "s9-deleted-executors", "mixed"])
def test_totals_do_not_depend_on_the_history_store(
    name: str, cluster: Any, capsys: Any, tmp_path: Path
) -> None:
    """The same losses with and without ``--no-history`` where the cluster says the same
    (issue 50, point 12): a kept copy of a gone pod and Spark's own executor list must agree.
    In s4 the driver's kill of executor 8 and of its pending executor 10 read, from the kept
    pods, as a loss of unknown cause and as "Unschedulable (cluster)" while Spark said
    "Executor killed by driver." for both."""
    from tests.recording import record_while_playing

    c = cluster(name)
    db = tmp_path / "history.sqlite"
    record_while_playing(c, db, every=10)
    with cli(c.kubeconfig, capsys) as run:
        kept = orjson.loads(run("--history-db", str(db), "ls", "-A", "-o", "json"))["items"]
        bare = orjson.loads(run("--no-history", "ls", "-A", "-o", "json"))["items"]

    def totals(items: list[dict[str, Any]]) -> dict[tuple[str, str], Any]:
        # What the store adds is executors it kept (their count may grow), never other losses.
        return {(i["namespace"], i["name"]): (i["state"], expected(i).losses) for i in items}

    assert totals(kept) == totals(bare)
    if name == "mixed":
        # Point 13: the report finished, and its driver stopped the executor it still had
        # ("Killing" Events): no loss of unknown cause; the one on the cut-off node is lost.
        (report,) = (i for i in kept if i["name"] == "report")
        assert expected(report).losses == (("cluster", 1),)
    for item in kept:  # a verdict never contradicts its own evidence
        for attempt in item["attempts"]:
            for executor in attempt["executors"]:
                reason = executor["reason"] or {}
                wins = [e for e in reason.get("evidence", []) if "Spark's word wins" in e]
                assert not wins or reason["code"] == "DeletedByDriver", (executor["id"], reason)


async def test_the_tui_and_the_cli_agree_after_fence_and_after_ns(cluster: Any) -> None:
    """Issue 50, point 14: after ``fence`` the TUI showed "3 user" losses where ``ls`` showed
    none, and lost them after ``:ns``. The TUI (its watches, kept DELETED pods, Spark's lists
    polled) and ``ls`` (one read, kubectl spark's own Events) must give one answer, and the TUI
    the same after it re-reads a namespace. The commands run as processes: the TUI holds this
    one's output."""
    import subprocess
    import sys

    from kubectl_spark.tui.widgets.apps_table import AppsTable
    from tests.tui_pilot import SIZE, live_app, until

    c = cluster("s2-partition")
    c.player.play_until(100)  # the partition is on: attempt 1 Lost, its executors with it

    def command(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "kubectl_spark.cli.main", "--kubeconfig", str(c.kubeconfig),
             *args],
            capture_output=True, text=True, check=True,
            env={**__import__("os").environ, "KUBECTL_SPARK_WARM": "off"},
        )  # fmt: skip
        return done.stdout

    app = live_app(c, all_namespaces=True)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await pilot.press("w")

        def rows() -> list[list[str]]:
            return [[str(x) for x in table.get_row_at(i)] for i in range(table.row_count)]

        def shown() -> dict[tuple[str, str], Any]:
            try:
                return {(r[0], r[1].removeprefix("! ")): from_row(r) for r in rows()}
            except (ValueError, IndexError):  # a row being drawn, or a narrower table
                return {"rows": rows()}  # type: ignore[dict-item]

        await until(pilot, lambda: table.row_count == 1, timeout=20, what="the application")
        command("fence", "networkwordcount/1", "--yes")
        c.player.play_until(120)
        printed = from_table(command("ls", "-A"))
        (answer,) = printed.values()
        assert answer.losses, printed  # the fenced attempt's executors: deleted by the fence
        try:
            await until(pilot, lambda: shown() == printed, timeout=20)
        except AssertionError:
            raise AssertionError(f"the TUI shows {shown()}, ls printed {printed}") from None
        await pilot.press("colon", *"ns default", "enter")

        await until(pilot, lambda: app.namespace == "default" and not app.all_namespaces)
        try:  # read again from the namespace alone: the same answer
            await until(pilot, lambda: shown() == printed, timeout=20)
        except AssertionError:
            raise AssertionError(
                f"after :ns the TUI shows {shown()}, ls printed {printed}"
            ) from None


def test_executors_force_kill_removed_name_the_action(cluster: Any, capsys: Any) -> None:
    """Issue 50, point 14: an executor kubectl spark's own force-kill deleted is DeletedByUser
    naming the action (its DeletedByKubectlSpark Event), not "Gone (unknown)", in ls and
    describe alike, and no loss of unknown cause is left."""
    c = cluster("s2-partition")
    c.player.play_until(100)
    with cli(c.kubeconfig, capsys) as run:
        run("force-kill", "networkwordcount/1", "--node-down", "--yes")  # node-a powered off
        c.player.play_until(130)
        described = orjson.loads(run("describe", "networkwordcount", "-o", "json"))
        listed = orjson.loads(run("ls", "-A", "-o", "json"))["items"]
    first = described["attempts"][0]
    removed = [e for e in first["executors"] if e["reason"]]
    assert removed, first
    for executor in removed:
        reason = executor["reason"]
        assert (reason["code"], reason["category"]) == ("DeletedByUser", "user"), executor
        assert "force-kill" in reason["message"], reason
    assert first["unknownLosses"] == 0
    (item,) = listed
    assert expected(item) == expected(described)
