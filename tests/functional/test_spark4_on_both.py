"""Spark 4.1's exit-exception annotation, read into the driver's reason, on both backends.

The simulated driver writes ``spark.exit-exception`` on its pod and exits 1, as a Spark 4.1+
driver with ``spark.kubernetes.driver.annotateExitException`` does (the Apache operator's
default); on the real control plane the real Job controller then starts attempt 2.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.stages import Stage

pytestmark = pytest.mark.slow
APP = "networkwordcount"
EXCEPTION = (
    "org.apache.spark.SparkException: Job aborted due to stage failure\x1b[31m\n"
    "\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:2898)\n"
    "Caused by: java.io.IOException: No space left on device\n\t... 12 more\n"
)
SAID = (
    "org.apache.spark.SparkException: Job aborted due to stage failure\\x1b[31m; "
    "Caused by: java.io.IOException: No space left on device"
)


@pytest.fixture
def stage(staged: Any) -> Stage:
    return staged("s2-partition")


def test_a_failed_drivers_exit_exception_is_its_reason(
    stage: Stage, capsys: pytest.CaptureFixture[str]
) -> None:
    s = stage
    s.do("submit", APP)
    s.until("the driver running", lambda: len(s.running(spark_role="driver")) == 1)
    s.do("exit", APP, code=1, exception=EXCEPTION)
    s.until(
        "attempt 1's driver failed",
        lambda: any(
            (p.get("status") or {}).get("phase") == "Failed" for p in s.pods(spark_role="driver")
        ),
    )
    code, text, err = s.cli(capsys, "describe", APP)
    assert code == 0, err
    assert "\x1b" not in text  # cluster text, escaped
    assert (
        f"Spark's exit exception: {SAID}" in " ".join(text.split()).replace(" | ", " ")
        or SAID.replace("\\x1b", "\\x1b") in text
    ), text
    code, doc, err = s.cli(capsys, "ls", "-o", "json")
    assert code == 0, err
    app = next(a for a in json.loads(doc)["items"] if a["name"] == APP)
    first = app["attempts"][0]
    assert first["reason"]["code"] == "ExitCode" and first["reason"]["category"] == "app"
    raw = EXCEPTION.splitlines()
    said = f"{raw[0].strip()}; {raw[2].strip()}"
    assert f"metadata.annotations[spark.exit-exception]: {said}" in first["reason"]["evidence"]
