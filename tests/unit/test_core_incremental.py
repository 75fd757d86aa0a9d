"""The incremental update gives the same answer as a full analysis."""

from __future__ import annotations

import copy
import dataclasses
from datetime import timedelta
from typing import Any

from kubectl_spark.core.analyze import analyze
from kubectl_spark.core.incremental import Change, LiveAnalysis
from kubectl_spark.core.pod import Pod, pods_of
from tests.core_pods import NOW, mk, three_apps, typed_snapshot


def test_incremental_equals_full_and_touches_only_changed_apps() -> None:
    before = three_apps()
    live = LiveAnalysis()
    live.update(typed_snapshot(pods=before, now=NOW), None)
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
    snapshot = typed_snapshot(pods=after, now=NOW)
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
    live.update(typed_snapshot(pods=three_apps(), now=NOW), None)
    stray = mk("stray", "executor", "2026-03-01T00:00:09Z", labels={})
    snapshot = typed_snapshot(pods=[*three_apps(), stray], now=NOW)
    result = live.update(snapshot, {"pods": {stray["metadata"]["uid"]: Change(stray)}})
    assert live.full_runs == 2
    assert result.to_json() == analyze(snapshot).to_json()


def test_time_alone_brings_a_full_analysis_after_max_age() -> None:
    live = LiveAnalysis(max_age=60)
    snapshot = typed_snapshot(pods=three_apps(), now=NOW)
    live.update(snapshot, None)
    live.update(dataclasses.replace(snapshot, now=NOW + timedelta(seconds=59)), {})
    assert live.full_runs == 1
    live.update(dataclasses.replace(snapshot, now=NOW + timedelta(seconds=61)), {})
    assert live.full_runs == 2, "alerts that depend on the time alone must not go stale"


def test_a_change_to_one_of_two_jobs_sharing_a_name_prefix_equals_a_full_analysis() -> None:
    from tests.core_pods import job_pair

    pods, jobs, events = job_pair()
    live = LiveAnalysis()
    live.update(typed_snapshot(pods=pods, jobs=jobs, events=events, now=NOW), None)
    after = copy.deepcopy(pods)
    etl = next(p for p in after if p["metadata"]["name"] == "etl-live1")
    etl["status"]["phase"] = "Pending"
    snapshot = typed_snapshot(pods=after, jobs=jobs, events=events, now=NOW)
    fast = live.update(snapshot, {"pods": {etl["metadata"]["uid"]: Change(etl)}})
    assert live.full_runs == 1, "one pod's change must take the partial path"
    assert fast.to_json() == analyze(snapshot).to_json()


def test_without_readable_nodes_every_update_is_a_full_analysis() -> None:
    """Node health then comes from all pods' Events: a part of the pods cannot tell it."""
    live = LiveAnalysis()
    before = typed_snapshot(pods=three_apps(), unreadable=("nodes",), now=NOW)
    live.update(before, None)
    after = copy.deepcopy(three_apps())
    victim = next(p for p in after if p["metadata"]["name"] == "a-exec-1")
    victim["status"]["phase"] = "Failed"
    snapshot = dataclasses.replace(before, pods=pods_of(after))
    changed = next(p for p in snapshot.pods if p.metadata.uid == victim["metadata"]["uid"])
    result = live.update(snapshot, {"pods": {changed.metadata.uid: Change(changed)}})
    assert live.full_runs == 2
    assert result.to_json() == analyze(snapshot).to_json()


def test_a_change_to_one_attempt_of_an_apache_operator_app_equals_a_full_analysis() -> None:
    """Its attempts have app ids of their own: a change to one re-reads them all together."""
    from tests.apache_objects import apache_attempt

    before = [
        *apache_attempt(0, "2026-03-01T00:00:00Z"),
        *apache_attempt(1, "2026-03-01T00:10:00Z"),
        *three_apps(),
    ]
    live = LiveAnalysis()
    live.update(typed_snapshot(pods=before, now=NOW), None)
    after = copy.deepcopy(before)
    driver = next(p for p in after if p["metadata"]["name"] == "pi-0-driver")
    driver["status"] = {"phase": "Failed"}
    snapshot = typed_snapshot(pods=after, now=NOW)
    fast = live.update(snapshot, {"pods": {driver["metadata"]["uid"]: Change(driver)}})
    assert live.full_runs == 1  # the fast path was taken
    full = analyze(snapshot)
    assert [a.to_json() for a in fast.apps] == [a.to_json() for a in full.apps]
    (pi,) = [a for a in fast.apps if a.name == "pi"]
    assert [a.number for a in pi.attempts] == [1, 2] and not pi.alerts


def test_a_driver_s_executor_list_changing_reanalyzes_its_application_alone() -> None:
    """Spark's executor list is polled from every running driver: a change in one (an executor
    removed, with Spark's reason) touches that driver's application, never all of them (at
    50,000 pods a whole analysis takes seconds, and busy drivers change their lists often)."""
    live = LiveAnalysis()
    before = typed_snapshot(pods=three_apps(), now=NOW)
    live.update(before, None)
    untouched = next(a for a in live.analysis.apps if a.name == "a")
    removed = {
        "id": "3",
        "hostPort": "10.0.0.9:7079",
        "isActive": False,
        "addTime": "2026-03-01T00:00:06Z",
        "removeTime": "2026-03-01T00:01:00Z",
        "removeReason": "Executor killed by driver.",
    }
    view = {"executors": [{"id": "driver", "isActive": True}, removed]}
    snapshot = dataclasses.replace(before, spark_views={"uid-b-driver": view})
    fast = live.update(snapshot, {"spark_views": {"uid-b-driver": Change(view)}})
    assert live.full_runs == 1, "a driver's executor list must take the partial path"
    assert fast.to_json() == analyze(snapshot).to_json()
    b = next(a for a in fast.apps if a.name == "b")
    assert "3" in {e.id for t in b.attempts for e in t.executors}, "Spark's list was not read"
    assert next(a for a in fast.apps if a.name == "a") is untouched
    # A list that went away with its driver, and one of a driver no pod is known for.
    gone = dataclasses.replace(before, spark_views={})
    back = live.update(
        gone,
        {"spark_views": {"uid-b-driver": Change(view, True), "uid-nobody": Change(view, True)}},
    )
    assert live.full_runs == 1
    assert back.to_json() == analyze(gone).to_json()


def test_spark_s_summaries_are_kept_as_the_analysis_reads_them() -> None:
    """What moves with every task (Spark's api.scala ExecutorSummary counters) is not kept."""
    from kubectl_spark.core.summaries import SUMMARY_FIELDS, read_summaries

    busy = {
        "id": "1",
        "hostPort": "10.0.0.9:7079",
        "isActive": True,
        "addTime": "t1",
        "activeTasks": 3,
        "totalDuration": 123456,
        "memoryUsed": 1 << 30,
        "peakMemoryMetrics": {"JVMHeapMemory": 1 << 31},
        "executorLogs": {"stdout": "http://x"},
    }
    kept = read_summaries([busy, "not an object", {**busy, "removeReason": "gone"}])
    assert kept[0] == {k: busy[k] for k in ("id", "hostPort", "isActive", "addTime")}
    assert kept[1] == "not an object"
    assert isinstance(kept[2], dict)
    assert set(kept[2]) <= set(SUMMARY_FIELDS) and kept[2]["removeReason"] == "gone"


def test_the_events_of_an_executor_spark_alone_remembers_reach_the_partial_path() -> None:
    """Executor 3's pod is gone; Spark's list names it by id and the core reads the Events
    about the name a sibling's pattern gives it (b-exec-3): a Preempted Event says it was the
    cluster's doing. The partial path must read that Event as a full analysis does, whether the
    list or the Event comes last."""
    preempted = {
        "metadata": {"uid": "ev-1", "namespace": "ns", "name": "b-exec-3.1"},
        "involvedObject": {"kind": "Pod", "namespace": "ns", "name": "b-exec-3", "uid": "gone"},
        "reason": "Preempted",
        "message": "Preempted by pod 1234 on node n1",
        "lastTimestamp": "2026-03-01T00:00:59Z",
    }
    view = {
        "executors": [
            {
                "id": "3",
                "isActive": False,
                "addTime": "2026-03-01T00:00:06Z",
                "removeTime": "2026-03-01T00:01:00Z",
                "removeReason": "The executor with id 3 was deleted by a user or the framework.",
            }
        ]
    }
    both = typed_snapshot(
        pods=three_apps(), events=[preempted], spark_views={"uid-b-driver": view}, now=NOW
    )

    def loss(analysis: Any) -> str:
        b = next(a for a in analysis.apps if a.name == "b")
        (three,) = [e for t in b.attempts for e in t.executors if e.id == "3"]
        return f"{three.reason.category}/{three.reason.code}"

    assert loss(analyze(both)) == "cluster/Preempted"
    orders: list[tuple[dict[str, Any], dict[str, Any], str]] = [
        ({"events": [preempted]}, {"spark_views": {"uid-b-driver": view}}, "spark_views"),
        ({"spark_views": {"uid-b-driver": view}}, {"events": [preempted]}, "events"),
    ]
    for first, last, change in orders:
        live = LiveAnalysis()
        live.update(
            dataclasses.replace(both, **{**first, **{k: type(v)() for k, v in last.items()}}), None
        )
        uid = "uid-b-driver" if change == "spark_views" else "ev-1"
        obj = view if change == "spark_views" else preempted
        fast = live.update(both, {change: {uid: Change(obj)}})
        assert live.full_runs == 1, f"{change} last: the partial path was not taken"
        assert loss(fast) == "cluster/Preempted", f"{change} last"
        assert fast.to_json() == analyze(both).to_json()


def test_a_full_analysis_answers_before_it_indexes(monkeypatch: Any) -> None:
    """The TUI's first paint waits for the analysis alone (issue 26): the pods are indexed for
    the next change by ``prepare``, called once the answer is shown, or by that change itself;
    the answers are the same either way."""
    indexed: list[str] = []
    real = LiveAnalysis._add_pod

    def counted(self: LiveAnalysis, index: Any, pod: Any) -> Any:
        indexed.append(pod.metadata.name)
        return real(self, index, pod)

    monkeypatch.setattr(LiveAnalysis, "_add_pod", counted)
    before = three_apps()
    after = copy.deepcopy(before)
    victim = next(p for p in after if p["metadata"]["name"] == "a-exec-1")
    victim["status"] = {"phase": "Failed"}
    change = {"pods": {victim["metadata"]["uid"]: Change(Pod.of(victim))}}
    answers = []
    for prepared in (True, False):
        indexed.clear()
        live = LiveAnalysis()
        first = live.update(typed_snapshot(pods=before, now=NOW), None)
        assert (
            indexed == []
            and first.to_json() == analyze(typed_snapshot(pods=before, now=NOW)).to_json()
        )
        if prepared:
            live.prepare()
            assert len(indexed) == len(before)
            live.prepare()  # once
            assert len(indexed) == len(before)
        answers.append(live.update(typed_snapshot(pods=after, now=NOW), change).to_json())
        assert live.full_runs == 1
        assert len(indexed) == len(before) + 1  # the index, then the changed pod
    assert answers[0] == answers[1] == analyze(typed_snapshot(pods=after, now=NOW)).to_json()
