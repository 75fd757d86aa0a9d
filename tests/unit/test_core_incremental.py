"""The incremental update gives the same answer as a full analysis."""

from __future__ import annotations

import copy
import dataclasses
from datetime import timedelta

from kubectl_spark.core.analyze import analyze
from kubectl_spark.core.incremental import Change, LiveAnalysis
from kubectl_spark.core.inputs import Snapshot
from tests.unit.test_core_grouping import NOW, mk, ref


def pods() -> list[dict]:
    out = []
    for app in ("a", "b", "c"):
        labels = {"spark-app-selector": f"spark-{app}", "spark-app-name": app}
        driver = mk(f"{app}-driver", "driver", "2026-03-01T00:00:00Z", labels=labels)
        out.append(driver)
        for i in (1, 2):
            out.append(
                mk(
                    f"{app}-exec-{i}",
                    "executor",
                    "2026-03-01T00:00:05Z",
                    labels={**labels, "spark-exec-id": str(i)},
                    owner=ref("Pod", f"{app}-driver", f"uid-{app}-driver"),
                )
            )
    return out


def test_incremental_equals_full_and_touches_only_changed_apps() -> None:
    before = pods()
    live = LiveAnalysis()
    live.update(Snapshot(pods=before, now=NOW), None)
    after = copy.deepcopy(before)
    victim = next(p for p in after if p["metadata"]["name"] == "b-exec-2")
    victim["status"] = {
        "phase": "Failed",
        "containerStatuses": [
            {
                "name": "spark-kubernetes-executor",
                "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
            }
        ],
    }
    removed = next(p for p in after if p["metadata"]["name"] == "c-exec-1")
    after.remove(removed)
    snapshot = Snapshot(pods=after, now=NOW)
    untouched = next(a for a in live.analysis.apps if a.name == "a")
    fast = live.update(
        snapshot,
        {
            "pods": {
                victim["metadata"]["uid"]: Change(victim),
                removed["metadata"]["uid"]: Change(removed, deleted=True),
            }
        },
    )
    assert fast.to_json() == analyze(snapshot).to_json()
    assert live.full_runs == 1, "a pod change must not analyze everything"
    assert next(a for a in fast.apps if a.name == "a") is untouched
    assert live.update(snapshot, {}) is fast


def test_an_ungroupable_pod_falls_back_to_a_full_analysis() -> None:
    live = LiveAnalysis()
    live.update(Snapshot(pods=pods(), now=NOW), None)
    stray = mk("stray", "executor", "2026-03-01T00:00:09Z", labels={})
    snapshot = Snapshot(pods=[*pods(), stray], now=NOW)
    result = live.update(snapshot, {"pods": {stray["metadata"]["uid"]: Change(stray)}})
    assert live.full_runs == 2
    assert result.to_json() == analyze(snapshot).to_json()


def test_time_alone_brings_a_full_analysis_after_max_age() -> None:
    live = LiveAnalysis(max_age=60)
    snapshot = Snapshot(pods=pods(), now=NOW)
    live.update(snapshot, None)
    live.update(dataclasses.replace(snapshot, now=NOW + timedelta(seconds=59)), {})
    assert live.full_runs == 1
    live.update(dataclasses.replace(snapshot, now=NOW + timedelta(seconds=61)), {})
    assert live.full_runs == 2, "alerts that depend on the time alone must not go stale"


def test_a_change_to_one_of_two_jobs_sharing_a_name_prefix_equals_a_full_analysis() -> None:
    from tests.unit.test_core_grouping import job_pair

    pods, jobs, events = job_pair()
    live = LiveAnalysis()
    live.update(Snapshot(pods=pods, jobs=jobs, events=events, now=NOW), None)
    after = copy.deepcopy(pods)
    etl = next(p for p in after if p["metadata"]["name"] == "etl-live1")
    etl["status"]["phase"] = "Pending"
    snapshot = Snapshot(pods=after, jobs=jobs, events=events, now=NOW)
    fast = live.update(snapshot, {"pods": {etl["metadata"]["uid"]: Change(etl)}})
    assert live.full_runs == 1, "one pod's change must take the partial path"
    assert fast.to_json() == analyze(snapshot).to_json()


def test_without_readable_nodes_every_update_is_a_full_analysis() -> None:
    """Node health then comes from all pods' Events: a part of the pods cannot tell it."""
    live = LiveAnalysis()
    before = Snapshot(pods=pods(), unreadable=("nodes",), now=NOW)
    live.update(before, None)
    after = copy.deepcopy(pods())
    victim = next(p for p in after if p["metadata"]["name"] == "a-exec-1")
    victim["status"]["phase"] = "Failed"
    snapshot = dataclasses.replace(before, pods=after)
    result = live.update(snapshot, {"pods": {victim["metadata"]["uid"]: Change(victim)}})
    assert live.full_runs == 2
    assert result.to_json() == analyze(snapshot).to_json()


def test_a_change_to_one_attempt_of_an_apache_operator_app_equals_a_full_analysis() -> None:
    """Its attempts have app ids of their own: a change to one re-reads them all together."""
    from tests.unit.test_core_grouping import apache_attempt

    before = [
        *apache_attempt(0, "2026-03-01T00:00:00Z"),
        *apache_attempt(1, "2026-03-01T00:10:00Z"),
        *pods(),
    ]
    live = LiveAnalysis()
    live.update(Snapshot(pods=before, now=NOW), None)
    after = copy.deepcopy(before)
    driver = next(p for p in after if p["metadata"]["name"] == "pi-0-driver")
    driver["status"] = {"phase": "Failed"}
    snapshot = Snapshot(pods=after, now=NOW)
    fast = live.update(snapshot, {"pods": {driver["metadata"]["uid"]: Change(driver)}})
    assert live.full_runs == 1  # the fast path was taken
    full = analyze(snapshot)
    assert [a.to_json() for a in fast.apps] == [a.to_json() for a in full.apps]
    (pi,) = [a for a in fast.apps if a.name == "pi"]
    assert [a.number for a in pi.attempts] == [1, 2] and not pi.alerts
