"""The TUI's log view and owner key on the emulator and on a real control plane.

On the real one, kube-apiserver answers ``pods/log`` (``follow``, ``timestamps``) by asking the
simulated kubelet (``sim/kubeletapi.py``), and the driver's owner is the Job the real Job
controller made it for. (``u``, the Spark UI through ``pods/proxy``, is tested on the emulator
only: kube-apiserver dials the pod's IP, which no simulated pod listens on.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubectl_spark.kube.client import Connection
from kubectl_spark.tui.app import SparkTUI
from kubectl_spark.tui.screens.text import TextScreen
from kubectl_spark.tui.sources import LiveSource
from kubectl_spark.tui.widgets.apps_table import AppsTable
from tests.stages import Stage
from tests.tui_pilot import SIZE, STAMP, body_lines, text_of, to_first_attempt, until

pytestmark = pytest.mark.slow
APP = "networkwordcount"


@pytest.fixture
def stage(staged: Any) -> Stage:
    return staged("s2-partition")


def tui_on(kubeconfig: Path) -> SparkTUI:
    def make(namespace: str | None, context: str | None, all_namespaces: bool) -> LiveSource:
        return LiveSource(
            Connection(kubeconfig=str(kubeconfig), context=context, namespace=namespace),
            all_namespaces=all_namespaces,
        )

    return SparkTUI(make)


async def test_a_followed_log_with_timestamps_and_the_drivers_job(stage: Stage) -> None:
    s = stage
    s.do("submit", APP)
    s.until("the driver running", lambda: len(s.running(spark_role="driver")) == 1)
    driver = s.running(spark_role="driver")[0]
    app: Any = tui_on(s.kubeconfig)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.query_one(AppsTable).row_count == 1, timeout=30)
        await to_first_attempt(pilot, app)
        await pilot.press("l")
        await until(pilot, lambda: isinstance(app.screen, TextScreen), timeout=20)
        screen = app.screen
        await pilot.press("t", "f")
        await until(pilot, lambda: "[following]" in text_of(screen.query_one("#text-title")))
        await until(pilot, lambda: bool(body_lines(screen)), timeout=20)
        s.world.log(driver, "INFO marker: written while the TUI follows")
        await until(
            pilot, lambda: any("marker: written" in x for x in body_lines(screen)), timeout=20
        )
        assert all(STAMP.match(x) for x in body_lines(screen) if x), body_lines(screen)
        await pilot.press("escape")  # leaving the view stops the follow (its socket shut)
        await until(pilot, lambda: len(app.screen_stack) == 1)
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, TextScreen), timeout=20)
        title = text_of(app.screen.query_one("#text-title"))
        assert title.startswith("YAML of Job default/"), title
        assert "kind: Job" in body_lines(app.screen)
