"""Issue 23's acceptance: each scenario read as a newcomer would, at its end.

One test per scenario, S1 to S9: `ls -A`, then `describe` and `history` of the application it shows,
as text (what a person reads, not the JSON a script reads), and the headline answer asserted:
which attempt is alive, what was lost and whose fault it is, what needs a person.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.command_line import run


@dataclass(frozen=True)
class Read:
    ls: str
    describe: str
    history: str

    def row(self, app: str) -> list[str]:
        return next(line.split() for line in self.ls.splitlines() if f" {app} " in f" {line} ")


def read(played, capsys: pytest.CaptureFixture[str], scenario: str, app: str) -> Read:
    c = played(scenario)
    texts = []
    for args in (("ls", "-A"), ("describe", app), ("history", app)):
        code, out, err = run(capsys, c, *args)
        assert code == 0 and "Traceback" not in err, err
        texts.append(out)
    return Read(*texts)


def test_s1_node_shutdown(played, capsys) -> None:
    """The node came back: attempt 2 runs, attempt 1 was lost to the cluster, nothing to do."""
    r = read(played, capsys, "s1-node-shutdown", "networkwordcount")
    assert r.row("networkwordcount")[2:5] == ["Running", "2/2", "Running"]
    assert "Alerts:       <none>" in r.describe
    assert (
        "#1 Lost" in r.describe and "NodeLost" in r.describe and "the cluster's fault" in r.describe
    )
    assert "AttemptReplaced" in r.history and "NodeNotReady" in r.history


def test_s2_partition(played, capsys) -> None:
    """Two drivers may run: the split brain is the headline, with the fence to end it."""
    r = read(played, capsys, "s2-partition", "networkwordcount")
    alerts = r.row("networkwordcount")[-2]
    assert alerts.startswith("SplitBrain") and "SharedAppId" in alerts
    assert "kubectl spark fence networkwordcount/1" in r.describe
    assert "may still be running" in r.describe
    # attempt 1 may still run: no end is given for it, only when it was lost
    first = r.describe.split("#1 Lost", 1)[1].split("#2 ", 1)[0]
    assert "Ended:" not in first
    assert "attempt 1 lost: NodeLost" in r.history


def test_s3_rwo_volume(played, capsys) -> None:
    """Attempt 2 waits for a volume still attached to the lost node, and the way out is said."""
    r = read(played, capsys, "s3-rwo-volume", "streaming-checkpoint")
    assert r.row("streaming-checkpoint")[4] == "Pending:VolumeAttachFailure"
    assert "ReplacementBlocked" in r.describe and "--detach-volumes" in r.describe


def test_s4_executor_losses(played, capsys) -> None:
    """Every kind of loss, each with its reason and fault; the churn alert on top."""
    r = read(played, capsys, "s4-executor-losses", "losses")
    row = r.row("losses")
    assert "app," in row and "cluster," in row and row[-2] == "ExecutorChurn"
    for code in ("OOMKilled", "PossibleOOM", "JvmOutOfMemory", "UncaughtException",
                 "DriverUnreachable", "Evicted", "Preempted", "NodeLost", "Completed"):  # fmt: skip
        assert code in r.describe, code
    assert "counted toward spark.executor.maxNumFailures" in r.describe
    assert r.history.count("ExecutorLost") >= 8


def test_s5_operator_retries(played, capsys) -> None:
    """The operator gave up after three runs; the last one's exit is the app's."""
    r = read(played, capsys, "s5-operator-retries", "pi")
    assert r.row("pi")[2:5] == ["Failed", "3/3", "Failed"]
    assert "#3 Failed" in r.describe and "exit code 1" in r.describe
    assert "SparkApplicationFailed" in r.history or "SparkDriverFailed" in r.history


def test_s6_driver_restarts(played, capsys) -> None:
    """One attempt restarted in place twice: restarts, not attempts."""
    r = read(played, capsys, "s6-driver-restarts", "restarting-driver")
    row = r.row("restarting-driver")
    assert row[2:5] == ["Running", "1/1", "Running"] and row[-3] == "2"
    assert r.history.count("ContainerRestarted") == 2


def test_s7_shared_app_id(played, capsys) -> None:
    """Attempt 2 has no executors: the alert says why (one app id), not a name collision."""
    r = read(played, capsys, "s7-name-collision", "networkwordcount")
    row = r.row("networkwordcount")
    assert row[5] == "0/0" and "SharedAppId" in row[-2] and "NameCollision" not in row[-2]
    assert "share app id" in r.describe and "spark.app.id" in r.describe


def test_s8_orphans_and_churn(played, capsys) -> None:
    """etl's executors run without a driver; churn loses executors to its own memory."""
    r = read(played, capsys, "s8-orphans-and-churn", "etl")
    assert r.row("etl")[-2] == "OrphanedExecutors"
    assert "run without their driver" in r.describe
    churn = r.row("churn")
    assert churn[-2] == "ExecutorChurn" and "app" in churn


def test_s9_deleted_executors(played, capsys) -> None:
    """Three executor pods are gone; Spark's own list and the Events still say why."""
    r = read(played, capsys, "s9-deleted-executors", "vanishing")
    assert r.row("vanishing")[5] == "4/7"
    for code in ("OOMKilled", "Evicted", "Preempted"):
        assert code in r.describe, code
    assert "Deleted " not in r.describe  # the preemption is named, not "Deleted (unknown)"
    assert r.history.count("ExecutorLost") == 3
