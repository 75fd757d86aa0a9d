"""Permissions: each verb the commands need, forbidden in turn, gives a message naming it and no
write; a read-only policy leaves every reading command working and every action refused."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_spark.cli.main import main
from tests.command_line import run
from tests.rbac import REVIEWS, WRITES, deny, tenant

READERS = [
    ["ls"],
    ["describe", "networkwordcount"],
    ["history", "networkwordcount"],
    ["events", "networkwordcount"],
]
ACTIONS = [
    ["fence", "networkwordcount/1", "--yes"],
    ["force-kill", "networkwordcount/1", "--node-down", "--yes"],
    ["resubmit", "networkwordcount", "--yes", "--force"],
]


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from tests.conftest import ScenarioCluster

    c = ScenarioCluster("s2-partition", tmp_path_factory.mktemp("s2"))
    c.player.play()
    c.limited = c.server.write_kubeconfig(  # type: ignore[attr-defined]
        tmp_path_factory.mktemp("kc") / "limited", user="oncall", token=c.server.add_user("oncall")
    )
    yield c
    c.close()


@pytest.mark.parametrize("verb", ["list", "get"])
def test_reading_without_pods_names_the_missing_permission(
    played: Any, capsys: pytest.CaptureFixture[str], verb: str
) -> None:
    played.server.set_policy(deny([verb], ["pods"]))
    played.server.clear_audit()
    for args in READERS:
        code, _, err = run(capsys, played.limited, *args)
        if verb == "list":
            assert code != 0 and 'cannot list resource "pods"' in err, (args, err)
            assert len(err.strip().splitlines()) <= 2
        else:
            assert code == 0, (args, err)  # reading needs list, not get
    assert played.server.audit_writes() == []


def test_a_read_only_policy_reads_everything_and_acts_on_nothing(
    played: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    played.server.set_policy(deny(WRITES, ["*"]))
    played.server.clear_audit()
    for args in READERS:
        code, _, err = run(capsys, played.limited, *args)
        assert code == 0, (args, err)
    for args in ACTIONS:
        code, _, err = run(capsys, played.limited, *args)
        assert code != 0, (args, err)
        assert "missing" in err and "nothing was changed" in err, (args, err)
    assert played.server.audit_writes() == []


@pytest.mark.parametrize(
    ("verb", "action"),
    [
        ("patch", ["fence", "networkwordcount/1", "--yes"]),
        ("delete", ["force-kill", "networkwordcount/1", "--node-down", "--yes"]),
        ("create", ["resubmit", "networkwordcount", "--yes", "--force"]),
    ],
)
def test_each_write_verb_forbidden_in_turn_is_named(
    played: Any, capsys: pytest.CaptureFixture[str], verb: str, action: list[str]
) -> None:
    played.server.set_policy(deny([verb], ["*"]))
    played.server.clear_audit()
    code, _, err = run(capsys, played.limited, *action)
    assert code != 0 and f"missing {verb} " in err and "nothing was changed" in err, err
    assert played.server.audit_writes() == []


def test_a_tenant_without_nodes_still_sees_the_split_brain_and_is_told_what_it_lacks(
    played: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tenant reads its namespace only: the node list is refused. The lost node is then told
    by its pods (NodeNotReady Events, Ready=False), and the answer says what was not read."""
    played.server.set_policy({"rules": [REVIEWS]})
    import json

    code = main(
        ["--kubeconfig", str(played.kubeconfig), "describe", "networkwordcount", "-o", "json"]
    )
    admin = json.loads(capsys.readouterr().out)
    assert code == 0
    played.server.set_policy(tenant("oncall"))
    code = main(["--kubeconfig", str(played.limited), "describe", "networkwordcount", "-o", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    seen = json.loads(out)
    assert [a["type"] for a in seen["alerts"]] == [a["type"] for a in admin["alerts"]]
    assert {"SplitBrain", "ZombieDriver"} <= {a["type"] for a in seen["alerts"]}
    assert seen["attempts"][0]["reason"]["code"] == admin["attempts"][0]["reason"]["code"]
    assert any("told by pod" in e for e in seen["attempts"][0]["reason"]["evidence"])
    assert any(n.startswith("nodes could not be read (forbidden)") for n in seen["notes"])
    assert not any("could not be read" in n for n in admin["notes"])
