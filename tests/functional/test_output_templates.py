"""-o jsonpath=… and -o custom-columns=… on every command that prints JSON, as kubectl's; a bad
template or an unknown format is refused before any request is sent."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.command_line import run


@pytest.fixture
def s2(played: Any) -> Any:
    """s2-partition played to its end, once per run (``played`` in conftest)."""
    return played("s2-partition")


def test_jsonpath_and_custom_columns_read_the_json_output(
    s2: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run(capsys, s2, "ls", "-A", "-o", "json")
    apps = json.loads(out)["items"]
    code, out, err = run(
        capsys, s2, "ls", "-A", "-o",
        'jsonpath={range .items[*]}{.namespace}/{.name} {.attempts[-1].driverPod}{"\\n"}{end}',
    )  # fmt: skip
    assert code == 0, err
    assert out == "".join(
        f"{a['namespace']}/{a['name']} {a['attempts'][-1]['driverPod']}\n" for a in apps
    )
    code, out, err = run(
        capsys, s2, "ls", "-A", "--no-headers", "-o",
        "custom-columns=APP:.name,ALERTS:.alerts[*].type,NONE:.nothing",
    )  # fmt: skip
    assert code == 0, err
    rows = [line.split() for line in out.splitlines()]
    assert rows == [
        [a["name"], ",".join(x["type"] for x in a["alerts"]) or "<none>", "<none>"] for a in apps
    ]
    # The README's example: the applications with an alert.
    code, out, err = run(
        capsys, s2, "ls", "-A", "-o",
        'jsonpath={range .items[?(@.alerts[*])]}{.namespace}/{.name}{"\\n"}{end}',
    )  # fmt: skip
    alerted = [f"{a['namespace']}/{a['name']}" for a in apps if a["alerts"]]
    assert alerted and out.splitlines() == alerted, err
    code, out, err = run(
        capsys, s2, "describe", "networkwordcount", "-o", "jsonpath={.attempts[*].number}"
    )
    assert (code, out) == (0, " ".join(str(a["number"]) for a in apps[0]["attempts"])), err


def test_a_bad_template_or_format_is_refused_before_any_request(
    s2: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    s2.server.clear_audit()
    for args, message in [
        (
            ["ls", "-o", "jsonpath={.items[}"],
            "error parsing jsonpath {.items[}, unterminated array",
        ),
        (["ls", "-o", "jsonpath="], "jsonpath expects a template"),
        (["history", "networkwordcount", "-o", "custom-columns=NAME"], "expected <header>:<json"),
        (["force-kill", "networkwordcount/1", "--dry-run", "-o", "xml"], 'format "xml"'),
        (["resubmit", "networkwordcount", "--dry-run", "-o", "xml"], 'format "xml"'),
    ]:
        code, out, err = run(capsys, s2, *args)
        assert code != 0 and out == "", args
        assert err.startswith("error: ") and message in err and err.count("\n") == 1, err
    assert s2.server.audit_entries() == []


def test_an_action_plan_prints_through_a_template(
    s2: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys, s2, "force-kill", "networkwordcount/1", "--node-down", "--dry-run", "-o",
        'jsonpath={range .operations[?(@.verb=="delete")]}{.name}{"\\n"}{end}',
    )  # fmt: skip
    assert code == 0, err
    assert out and all(line.startswith("networkwordcount-") for line in out.splitlines())


def test_sort_by_orders_the_applications_by_a_path(
    played: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    mixed = played("mixed")
    _, out, _ = run(capsys, mixed, "ls", "-A", "-o", "json")
    apps = json.loads(out)["items"]  # by namespace and name
    expected = [a["name"] for a in sorted(apps, key=lambda a: a["attempts"][-1]["number"])]
    assert expected != [a["name"] for a in apps], "the scenario must give something to sort"
    for path in (".attempts[-1].number", "{.attempts[-1].number}"):
        code, out, err = run(
            capsys, mixed, "ls", "-A", "--sort-by", path, "-o", "jsonpath={.items[*].name}"
        )
        assert (code, out.split()) == (0, expected), err
    code, out, err = run(capsys, mixed, "ls", "--sort-by", "{.attempts[}")
    assert code != 0 and out == "" and "unterminated array" in err


def test_field_selector_keeps_whole_applications_with_a_matching_pod(
    s2: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    _, everything, _ = run(capsys, s2, "ls", "-o", "json")
    (app,) = json.loads(everything)["items"]
    first, second = app["attempts"][0], app["attempts"][1]
    assert first["node"] != second["node"]
    code, out, err = run(capsys, s2, "ls", "--field-selector", f"spec.nodeName={first['node']}")
    _, unfiltered, _ = run(capsys, s2, "ls")
    assert code == 0, err

    def without_age(table: str) -> list[str]:  # AGE may tick between the two runs
        return [line.rsplit(None, 1)[0] for line in table.splitlines()]

    assert without_age(out) == without_age(unfiltered)  # the other node's driver still counts
    code, out, err = run(capsys, s2, "ls", "--field-selector", "spec.nodeName=nowhere")
    assert (code, out) == (0, "") and "No Spark applications found" in err
    code, out, err = run(capsys, s2, "ls", "--field-selector", "spec.bogus=1")
    assert code != 0 and "field label not supported: spec.bogus" in err
