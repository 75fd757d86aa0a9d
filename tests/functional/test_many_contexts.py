"""``--context a,b`` and ``--all-contexts``: every cluster's applications in one answer.

Two real backends in one run: a played scenario on the emulator (context ``emu``) and an
application submitted to the real control plane (context ``real``). Each context is read in a
thread of its own with its own deadline (kubectl_spark/cli/clusters.py): one that is cut, or
that accepts and never answers, is named on stderr, with a non-zero exit, after the others'
rows were printed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.beds import RealBed
from tests.command_line import run
from tests.faultproxy import Fault, FaultProxy
from tests.stages import Stage

pytestmark = pytest.mark.slow
REAL_APP = "networkwordcount"
WATCHED = ("--context", "cut,real", "--no-headers")


def renamed(kubeconfig: Path, name: str, server: str | None = None) -> dict[str, Any]:
    """One context's kubeconfig with its cluster, user and context all called ``name``.

    Merged files keep the first entry of a name (kubectl's rule), so each needs its own names.
    """
    doc = yaml.safe_load(kubeconfig.read_text())
    cluster, user = doc["clusters"][0], doc["users"][0]
    cluster["name"] = user["name"] = name
    if server is not None:
        cluster["cluster"] = {"server": server}  # the proxy speaks plain HTTP
    context = doc["contexts"][0]
    context["name"] = context["context"]["cluster"] = context["context"]["user"] = name
    return doc


def merged(path: Path, *docs: dict[str, Any], current: str) -> Path:
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Config", "current-context": current}
    for section in ("clusters", "users", "contexts"):
        out[section] = [item for doc in docs for item in doc[section]]
    path.write_text(yaml.safe_dump(out))
    path.chmod(0o600)
    return path


@pytest.fixture
def two(cluster: Any, control_plane: Any, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """Contexts ``emu`` (S1 played), ``real`` (one application running) and ``cut`` (the
    emulator again, behind a proxy the test can cut)."""
    from tests.beds import reset

    emu = cluster("s1-node-shutdown")
    emu.player.play()
    bed = RealBed(control_plane)
    stage = Stage(bed, "s1-node-shutdown", tmp_path)
    try:
        stage.do("submit", REAL_APP)
        stage.until("the real driver running", lambda: len(stage.running(spark_role="driver")) == 1)
        with FaultProxy(emu.server.url) as proxy:
            token = emu.server.token
            cut = renamed(emu.kubeconfig, "cut", server=proxy.url)
            cut["users"][0]["user"] = {"token": token}
            config = merged(
                tmp_path / "many",
                renamed(emu.kubeconfig, "emu"),
                renamed(stage.kubeconfig, "real"),
                cut,
                current="emu",
            )
            yield {"kubeconfig": config, "proxy": proxy, "stage": stage}
    finally:
        stage.close()
        bed.close()
        reset(control_plane)


def test_ls_lists_every_context_with_a_context_column(two, capsys) -> None:
    code, out, err = run(capsys, two["kubeconfig"], "ls", "-A", "--context", "emu,real")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["CONTEXT", "NAMESPACE", "APP"]
    contexts = {line.split()[0] for line in lines[1:]}
    assert contexts == {"emu", "real"}, out
    assert any(line.split()[0] == "real" and REAL_APP in line for line in lines), out

    code, out, err = run(capsys, two["kubeconfig"], "ls", "-A", "--context=emu,real", "-o", "json")
    assert code == 0, err
    items = json.loads(out)["items"]
    assert {i["context"] for i in items} == {"emu", "real"}
    # One context alone answers as before: no context field (the contract is extended only
    # where several clusters are read).
    code, out, err = run(capsys, two["kubeconfig"], "ls", "-A", "--context", "real", "-o", "json")
    assert code == 0, err
    assert all("context" not in i for i in json.loads(out)["items"])


def test_all_contexts_names_a_cut_cluster_and_prints_the_others(two, capsys) -> None:
    two["proxy"].cut()
    start = time.monotonic()
    code, out, err = run(capsys, two["kubeconfig"], "ls", "-A", "--all-contexts")
    assert code == 1
    assert {line.split()[0] for line in out.splitlines()[1:]} == {"emu", "real"}, out
    assert err.startswith('error: 1 of 3 contexts did not answer: context "cut": '), err
    assert time.monotonic() - start < 30

    two["proxy"].restore()  # it recovers: the next read lists all three
    code, out, err = run(capsys, two["kubeconfig"], "ls", "-A", "--all-contexts")
    assert code == 0, err
    assert {line.split()[0] for line in out.splitlines()[1:]} == {"cut", "emu", "real"}, out


def test_a_cluster_that_never_answers_is_given_up_at_its_deadline(two, capsys) -> None:
    """It holds up nothing: the others are printed within --request-timeout (and a margin)."""
    two["proxy"].faults.append(Fault("swallow", seconds=60))
    start = time.monotonic()
    code, out, err = run(
        capsys, two["kubeconfig"], "ls", "-A", "--all-contexts", "--request-timeout", "3s"
    )
    took = time.monotonic() - start
    assert code == 1
    assert 'context "cut": list pods in all namespaces: no answer within' in err, err
    assert {line.split()[0] for line in out.splitlines()[1:]} == {"emu", "real"}, out
    assert took < 3 + 5, took


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["ls", "--context", "a,,b"], 'invalid --context "a,,b"'),
        (["ls", "--all-contexts", "--context", "a"], "--all-contexts and --context"),
        (["describe", "x", "--context", "a,b"], "are read by ls and tui only"),
    ],
)
def test_several_contexts_where_they_cannot_be_read(
    args: list[str], said: str, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, kubeconfig, *args)
    assert code == 1 and out == ""
    assert said in err and "Traceback" not in err, err


def late_driver() -> dict[str, Any]:
    """A spark-submit driver pod created while the TUI watches (a new application, late)."""
    labels = {"spark-role": "driver", "spark-app-name": "late", "spark-app-selector": "spark-late"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "late-driver", "namespace": "default", "labels": labels},
        "spec": {"containers": [{"name": "spark-kubernetes-driver", "image": "spark:4.1.1"}]},
    }


def rows_by_context(app: Any) -> set[tuple[str, str]]:
    from kubectl_spark.tui.widgets.apps_table import AppsTable

    table = app.query_one(AppsTable)
    if table.shown_columns[:1] != ("CONTEXT",):
        return set()
    return {
        (str(table.get_row_at(i)[0]), str(table.get_row_at(i)[2]).removeprefix("! "))
        for i in range(table.row_count)
    }


async def test_the_tui_over_two_clusters_one_cut_mid_run(two) -> None:
    """The real cluster keeps updating while the other is cut; the cut one is named on the
    status bar, its rows kept as last seen, and it comes back by itself."""
    from kubectl_spark.cli.commands.tui import source_maker
    from kubectl_spark.kube.client import Connection
    from kubectl_spark.tui.app import SparkTUI
    from kubectl_spark.tui.sources import LiveSource
    from kubectl_spark.tui.widgets.status import StatusBar
    from tests.tui_pilot import text_of, until

    make = source_maker(LiveSource, Connection(kubeconfig=str(two["kubeconfig"])), None)
    app: Any = SparkTUI(make, context="real,cut", all_namespaces=True)
    both = {("cut", "networkwordcount"), ("real", "networkwordcount")}
    async with app.run_test(size=(160, 45)) as pilot:
        await until(pilot, lambda: rows_by_context(app) == both, timeout=30, what="both rows")
        status = app.query_one(StatusBar)
        await until(pilot, lambda: "● live" in text_of(status), what="live")
        assert "context real,cut" in text_of(status)

        two["proxy"].cut()
        await until(
            pilot,
            lambda: "● reconnecting" in text_of(status) and "cut: " in text_of(status),
            timeout=30,
            what="the cut cluster named",
        )
        two["stage"].world.client.create("/api/v1/namespaces/default/pods", late_driver())
        await until(
            pilot,
            lambda: rows_by_context(app) == {*both, ("real", "late")},
            timeout=30,
            what="the real cluster's new application, its rows beside the cut one's",
        )

        two["proxy"].restore()
        await until(
            pilot,
            lambda: "● live" in text_of(status) and "cut: " not in text_of(status),
            timeout=60,
            what="the cut cluster back",
        )
        assert rows_by_context(app) == {*both, ("real", "late")}

        # A key acts through the application's own cluster: a plan for the real one's
        # application is made from the real cluster (re-read there by its key, without the
        # context the TUI marked it with).
        from kubectl_spark.tui.screens.plan import PlanScreen

        await pilot.press("slash", *"real default/networkwordcount", "enter")
        await until(pilot, lambda: rows_by_context(app) == {("real", "networkwordcount")})
        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, PlanScreen), timeout=30)
        plan = text_of(app.screen.query_one("#plan-text"))
        driver = two["stage"].running(spark_role="driver")[0]["metadata"]
        assert "fence networkwordcount/1" in plan and f"driver {driver['name']} " in plan, plan


def test_ls_watch_follows_every_context_one_cut_mid_run(two) -> None:
    """``ls -w --context cut,real``: the real cluster's new application is printed while the
    other is cut; the cut one is named on stderr, and again when it is back."""
    import subprocess
    import sys
    import threading

    binary = Path(sys.executable).parent / "kubectl-spark"
    proc = subprocess.Popen(
        [str(binary), "--kubeconfig", str(two["kubeconfig"]), "ls", "-A", "-w", *WATCHED],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out: list[str] = []
    err: list[str] = []
    readers = [
        threading.Thread(target=lambda s=stream, i=into: i.extend(s or []), daemon=True)
        for stream, into in ((proc.stdout, out), (proc.stderr, err))
    ]
    for reader in readers:
        reader.start()

    def wait(what: str, holds: Any, seconds: float = 30) -> None:
        deadline = time.monotonic() + seconds
        while not holds():
            assert proc.poll() is None, (what, out, err)
            assert time.monotonic() < deadline, (what, out, err)
            time.sleep(0.1)

    try:
        wait("both contexts' rows", lambda: {x.split()[0] for x in out} == {"cut", "real"})
        two["proxy"].cut()
        wait(
            "the cut one named",
            lambda: any(x.startswith("reconnecting: context cut: ") for x in err),
        )
        two["stage"].world.client.create("/api/v1/namespaces/default/pods", late_driver())
        wait(
            "the real one's new row",
            lambda: any(x.split()[:3] == ["real", "default", "late"] for x in out),
        )
        two["proxy"].restore()
        wait("the cut one back", lambda: "context cut: watching again\n" in err, seconds=60)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        for reader in readers:
            reader.join(timeout=10)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    assert not any("Traceback" in x for x in err), err
