"""What ``ls`` and the TUI keep of a pod (``core.slim``) gives the answer the whole pod gives.

``ls`` and the TUI's watches analyse slim pods; ``describe`` and JSON read whole ones. A field
the core reads but slim drops makes them disagree on the same pod: an init container that
failed was a reason in ``describe`` and nothing in ``ls``.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from hypothesis import HealthCheck, given, settings

from kubectl_spark.core import slim
from kubectl_spark.core.analyze import analyze
from kubectl_spark.core.inputs import Snapshot
from tests.unit.test_core_podfacts import RUNNING, pods

NOW = datetime(2026, 3, 1, 4, tzinfo=UTC)


def _answer(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    result = analyze(Snapshot(pods=items, now=NOW))
    return [app.to_json() for app in result.apps] + [u.to_json() for u in result.ungrouped]


def _variants(pod: dict[str, Any]) -> list[dict[str, Any]]:
    """The pod in each phase (most signals mean something only in some), and as a driver."""
    out = []
    for phase in ("Running", "Pending", "Failed", "Succeeded"):
        copied = copy.deepcopy(pod)
        if isinstance(copied.get("status"), dict):
            copied["status"]["phase"] = phase
        out += [copied, _driver_of(copied)]
    return out


def _driver_of(executor: dict[str, Any]) -> dict[str, Any]:
    """The executor's pod as its driver: the same signals, on the role that decides attempts."""
    driver = copy.deepcopy(executor)
    meta = driver.get("metadata")
    if isinstance(meta, dict):
        meta.pop("ownerReferences", None)
        if isinstance(meta.get("labels"), dict):
            meta["labels"]["spark-role"] = "driver"
    return driver


@settings(
    max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(pods())
def test_slim_pods_are_analysed_as_whole_ones(pod: dict[str, Any]) -> None:
    for variant in _variants(pod):
        assert _answer([slim.pod(variant)]) == _answer([variant])


def test_a_failed_init_container_is_kept() -> None:
    """The case that was missed: Init:Error on a driver, read from initContainerStatuses."""
    driver = _driver_of(RUNNING)
    driver["status"]["phase"] = "Failed"
    driver["status"]["initContainerStatuses"] = [
        {"name": "fetch-jars", "restartCount": 0, "state": {"terminated": {"exitCode": 1}}}
    ]
    (app,) = _answer([slim.pod(driver)])
    assert "init container fetch-jars failed" in app["attempts"][0]["reason"]["message"]
