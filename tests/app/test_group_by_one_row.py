"""``--group-by LABEL`` names rows by the label, and never splits an application (issue 48).

The driver pods carry the label; the Job that launched them, and the attempts only it (or its
Events) remembers, do not. Grouped apart, they made a second row of the same application
("3.5.1" and "pi"). Each application must read the same with and without ``--group-by``:
the same attempts, state, losses and alerts; only its name may change.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubectl_spark.cli.main import main


def listed(
    kubeconfig: Any, capsys: pytest.CaptureFixture[str], *extra: str
) -> list[dict[str, Any]]:
    code = main(["--kubeconfig", str(kubeconfig), "ls", "-A", "-o", "json", "--no-history", *extra])
    out, err = capsys.readouterr()
    assert code == 0, err
    return list(json.loads(out)["items"])


def answer(item: dict[str, Any]) -> tuple[Any, ...]:
    summary = item["summary"]
    return (
        item["namespace"],
        item["state"],
        len(item["attempts"]),
        json.dumps(summary["losses"], sort_keys=True),
        sorted(a["type"] for a in item["alerts"]),
        item["source"],
    )


@pytest.mark.parametrize("scenario", ["mixed", "s1-node-shutdown", "s5-operator-retries"])
def test_group_by_spark_version_is_the_same_answer_one_row_each(
    scenario: str, played: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    c = played(scenario)
    plain = listed(c.kubeconfig, capsys)
    grouped = listed(c.kubeconfig, capsys, "--group-by", "spark-version")
    assert len(grouped) == len(plain), [g["name"] for g in grouped]
    assert sorted(map(answer, grouped)) == sorted(map(answer, plain))
    assert all(g["name"].split(":")[0] for g in grouped)
