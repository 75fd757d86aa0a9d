"""Drilling down as in k9s (issue 48, points 1 and 2): application ▸ attempt ▸ pod, and back.

Enter on the table goes into the application's attempts; enter on an attempt or an executor
opens its pod's raw view (``kubectl describe pod``: containers with state and last state,
conditions, the pod's Events, and its node's taints, conditions and allocatable), titled with
the breadcrumb; escape comes back to the line it was opened from. The line above the footer
says what is focused, so what every key acts on.
"""

from __future__ import annotations

from typing import Any

from kubectl_spark.tui.screens.pod import PodScreen
from kubectl_spark.tui.widgets.apps_table import AppsTable
from kubectl_spark.tui.widgets.attempt_tree import AttemptTree
from tests.tui_pilot import SIZE, body_lines, live_app, text_of, to_first_executor, until


def focus_line(app: Any) -> str:
    return text_of(app.query_one("#focus"))


def captured_notes(app: Any) -> list[str]:
    """What the app says in its notifications, from now on (they also show as usual)."""
    notes: list[str] = []
    real_notify = app.notify

    def notify(message: str, **kwargs: Any) -> None:
        notes.append(str(message))
        real_notify(message, **kwargs)

    app.notify = notify
    return notes


async def test_enter_drills_down_to_a_pod_and_escape_comes_back(cluster: Any) -> None:
    c = cluster("s2-partition")
    c.player.play_until(20)
    app = live_app(c)
    async with app.run_test(size=SIZE) as pilot:
        table, tree = app.query_one(AppsTable), app.query_one(AttemptTree)
        await until(pilot, lambda: table.row_count == 1)
        await until(
            pilot, lambda: "▸ apps: default/networkwordcount ▸ attempt 1" in focus_line(app)
        )
        await pilot.press("enter")
        await until(pilot, lambda: tree.has_focus)
        await pilot.press("down", "down")  # the root, attempt 1, its first executor
        await until(
            pilot,
            lambda: (
                tree.cursor_node is not None
                and tree.cursor_node.data is not None
                and tree.cursor_node.data[0] == "executor"
            ),
        )
        assert tree.cursor_node is not None and tree.cursor_node.data is not None
        line = tree.cursor_node.data
        assert focus_line(app).startswith(
            f"▸ tree: default/networkwordcount ▸ attempt 1 ▸ executor {line[2]}"
        )

        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, PodScreen))
        screen = app.screen
        await until(
            pilot, lambda: any(x.startswith("Containers:") for x in body_lines(screen)), timeout=20
        )
        title = text_of(screen.query_one("#text-title"))
        assert title.startswith(
            f"default/networkwordcount ▸ attempt 1 ▸ executor {line[2]} ▸ pod "
        ), title

        async def back_to_the_line() -> None:
            await pilot.press("escape")
            await until(pilot, lambda: len(app.screen_stack) == 1)
            assert tree.has_focus and tree.cursor_node is not None
            assert tree.cursor_node.data == line

        body = body_lines(screen)
        assert any(x.startswith("Node:") and "node-" in x for x in body), body
        assert any(x.startswith("Events:") for x in body)
        assert any("Scheduled" in x for x in body), body  # the pod's own Events
        assert any(x.strip().startswith("Taints:") for x in body)  # its node's describe
        assert any(x.strip().startswith("Allocatable:") for x in body)

        await back_to_the_line()

        # From the pod's view, l goes on down to its log; escape comes back to the tree.
        from kubectl_spark.tui.screens.text import TextScreen

        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, PodScreen))
        await pilot.press("l")
        await until(
            pilot,
            lambda: isinstance(app.screen, TextScreen) and not isinstance(app.screen, PodScreen),
            timeout=15,
        )
        assert text_of(app.screen.query_one("#text-title")).startswith("logs of default/")
        await back_to_the_line()

        # d acts on what is focused: the pod of the tree's line; from the table, the application.
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, PodScreen))
        await pilot.press("escape")
        await until(pilot, lambda: len(app.screen_stack) == 1)
        await pilot.press("escape")  # leave the tree
        await until(pilot, lambda: table.has_focus)
        await pilot.press("d")
        await until(pilot, lambda: len(app.screen_stack) == 2)
        assert not isinstance(app.screen, PodScreen)
        assert text_of(app.screen.query_one("#text-title")).startswith(
            "describe default/networkwordcount"
        )


async def test_ctrl_d_deletes_exactly_the_focused_executors_pod(cluster: Any) -> None:
    """The plan pins the pod's UID and records the deletion; confirmed, that pod alone goes,
    and ``describe`` reads its loss as kubectl spark's act (issue 48, point 2)."""
    from kubectl_spark.tui.screens.plan import PlanScreen

    c = cluster("s2-partition")
    c.player.play_until(20)
    app = live_app(c)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.query_one(AppsTable).row_count == 1)
        await pilot.press("ctrl+d")  # from the table: no executor is focused
        assert len(app.screen_stack) == 1
        exec_id = await to_first_executor(pilot, app)
        pods = c.world.find_pods("default", spark_role="executor")
        target = next(p for p in pods if p["metadata"]["labels"]["spark-exec-id"] == exec_id)
        others = {p["metadata"]["uid"] for p in pods} - {target["metadata"]["uid"]}
        await pilot.press("ctrl+d")
        await until(pilot, lambda: isinstance(app.screen, PlanScreen), timeout=15)
        plan = text_of(app.screen.query_one("#plan-text"))
        assert f"uid={target['metadata']['uid']}" in plan, plan
        assert "asks for another" in plan
        await pilot.press("y")
        await until(
            pilot,
            lambda: all(
                p["metadata"]["uid"] != target["metadata"]["uid"]
                or p["metadata"].get("deletionTimestamp")
                for p in c.world.find_pods("default", spark_role="executor")
            ),
            timeout=15,
        )
    left = {p["metadata"]["uid"] for p in c.world.find_pods("default", spark_role="executor")}
    assert others <= left  # no other executor touched
    events = c.world.client.list("/api/v1/namespaces/default/events")
    assert any(
        e["involvedObject"].get("uid") == target["metadata"]["uid"]
        and "delete-pod" in e.get("message", "")
        for e in events
    )


async def test_ctrl_d_is_off_read_only(cluster: Any) -> None:
    c = cluster("s2-partition")
    c.player.play_until(20)
    app = live_app(c, readonly=True)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.query_one(AppsTable).row_count == 1)
        await pilot.press("enter", "down", "down", "ctrl+d")
        await pilot.pause(0.3)
        assert len(app.screen_stack) == 1


async def test_s_opens_a_shell_where_exec_is_allowed(cluster: Any) -> None:
    """``s`` asks the API server whether exec is allowed, then hands the terminal to
    ``kubectl exec -it`` with the TUI's own connection flags. A test terminal cannot be handed
    over (Textual's headless driver), so the TUI says the command to run, which is what it
    would have run (a pod that does not run: the test below)."""
    c = cluster("s2-partition")
    c.player.play_until(20)
    app = live_app(c)
    async with app.run_test(size=SIZE) as pilot:
        notes = captured_notes(app)
        exec_id = await to_first_executor(pilot, app)
        (pod,) = [
            p
            for p in c.world.find_pods("default", spark_role="executor")
            if p["metadata"]["labels"]["spark-exec-id"] == exec_id
        ]
        await pilot.press("s")
        await until(pilot, lambda: any("kubectl " in n for n in notes), timeout=15)
        said = next(n for n in notes if "kubectl " in n)
        assert f"kubectl --kubeconfig {c.kubeconfig} exec -it -n default" in said, said
        assert f"{pod['metadata']['name']} -c spark-kubernetes-executor -- sh -c" in said


async def test_no_shell_where_exec_is_not_allowed(cluster: Any) -> None:
    """RBAC is asked first (a SelfSubjectAccessReview): a refusal is one line, nothing run."""
    c = cluster("s2-partition")
    c.player.play_until(20)
    limited = c.server.write_kubeconfig(
        c.kubeconfig.parent / "limited", user="oncall", token=c.server.add_user("oncall")
    )
    c.server.set_policy(
        {
            "rules": [
                {"effect": "allow", "verbs": ["create"], "resources": ["selfsubjectaccessreviews"]},
                {
                    "effect": "deny",
                    "users": ["oncall"],
                    "verbs": ["create"],
                    "resources": ["pods/exec"],
                },
            ]
        }
    )
    app = live_app(c, kubeconfig=limited)
    async with app.run_test(size=SIZE) as pilot:
        notes = captured_notes(app)
        await until(pilot, lambda: app.query_one(AppsTable).row_count == 1)
        await pilot.press("s")  # from the table: the latest attempt's driver
        await until(pilot, lambda: bool(notes), timeout=15)
    assert notes == ["no shell: you may not create pods/exec in namespace default"], notes


async def test_no_shell_in_a_pod_whose_container_does_not_run() -> None:
    """ingest's exec-2 was OOM-killed: nothing to exec into, said at once, nothing asked."""
    from tests.tui_pilot import cursor_to, select, static_app

    app = static_app()
    async with app.run_test(size=SIZE) as pilot:
        notes = captured_notes(app)
        table, tree = app.query_one(AppsTable), app.query_one(AttemptTree)
        await until(pilot, lambda: table.row_count == 2)
        await select(pilot, table, "ingest")
        await pilot.press("enter")
        await until(pilot, lambda: tree.has_focus)
        await cursor_to(pilot, tree, tree.root.children[1].children[1])  # attempt 2, exec-2
        await pilot.press("s")
        await until(pilot, lambda: bool(notes))
    assert notes == ["select a pod whose container runs: a shell needs one"], notes
