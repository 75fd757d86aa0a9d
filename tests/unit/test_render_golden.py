"""Golden tests of the ls table: fixed input, fixed clock, output compared with tests/golden/."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kubectl_spark.cli.commands.ls import render_analysis
from kubectl_spark.core.analyze import analyze
from kubectl_spark.core.node import nodes_of
from tests.core_pods import mk, ref, typed_snapshot

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
NOW = datetime(2026, 3, 1, 2, 0, tzinfo=UTC)


def analysis():
    job = ref("Job", "ingest-driver", "job-1")
    labels = {"spark-app-selector": "spark-ingest", "spark-app-name": "ingest"}
    old = mk(
        "ingest-driver-a", "driver", "2026-03-01T00:00:00Z", labels=labels, owner=job, node="node-a"
    )
    old["metadata"]["deletionTimestamp"] = "2026-03-01T00:07:00Z"
    new = mk(
        "ingest-driver-b", "driver", "2026-03-01T00:07:00Z", labels=labels, owner=job, node="node-b"
    )
    e1 = mk(
        "ingest-x-exec-1",
        "executor",
        "2026-03-01T00:07:10Z",
        labels={**labels, "spark-exec-id": "1"},
        owner=ref("Pod", "ingest-driver-b", "uid-ingest-driver-b"),
        node="node-c",
    )
    e2 = mk(
        "ingest-x-exec-2",
        "executor",
        "2026-03-01T00:07:10Z",
        labels={**labels, "spark-exec-id": "2"},
        owner=ref("Pod", "ingest-driver-b", "uid-ingest-driver-b"),
        node="node-c",
        phase="Failed",
    )
    e2["status"]["containerStatuses"] = [
        {
            "name": "spark-kubernetes-executor",
            "restartCount": 0,
            "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
        }
    ]
    etl = {"spark-app-selector": "spark-etl", "spark-app-name": "nightly-etl"}
    d = mk("etl-driver", "driver", "2026-02-28T20:00:00Z", labels=etl, node="node-c")
    nodes = [
        {
            "metadata": {"name": "node-a"},
            "status": {"conditions": [{"type": "Ready", "status": "Unknown"}]},
        },
        *(
            {
                "metadata": {"name": n},
                "status": {"conditions": [{"type": "Ready", "status": "True"}]},
            }
            for n in ("node-b", "node-c")
        ),
    ]
    return analyze(typed_snapshot(pods=[old, new, e1, e2, d], nodes=nodes_of(nodes), now=NOW))


@pytest.mark.parametrize(
    ("name", "output", "everywhere"),
    [("ls_table.txt", "table", True), ("ls_wide.txt", "wide", False)],
)
def test_ls_table_golden(name: str, output: str, everywhere: bool) -> None:
    text = render_analysis(analysis(), output, all_namespaces=everywhere, no_headers=False, now=NOW)
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text()


def test_cluster_text_is_escaped_in_tables() -> None:
    from kubectl_spark.cli.render import table

    out = table(("A",), [("x\x1b[31mred\x07[bold red]y[/]",)])
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b[31mred\\x07[bold red]y[/]" in out


@pytest.mark.parametrize(
    ("phase", "statuses", "cell"),
    [
        ("Running", {"running": {}}, "Running"),
        (
            "Pending",
            {"waiting": {"reason": "ImagePullBackOff", "message": 'Back-off pulling "x"'}},
            "Pending:ImagePullFailure",
        ),
        (
            "Running",
            {"waiting": {"reason": "CrashLoopBackOff"}},
            "CrashLoopBackOff",
        ),
    ],
)
def test_the_driver_cell_says_why_a_driver_waits(phase: str, statuses: dict, cell: str) -> None:
    """kubectl's STATUS style: one word, no spaces; "Pending" alone sent the reader elsewhere."""
    from kubectl_spark.app.summary import driver_state as driver_cell

    driver = mk("d", "driver", "2026-03-01T00:00:00Z", labels={"spark-app-selector": "a"})
    driver["status"] = {
        "phase": phase,
        "containerStatuses": [
            {
                "name": "spark-kubernetes-driver",
                "restartCount": 3,
                "state": statuses,
                "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
            }
        ],
    }
    (app,) = analyze(typed_snapshot(pods=[driver])).apps
    assert driver_cell(app.current) == cell
    assert " " not in driver_cell(app.current)
