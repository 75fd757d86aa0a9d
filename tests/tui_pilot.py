"""What the TUI tests drive it with: a live app on a played cluster, a fixed snapshot, and
pilot steps that wait for the screen (never for wall-clock time alone)."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kubectl_spark.core.inputs import Snapshot
from kubectl_spark.core.node import nodes_of
from kubectl_spark.kube.client import Connection
from kubectl_spark.kube.live import LiveCluster
from kubectl_spark.tui.app import SparkTUI
from kubectl_spark.tui.sources import LiveSource, StaticSource
from kubectl_spark.tui.widgets.apps_table import AppsTable
from kubectl_spark.tui.widgets.attempt_tree import AttemptTree
from tests.conftest import ScenarioCluster as Cluster
from tests.core_pods import mk, ref, typed_snapshot

SIZE = (140, 45)


def watched(app: SparkTUI) -> LiveCluster:
    """The watches behind a TUI that shows one live cluster."""
    source = app.connected()
    assert isinstance(source, LiveSource) and source.follow is not None
    return source.follow.live


def live_app(
    c: Cluster, history: Path | None = None, kubeconfig: Path | None = None, **kwargs: Any
) -> SparkTUI:
    def make(namespace: str | None, context: str | None, all_namespaces: bool) -> LiveSource:
        return LiveSource(
            Connection(
                kubeconfig=str(kubeconfig or c.kubeconfig), context=context, namespace=namespace
            ),
            all_namespaces=all_namespaces,
            history=history,
        )

    return SparkTUI(make, **kwargs)


async def until(pilot: Any, condition: Any, timeout: float = 15.0, what: str = "") -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"{what or 'condition'} not met in {timeout:g} s")
        await pilot.pause(0.1)


async def cursor_to(pilot: Any, tree: AttemptTree, node: Any) -> None:
    """The tree's cursor on ``node``, once the tree has laid out its lines (before, a node has
    no line, and ``move_cursor`` would put the cursor on the root)."""
    await until(pilot, lambda: node.line >= 0, what="the tree's lines laid out")
    tree.move_cursor(node)
    await until(pilot, lambda: tree.cursor_node is node, what="the cursor on the node")
    await pilot.pause(0.1)


async def select(pilot: Any, table: AppsTable, name: str) -> None:
    """Put the apps table's cursor on the application whose name contains ``name``."""
    row = next(i for i in range(table.row_count) if name in str(table.get_row_at(i)[1]))
    table.move_cursor(row=row)
    await pilot.pause(0.2)


def text_of(widget: Any) -> str:
    return str(widget.render())


async def to_first_attempt(pilot: Any, app: SparkTUI) -> None:
    """From the apps table into the attempt tree, the cursor on attempt 1."""
    tree = app.query_one(AttemptTree)
    await pilot.press("enter")
    await until(pilot, lambda: tree.has_focus)
    await pilot.press("down")  # from the root to attempt 1
    await until(
        pilot,
        lambda: tree.cursor_node is not None and tree.cursor_node.data == ("attempt", 1, ""),
    )


# ----------------------------------------------------------------------- fixed data
NOW = datetime(2026, 3, 1, 3, 0, tzinfo=UTC)


def fixed_snapshot(hostile: bool = False) -> Snapshot:
    job = ref("Job", "ingest-driver", "job-1")
    labels = {"spark-app-selector": "spark-ingest", "spark-app-name": "ingest"}
    old = mk(
        "ingest-driver-a", "driver", "2026-03-01T02:00:00Z", labels=labels, owner=job, node="node-a"
    )
    old["metadata"]["deletionTimestamp"] = "2026-03-01T02:07:00Z"
    old["status"]["conditions"] = [
        {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager"}
    ]
    new = mk(
        "ingest-driver-b", "driver", "2026-03-01T02:07:00Z", labels=labels, owner=job, node="node-b"
    )
    pods = [old, new]
    for i, (phase, term) in enumerate(
        [
            ("Running", None),
            (
                "Failed",
                {"exitCode": 137, "reason": "OOMKilled", "finishedAt": "2026-03-01T02:40:00Z"},
            ),
        ],
        1,
    ):
        pod = mk(
            f"ingest-x-exec-{i}",
            "executor",
            "2026-03-01T02:07:10Z",
            labels={**labels, "spark-exec-id": str(i)},
            owner=ref("Pod", "ingest-driver-b", "uid-ingest-driver-b"),
            node="node-c",
            phase=phase,
        )
        if term:
            pod["status"]["containerStatuses"] = [
                {
                    "name": "spark-kubernetes-executor",
                    "restartCount": 0,
                    "state": {"terminated": term},
                }
            ]
        pods.append(pod)
    etl = {
        "spark-app-selector": "spark-etl",
        "spark-app-name": "nightly-etl" if not hostile else "etl-[bold red]x[/]\x1b[31m",
    }
    pods.append(mk("etl-driver", "driver", "2026-03-01T01:00:00Z", labels=etl, node="node-c"))
    nodes = [
        {
            "metadata": {"name": "node-a"},
            "status": {
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "Unknown",
                        "message": "Kubelet stopped posting node status.",
                    }
                ]
            },
        },
        *(
            {
                "metadata": {"name": n},
                "status": {"conditions": [{"type": "Ready", "status": "True"}]},
            }
            for n in ("node-b", "node-c")
        ),
    ]
    return typed_snapshot(pods=pods, nodes=nodes_of(nodes), now=NOW)


def static_app(**kwargs: Any) -> SparkTUI:
    snapshot = kwargs.pop("snapshot", None) or fixed_snapshot()
    return SparkTUI(
        lambda *_: StaticSource(snapshot, context="prod-cluster", namespace="spark"),
        now=lambda: NOW,
        **kwargs,
    )


def body_lines(screen: Any) -> list[str]:
    return [str(line.text) for line in screen.query_one("#text-body").lines]


STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z ")


async def to_first_executor(pilot: Any, app: Any) -> str:
    """From the apps table down the tree to attempt 1's first executor; its id."""
    tree = app.query_one(AttemptTree)
    await until(pilot, lambda: app.query_one(AppsTable).row_count >= 1)
    await pilot.press("enter", "down", "down")  # the root, attempt 1, its first executor
    await until(
        pilot, lambda: tree.cursor_node is not None and tree.cursor_node.data[0] == "executor"
    )
    return str(tree.cursor_node.data[2])


LOG = "\n".join(
    [
        "26/03/01 02:07:12 INFO SparkContext: Running Spark version 3.5.1",
        "26/03/01 02:07:13 INFO ResourceUtils: " + "=" * 140,
        *(
            f"26/03/01 02:{10 + i}:00 INFO TaskSetManager: Finished task {i}.0 in stage 3.0 "
            f"(TID {40 + i}) in {900 + 17 * i} ms on 10.0.3.{i} (executor {1 + i % 2}) ({i}/64)"
            for i in range(30)
        ),
        (
            "26/03/01 02:40:00 ERROR TaskSchedulerImpl: Lost executor 2 on 10.0.3.7: The "
            "executor with id 2 exited with exit code 137(SIGKILL, possible container OOM)."
        ),
    ]
)
