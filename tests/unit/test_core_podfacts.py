"""The fast read of a pod's facts says what the careful one says, and "quiet" never hides a loss."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings

from kubectl_spark.core.analyze import pod_state
from kubectl_spark.core.losses import classify
from kubectl_spark.core.podfacts import _careful, facts
from kubectl_spark.core.reasons import NodeHealth, PodContext, spark_container
from tests.hostile import RUNNING, varied_pods

FIELDS = [f for f in facts(RUNNING).__slots__ if f not in ("pod", "quiet")]


@settings(
    max_examples=800, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(varied_pods())
def test_fast_and_careful_reads_agree_and_quiet_pods_have_no_reason(pod: dict[str, Any]) -> None:
    fast, careful = facts(pod), _careful(pod)
    assert {f: getattr(fast, f) for f in FIELDS} == {f: getattr(careful, f) for f in FIELDS}
    if fast.quiet:
        ok = NodeHealth(True, "node: Ready")
        for role in ("driver", "executor"):
            assert classify(PodContext(pod, role, ok, ())) is None
        assert pod_state(careful, ok, spark_container(pod)) == "Running"


def test_a_plain_running_pod_is_quiet_and_a_deleted_one_is_not() -> None:
    assert facts(RUNNING).quiet
    deleting = copy.deepcopy(RUNNING)
    deleting["metadata"]["deletionTimestamp"] = "2026-03-01T03:00:00Z"
    assert not facts(deleting).quiet
