"""The TUI driven with Textual's Pilot against the emulator and simulator, and SVG snapshots."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from typing import Any

from textual.widgets import RichLog

from kubectl_spark.core.inputs import Snapshot
from kubectl_spark.kube.client import Connection
from kubectl_spark.tui.app import SparkTUI
from kubectl_spark.tui.screens.help import HelpScreen
from kubectl_spark.tui.screens.plan import PlanScreen
from kubectl_spark.tui.screens.text import TextScreen
from kubectl_spark.tui.sources import LiveSource
from kubectl_spark.tui.widgets.apps_table import AppsTable
from kubectl_spark.tui.widgets.attempt_tree import AttemptTree
from kubectl_spark.tui.widgets.banner import AlertsBanner
from kubectl_spark.tui.widgets.detail import DetailPane
from tests.core_pods import mk, typed_snapshot
from tests.tui_pilot import (
    NOW,
    SIZE,
    cursor_to,
    fixed_snapshot,
    live_app,
    select,
    static_app,
    text_of,
    to_first_attempt,
    until,
    watched,
)


async def test_split_brain_banner_attempt_reason_and_fence(cluster) -> None:
    c = cluster("s2-partition")
    c.player.play()
    app = live_app(c)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.query_one(AppsTable).row_count == 1)
        await until(pilot, lambda: "SplitBrain" in text_of(app.query_one(AlertsBanner)))
        await to_first_attempt(pilot, app)
        detail = text_of(app.query_one(DetailPane))
        assert (
            "NodeLost" in detail
            and "node node-a" in detail
            and "failed attempt" in detail
            and "evidence" in detail
        )
        # K first: refused until the node is said down, a flag the keys cannot pass.
        await pilot.press("K")
        await until(pilot, lambda: isinstance(app.screen, PlanScreen))
        shown = text_of(app.screen.query_one("#plan-text"))
        assert "Refused:" in shown and "--node-down" in shown
        assert "The TUI passes no flags: run kubectl spark force-kill networkwordcount/1" in shown
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, PlanScreen))
        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, PlanScreen))
        assert "fence networkwordcount/1" in text_of(app.screen.query_one("#plan-text"))
        await pilot.press("y")
        await until(
            pilot,
            lambda: (
                c.world.client.get(
                    "/apis/coordination.k8s.io/v1/namespaces/default/leases/kubectl-spark-networkwordcount"
                )
                is not None
            ),
        )
        await until(pilot, lambda: "SplitBrain" not in text_of(app.query_one(AlertsBanner)))
    pods = c.world.client.list(
        "/api/v1/namespaces/default/pods", labelSelector="kubectl-spark.io/fenced=true"
    )
    assert len(pods) == 1  # the driver (its executors were stopped)


async def test_the_log_of_a_driver_on_an_unreachable_node_is_asked_for_once(cluster) -> None:
    c = cluster("s2-partition")
    c.player.play()
    app = live_app(c)
    told: list[str] = []
    shown = app.notify

    def notify(message: str, **kw: Any) -> None:
        told.append(str(message))
        shown(message, **kw)

    app.notify = notify  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.query_one(AppsTable).row_count == 1)
        await to_first_attempt(pilot, app)  # on the partitioned node-a
        c.server.clear_audit()
        await pilot.press("l")
        await until(pilot, lambda: any("node is unreachable" in m for m in told))
    asked = [e for e in c.server.audit_entries() if e.get("subresource") == "log"]
    assert len(asked) == 1, asked


async def test_a_client_mode_driver_in_an_unlabelled_pod_is_seen_live(cluster) -> None:
    """The pod watch does not select a notebook pod; the live source reads it as an owner."""
    from tests.helpers import notebook_with_executors

    c = cluster("s6-driver-restarts")
    c.player.play_until(1)
    notebook_with_executors(c)
    c.world.step(3)
    app = live_app(c)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)

        def row() -> list[str]:
            """APP, DRIVER and ALERTS of the notebook's row."""
            rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
            return next(([r[1], r[4], r[8]] for r in rows if "notebook" in r[1]), [])

        await until(pilot, lambda: row() == ["notebook", "Running", "-"])
        notebook_with_executors(c, executors=(3,))  # a watch event: the incremental analysis
        c.world.step(2)
        await until(
            pilot,
            lambda: (
                app.analysis is not None
                and any(
                    len(a.attempts[0].executors) == 3
                    for a in app.analysis.apps
                    if a.name == "notebook"
                )
            ),
        )
        assert row() == ["notebook", "Running", "-"]


async def test_filter_namespace_switch_and_readonly(cluster) -> None:
    c = cluster("mixed")
    c.player.play_until(60)
    app = live_app(c, all_namespaces=True, readonly=True)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 4)
        await pilot.press("slash")
        for key in "nightly":
            await pilot.press(key)
        await until(pilot, lambda: table.row_count == 1)
        await pilot.press("escape", "escape")
        await until(pilot, lambda: table.row_count == 4)
        await pilot.press("slash", "exclamation_mark", *"nightly", "enter")
        await until(pilot, lambda: table.row_count == 3)
        await pilot.press("escape")
        await pilot.press("colon", *"ns spark-dev", "enter")
        await until(pilot, lambda: table.row_count == 1 and "pi" in str(table.get_row_at(0)[1]))
        await pilot.press("f")  # hidden with --readonly: nothing happens
        await pilot.pause(0.3)
        assert not isinstance(app.screen, PlanScreen)
        assert not any(
            app.main.check_action(action, ()) for action in ("fence", "force_kill", "resubmit")
        )
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))


async def test_readonly_works_under_a_read_only_policy(cluster, tmp_path) -> None:
    c = cluster("s2-partition")
    c.player.play()
    limited = c.server.write_kubeconfig(
        tmp_path / "limited", user="oncall", token=c.server.add_user("oncall")
    )
    from tests.rbac import WRITES, deny

    c.server.set_policy(deny(WRITES, ["*"]))
    c.server.clear_audit()
    app = live_app(c, kubeconfig=limited, readonly=True)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 1)
        await until(pilot, lambda: "SplitBrain" in text_of(app.query_one(AlertsBanner)))
        await pilot.press("f", "K", "r")
        await pilot.pause(0.3)
        assert not isinstance(app.screen, PlanScreen)
        assert app.connected().state == "live"
    assert c.server.audit_writes() == []


async def test_previous_logs_of_a_restarted_executor_and_live_update(cluster) -> None:
    c = cluster("s4-executor-losses")
    c.player.play_until(
        70
    )  # the "restarts" app's executor was OOM-killed at 60 s and restarted in place
    app = live_app(c)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 2)
        await select(pilot, table, "restarts")
        tree = app.query_one(AttemptTree)
        tree.focus()
        await until(pilot, lambda: tree.cursor_node is not None)
        await cursor_to(pilot, tree, tree.root.children[0].children[0])
        detail = app.query_one(DetailPane)
        await until(pilot, lambda: "restarted in place 1 time(s)" in text_of(detail))
        assert "executor 1's container restarted in place (run 1): OOMKilled" in " ".join(
            text_of(detail).replace("\n    ", " ").splitlines()
        )
        await pilot.press("p")
        await until(pilot, lambda: isinstance(app.screen, TextScreen))
        assert "previous logs" in text_of(app.screen.query_one("#text-title"))
        lines = [str(line.text) for line in app.screen.query_one("#text-body", RichLog).lines]
        assert any("Started executor" in line for line in lines)
        await pilot.press("escape")
        # live: an OOM kill injected now shows up in the open TUI
        losses = next(i for i in range(table.row_count) if "losses" in str(table.get_row_at(i)[1]))
        before = str(table.get_row_at(losses)[6])
        victim = next(
            p
            for p in c.world.find_pods("default", spark_app_name="losses", spark_role="executor")
            if p["status"]["phase"] == "Running"
        )
        c.world.oom_kill("default", victim["metadata"]["name"])
        c.world.step(2)
        await until(pilot, lambda: str(table.get_row_at(losses)[6]) != before)


async def test_cluster_text_is_shown_literally() -> None:
    app = static_app(snapshot=fixed_snapshot(hostile=True))
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 2)
        names = [str(table.get_row_at(i)[1]) for i in range(table.row_count)]
        assert "etl-[bold red]x[/]\\x1b[31m" in names  # markup not interpreted, ESC made visible
        import html

        def painted() -> str:
            return html.unescape(app.export_screenshot())

        # The rows are in the table before the screen is painted with them: wait for the paint
        # (a busy machine paints later), then read it.
        await until(pilot, lambda: "[bold" in painted(), what="the rows painted")
        rendered = painted()
        assert "[bold" in rendered and "x[/]" in rendered  # the brackets reached the screen as text
        assert "\x1b" not in rendered


def test_hostile_cluster_text_never_reaches_the_tui_raw() -> None:
    """The core's hostile-data strategy, through the TUI: the rendered screen (SVG) never holds
    a control character, for every screen a cluster's text reaches (list, tree, detail, banner)."""
    import html

    from hypothesis import HealthCheck, given, settings

    from tests.hostile import RAW, clusters

    async def check(snapshot: Snapshot) -> None:
        app = static_app(snapshot=snapshot)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause(0.2)
            screens = [app.export_screenshot()]
            if app.query_one(AppsTable).row_count:
                await pilot.press("enter", "down", "down")
                await pilot.pause(0.05)
                screens.append(app.export_screenshot())
        for svg in screens:
            found = RAW.search(html.unescape(svg))
            assert found is None, repr(found)

    @settings(
        max_examples=8,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(clusters())
    def prop(snapshot: Snapshot) -> None:
        asyncio.run(check(snapshot))

    prop()


def _snap_app(**kwargs: Any) -> SparkTUI:
    return static_app(**kwargs)


def test_snapshot_app_list(snap_compare) -> None:
    assert snap_compare(_snap_app(), terminal_size=SIZE, press=["_"])


def test_snapshot_app_view_with_split_brain(snap_compare) -> None:
    assert snap_compare(_snap_app(), terminal_size=SIZE, press=["_", "enter", "_"])


def test_snapshot_executor_detail_with_oom_evidence(snap_compare) -> None:
    assert snap_compare(
        _snap_app(),
        terminal_size=SIZE,
        press=["_", "enter", "down", "down", "down", "down", "down", "_"],
    )


def test_snapshot_timeline(snap_compare) -> None:
    async def run_before(pilot: Any) -> None:
        await pilot.pause(0.3)
        pilot.app.query_one("#timeline").scroll_visible()

    assert snap_compare(_snap_app(), terminal_size=SIZE, run_before=run_before)


def test_snapshot_help(snap_compare) -> None:
    assert snap_compare(_snap_app(), terminal_size=SIZE, press=["_", "question_mark", "_"])


def test_snapshot_help_fits_80_by_24(snap_compare) -> None:
    assert snap_compare(_snap_app(), terminal_size=(80, 24), press=["_", "question_mark", "_"])


def test_cluster_newlines_cannot_forge_a_line_of_the_screen() -> None:
    from kubectl_spark.tui.widgets.attempt_tree import _label
    from kubectl_spark.tui.widgets.safe import safe

    assert safe("lost\r\nattempt 2 Running\n").plain == "lost\n  | attempt 2 Running\n"
    label = _label("exec-1", "Running", None, None, "pod\nexec-9 forged", False).plain
    assert [line for line in label.splitlines() if line.startswith("exec-9")] == []


async def test_an_attempts_detail_says_what_could_not_be_read() -> None:
    snapshot = dataclasses.replace(fixed_snapshot(), unreadable=("nodes",))
    app = static_app(snapshot=snapshot)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.query_one(AppsTable).row_count == 2)
        await to_first_attempt(pilot, app)
        detail = text_of(app.query_one(DetailPane))
        assert "note: nodes could not be read (forbidden)" in detail, detail


async def test_a_tenant_without_nodes_sees_the_split_brain_live(cluster, tmp_path) -> None:
    """The live source records the refused node list; the lost node is told by its pods."""
    c = cluster("s2-partition")
    c.player.play()
    tenant = c.server.write_kubeconfig(
        tmp_path / "tenant", user="tenant", token=c.server.add_user("tenant")
    )
    from tests.rbac import tenant as tenant_policy

    c.server.set_policy(tenant_policy("tenant"))
    app = live_app(c, kubeconfig=tenant)
    async with app.run_test(size=SIZE) as pilot:
        # Live lists and watches as a tenant: slower than the rest beside a busy suite (it
        # once took longer than 15 s on 2 cores), so the bound is wider and says what it waited for.
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count == 1, 45, "one application listed")
        banner = app.query_one(AlertsBanner)
        await until(pilot, lambda: "SplitBrain" in text_of(banner), 45, "the SplitBrain alert")
        # Each kind is listed by a thread of its own: under load the pods (and the alert
        # they tell) may come before the node list's refusal is recorded.
        await until(
            pilot,
            lambda: "nodes" in watched(app).snapshot().unreadable,
            45,
            "the refused node list recorded",
        )


async def test_the_tui_keeps_every_connection_flag(cluster) -> None:
    """kubectl spark tui --as tenant: the live source lists and watches as that user."""
    from kubectl_spark.cli.commands.tui import source_maker
    from kubectl_spark.cluster.apiserver.embedded import ADMIN_USER
    from tests.rbac import tenant as tenant_policy

    c = cluster("s2-partition")
    c.player.play()
    admin_impersonates = {"effect": "allow", "users": [ADMIN_USER], "verbs": ["impersonate"]}
    c.server.set_policy({"rules": [admin_impersonates, *tenant_policy("tenant")["rules"]]})
    c.server.clear_audit()
    base = Connection(kubeconfig=str(c.kubeconfig), impersonate="tenant")
    app = SparkTUI(source_maker(LiveSource, base, None))

    def pods_read() -> list[dict[str, Any]]:
        return [e for e in c.server.audit_entries() if e["resource"] == "pods"]

    async with app.run_test(size=SIZE) as pilot:
        # The row may come from the Job before the pods are listed (each kind has its thread):
        # wait for the pods list too, or the audit may not hold it yet.
        await until(pilot, lambda: app.query_one(AppsTable).row_count == 1 and bool(pods_read()))
    pods = pods_read()
    assert pods and {(e["user"], e["impersonatedBy"]) for e in pods} == {("tenant", ADMIN_USER)}


def test_evidence_folds_under_its_bullet_and_again_when_the_pane_resizes() -> None:
    """A long evidence token starts on its bullet's line, at any width of the pane."""
    path = "status.containerStatuses[spark-kubernetes-executor].state.terminated.reason=OOMKilled"

    async def scenario() -> None:
        app = _snap_app()
        async with app.run_test(size=SIZE) as pilot:
            table, tree = app.query_one(AppsTable), app.query_one(AttemptTree)
            await until(pilot, lambda: table.row_count == 2)
            await select(pilot, table, "ingest")
            await to_first_attempt(pilot, app)
            for _ in range(6):  # down the tree to attempt 2's OOM-killed executor
                if tree.cursor_node is not None and tree.cursor_node.data == ("executor", 2, "2"):
                    break
                await pilot.press("down")
            detail = app.query_one(DetailPane)
            await until(pilot, lambda: "OOMKilled" in text_of(detail))
            lines = text_of(detail).splitlines()
            bullets = [line for line in lines if line.startswith("  •")]
            assert bullets and all(line.strip() != "•" for line in bullets), lines
            assert path not in text_of(detail)  # folded: the pane is narrower than the path
            # ... after a separator of the path, never inside a name (exitCod / e=0)
            start = next(i for i, line in enumerate(lines) if line.startswith(f"  • {path[:20]}"))
            rest = itertools.takewhile(lambda ln: ln.startswith("    "), lines[start + 1 :])
            folded = [lines[start][4:], *(ln[4:] for ln in rest)]
            assert "".join(folded) == path, folded
            assert all(a[-1] in ".=]/," or b[0] == "[" for a, b in itertools.pairwise(folded)), (
                folded
            )
            await pilot.resize_terminal(260, 45)
            await until(pilot, lambda: f"  • {path}" in text_of(detail))

    asyncio.run(scenario())


def test_a_waiting_driver_says_why_in_the_detail_pane() -> None:
    """Pending because its image cannot be pulled: the pane says so, not "No loss"."""
    labels = {"spark-app-selector": "spark-pull", "spark-app-name": "pull"}
    driver = mk("pull-driver", "driver", "2026-03-01T02:50:00Z", labels=labels, phase="Pending")
    driver["status"]["containerStatuses"] = [
        {
            "name": "spark-kubernetes-driver",
            "restartCount": 0,
            "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling"}},
        }
    ]

    async def scenario() -> None:
        app = static_app(snapshot=typed_snapshot(pods=[driver], now=NOW))
        async with app.run_test(size=SIZE) as pilot:
            table = app.query_one(AppsTable)
            await until(pilot, lambda: table.row_count == 1)
            assert str(table.get_row_at(0)[4]) == "Pending:ImagePullFailure"  # DRIVER, as in ls
            await to_first_attempt(pilot, app)
            detail = app.query_one(DetailPane)
            await until(pilot, lambda: "ImagePullFailure" in text_of(detail))
            text = text_of(detail)
            assert "waiting, ImagePullFailure: image pull failed (ImagePullBackOff)" in text
            assert "No loss" not in text and "what to do: fix the image name" in text
            tree = app.query_one(AttemptTree)
            assert tree.cursor_node is not None
            assert str(tree.cursor_node.label).startswith(
                "attempt 1  Pending  waiting: ImagePullFailure"
            )
            # The timeline marks where the wait began (it showed only the attempt's span).
            row = next(
                line
                for line in text_of(app.query_one("#timeline")).splitlines()
                if line.startswith("attempt 1")
            )
            assert "W" in row.split("|")[1], row

    asyncio.run(scenario())


async def test_a_driver_that_restarted_in_place_says_so_in_the_detail_pane(cluster) -> None:
    """S6: one pod, one attempt, three runs. The pane said "No loss: it runs unharmed" for a
    driver OOM-killed twice; it now says it restarted, and what is known of each restart."""
    c = cluster("s6-driver-restarts")
    c.player.play_until(150)
    app = live_app(c)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.query_one(AppsTable).row_count == 1)
        await to_first_attempt(pilot, app)
        detail = app.query_one(DetailPane)
        await until(pilot, lambda: "restarted in place" in text_of(detail))
        text = text_of(detail)
        assert "No loss: it runs, after its container restarted in place 2 time(s)" in text
        assert "unharmed" not in text
        bullets = text.split("restarts:")[1].replace("\n    ", " ").splitlines()
        assert [b.split("(run ")[1][:1] for b in bullets if b.startswith("  • ")] == ["1", "2"]
        first, last = (b for b in bullets if b.startswith("  • "))
        assert "Kubernetes kept no reason" in first  # a container status holds one lastState
        assert last.startswith("  • 20") and "OOMKilled" in last, last


async def test_the_demo_tui_reads_the_clock_the_cluster_stamps_times_with(cluster) -> None:
    """The demo's clock starts in the past and catches up: read the wall's, every age and churn
    window was off by up to the scenario's length while the scenario played."""
    from kubectl_spark.cli.commands.demo import demo_app

    c = cluster("s8-orphans-and-churn")
    c.player.play_until(100)  # the manual clock stands 160 s behind the wall's
    app = demo_app(c.kubeconfig, c.clock)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count >= 1, 30, "the applications listed")
        assert app.clock() == c.clock.now()
        assert watched(app).snapshot().now == c.clock.now()
        ages = [str(table.get_row_at(i)[-1]) for i in range(table.row_count)]
        # submitted in the scenario's first seconds: about 100 s ago, not the wall's 260 s
        assert all(a[-1] == "s" and a[:-1].isdigit() and 80 <= int(a[:-1]) <= 100 for a in ages), (
            ages
        )


def test_a_watch_that_wakes_the_app_after_it_closed_is_ignored() -> None:
    """Watch threads are not joined on exit: one that finishes a list as the app closes calls
    its wake-up on a closed event loop. That raised in the thread (a CI run saw it)."""
    app = static_app()

    async def run() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause(0.1)

    asyncio.run(run())  # its own loop, closed on return, as the test's loop is after a test
    assert app._loop is not None and app._loop.is_closed()
    app._wake()  # nothing to wake, nothing raised


async def test_the_live_tui_ages_by_the_clusters_clock(cluster) -> None:
    """The watches learn the cluster's clock from the Date header, and the TUI reads ages with
    it, as `ls` and kubectl do; this machine's clock is 3 hours behind the cluster's here."""
    c = cluster("s6-driver-restarts")
    c.player.play()
    c.clock.advance(3 * 3600)
    app = live_app(c)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(AppsTable)
        await until(pilot, lambda: table.row_count >= 1, 30, "the applications listed")
        ages = [str(table.get_row_at(i)[-1]) for i in range(table.row_count)]
        assert all(a.startswith("3h") for a in ages), ages
        assert abs((app.clock() - c.clock.now()).total_seconds()) < 5


def test_every_reason_a_driver_can_wait_for_comes_with_what_to_do() -> None:
    """The detail pane's advice covers each code ``waiting`` can carry before a pod starts."""
    from kubectl_spark.app.advice import ADVICE

    waits = (
        "ImagePullFailure",
        "ContainerConfigError",
        "Unschedulable",
        "VolumeAttachFailure",
        "VolumeMountFailure",
    )
    assert [code for code in waits if code not in ADVICE] == []
