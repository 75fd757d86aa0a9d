"""Issue 24's sharp edges, through the real entry point: an action names its attempt, and a
plan's YAML is plain."""

from __future__ import annotations

import pytest

from tests.functional.test_read_commands import run


@pytest.mark.parametrize("action", ["fence", "force-kill", "unfence"])
@pytest.mark.parametrize("reference", ["networkwordcount", "networkwordcount/latest"])
def test_an_action_needs_its_attempt_named(played, capsys, action: str, reference: str) -> None:
    """In s2 the latest attempt is the healthy one: an action must not pick it by default."""
    c = played("s2-partition")
    c.server.clear_audit()
    code, out, err = run(capsys, c, action, reference, "--yes")
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1, err
    assert f"{action} needs the attempt to act on" in err
    assert "networkwordcount/1 (Lost on node-a)" in err and "networkwordcount/2 (Running" in err
    assert c.server.audit_writes() == []


def test_a_plans_yaml_has_no_anchors(played, capsys) -> None:
    c = played("s2-partition")
    for args in (
        ("fence", "networkwordcount/1", "--dry-run", "-o", "yaml"),
        ("force-kill", "networkwordcount/1", "--dry-run", "-o", "yaml"),
    ):
        code, out, err = run(capsys, c, *args)
        assert code == 0, err
        assert "&id0" not in out and "*id0" not in out, out
