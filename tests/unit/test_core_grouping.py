"""Grouping pods into applications, attempts and executors; and properties over arbitrary input."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_spark.core.analyze import analyze
from kubectl_spark.core.node import nodes_of
from tests.apache_objects import apache_attempt
from tests.core_pods import NOW, job_pair, mk, printed, ref, typed_snapshot
from tests.hostile import json_leaf, json_value


def test_job_attempts_are_numbered_by_creation_and_executors_follow_their_owner() -> None:
    job = {
        "metadata": {
            "name": "wc-driver",
            "namespace": "ns",
            "uid": "job-1",
            "creationTimestamp": "2026-03-01T00:00:00Z",
        },
        "spec": {"template": {"metadata": {"labels": {"spark-role": "driver"}}}},
        "status": {"failed": 1, "active": 1},
    }
    app = {"spark-app-selector": "spark-1", "spark-app-name": "wc"}
    pods = [
        mk(
            "wc-driver-b",
            "driver",
            "2026-03-01T00:10:00Z",
            labels=app,
            owner=ref("Job", "wc-driver", "job-1"),
        ),
        mk(
            "wc-driver-a",
            "driver",
            "2026-03-01T00:00:01Z",
            labels=app,
            owner=ref("Job", "wc-driver", "job-1"),
            phase="Failed",
        ),
        mk(
            "x-exec-1",
            "executor",
            "2026-03-01T00:00:05Z",
            labels={**app, "spark-exec-id": "1"},
            owner=ref("Pod", "wc-driver-a", "uid-wc-driver-a"),
        ),
        mk(
            "y-exec-1",
            "executor",
            "2026-03-01T00:10:05Z",
            labels={**app, "spark-exec-id": "1"},
            owner=ref("Pod", "wc-driver-b", "uid-wc-driver-b"),
        ),
    ]
    (result,) = analyze(typed_snapshot(pods=pods, jobs=[job], now=NOW)).apps
    assert (result.name, result.source, result.owner) == ("wc", "job", "wc-driver")
    assert [(a.number, a.driver_pod, [e.pod for e in a.executors]) for a in result.attempts] == [
        (1, "wc-driver-a", ["x-exec-1"]),
        (2, "wc-driver-b", ["y-exec-1"]),
    ]


def test_operator_label_wins_and_submission_id_places_executors() -> None:
    labels = {
        "sparkoperator.k8s.io/app-name": "pi",
        "spark-app-selector": "spark-2",
        "sparkoperator.k8s.io/submission-id": "s2",
    }
    pods = [
        mk("pi-driver", "driver", "2026-03-01T00:05:00Z", labels=labels),
        # its controller reference was removed (a second owner kept it): the submission id places it
        mk(
            "pi-exec-1",
            "executor",
            "2026-03-01T00:05:05Z",
            labels={**labels, "spark-exec-id": "1"},
            owner=ref("SparkApplication", "pi", "app-uid", controller=False),
        ),
    ]
    app_obj = {
        "metadata": {"name": "pi", "namespace": "ns", "uid": "app-uid"},
        "status": {"executionAttempts": 2, "applicationState": {"state": "RUNNING"}},
    }
    (result,) = analyze(typed_snapshot(pods=pods, sparkapplications=[app_obj], now=NOW)).apps
    assert (result.name, result.source, result.state) == ("pi", "sparkapplication", "Running")
    assert len(result.attempts) == 2  # attempt 1 reconstructed from status.executionAttempts
    assert result.attempts[0].driver_pod == "pi-driver" and result.attempts[0].uid is None
    assert [e.pod for e in result.attempts[1].executors] == ["pi-exec-1"]


@pytest.mark.parametrize(
    ("policy", "state", "counted"),
    [("OnFailure", "Failed", True), ("Always", "Lost", False), ("Never", "Lost", False)],
)
def test_an_earlier_operator_run_failed_only_if_the_operator_reruns_only_failures(
    policy: str, state: str, counted: bool
) -> None:
    labels = {"sparkoperator.k8s.io/app-name": "pi", "spark-app-selector": "spark-2"}
    app_obj = {
        "metadata": {"name": "pi", "namespace": "ns", "uid": "app-uid"},
        "spec": {"restartPolicy": {"type": policy}},
        "status": {"executionAttempts": 2, "applicationState": {"state": "RUNNING"}},
    }
    pods = [mk("pi-driver", "driver", "2026-03-01T00:05:00Z", labels=labels)]
    (result,) = analyze(typed_snapshot(pods=pods, sparkapplications=[app_obj], now=NOW)).apps
    first = result.attempts[0]
    assert first.reason is not None
    assert (first.state, first.reason.counts_as_failure) == (state, counted)
    assert result.attempts[1].state == "Running"


@pytest.mark.parametrize(("counted", "told"), [(2, True), (1, False)])
def test_the_first_operator_run_is_timed_by_events_only_when_none_expired(
    counted: int, told: bool
) -> None:
    labels = {"sparkoperator.k8s.io/app-name": "pi", "spark-app-selector": "spark-2"}
    app_obj = {
        "metadata": {"name": "pi", "namespace": "ns", "uid": "app-uid"},
        "spec": {"restartPolicy": {"type": "OnFailure"}},
        "status": {"executionAttempts": 2, "applicationState": {"state": "RUNNING"}},
    }

    def event(reason: str, first: str, count: int) -> dict[str, Any]:
        return {
            "metadata": {"name": f"pi.{reason}", "namespace": "ns", "uid": f"ev-{reason}"},
            "involvedObject": {
                "kind": "SparkApplication",
                "name": "pi",
                "namespace": "ns",
                "uid": "app-uid",
            },
            "reason": reason,
            "count": count,
            "firstTimestamp": first,
            "lastTimestamp": "2026-03-01T00:04:00Z",
        }

    events = [
        event("SparkApplicationSubmitted", "2026-03-01T00:01:00Z", counted),
        event("SparkDriverFailed", "2026-03-01T00:03:00Z", 1),
    ]
    pods = [mk("pi-driver", "driver", "2026-03-01T00:05:00Z", labels=labels)]
    (result,) = analyze(
        typed_snapshot(pods=pods, sparkapplications=[app_obj], events=events, now=NOW)
    ).apps
    first = result.attempts[0]
    expected = ("2026-03-01T00:01:00Z", "2026-03-01T00:03:00Z") if told else (None, None)
    assert (first.created_at, first.ended_at) == expected


def test_executors_of_a_driver_outside_the_cluster_are_one_attempt_not_orphans() -> None:
    """Client mode (a notebook's driver): executors name no owner and no driver pod exists."""
    labels = {"spark-app-selector": "spark-nb", "spark-app-name": "notebook"}
    pods = [
        mk(
            f"nb-exec-{i}",
            "executor",
            f"2026-03-01T00:0{i}:00Z",
            labels={**labels, "spark-exec-id": str(i)},
        )
        for i in (1, 2, 3)
    ]
    (app,) = analyze(typed_snapshot(pods=pods, now=NOW)).apps
    (attempt,) = app.attempts
    assert [e.id for e in attempt.executors] == ["1", "2", "3"]
    # its executors run, so its driver does (an executor exits once it loses its driver)
    assert (attempt.state, attempt.reason, attempt.unknown_losses) == ("Running", None, 0)
    assert app.state == "Running"
    assert all(e.reason is None for e in attempt.executors)
    assert app.alerts == ()
    assert any("Spark's client mode" in n for n in app.notes)
    assert attempt.driver_shown() == "<outside the cluster>"
    # none runs any more: the driver outside cannot be seen, so its state is not known
    for pod in pods:
        pod["status"] = {"phase": "Succeeded"}
    (attempt,) = analyze(typed_snapshot(pods=pods, now=NOW)).apps[0].attempts
    assert attempt.state == "Unknown"


def test_executors_without_an_owner_go_by_app_id_and_time_window() -> None:
    labels = {"spark-app-selector": "spark-3"}
    pods = [
        mk("d1", "driver", "2026-03-01T00:00:00Z", labels=labels),
        mk("d2", "driver", "2026-03-01T00:30:00Z", labels=labels),
        mk("e-early", "executor", "2026-03-01T00:10:00Z", labels={**labels, "spark-exec-id": "1"}),
        mk("e-late", "executor", "2026-03-01T00:40:00Z", labels={**labels, "spark-exec-id": "1"}),
    ]
    (result,) = analyze(typed_snapshot(pods=pods, now=NOW)).apps
    assert [[e.pod for e in a.executors] for a in result.attempts] == [["e-early"], ["e-late"]]


def test_group_by_override_and_the_ungrouped_bucket() -> None:
    pods = [
        mk(
            "a", "driver", "2026-03-01T00:00:00Z", labels={"team": "x", "spark-app-selector": "s-a"}
        ),
        mk(
            "b", "driver", "2026-03-01T00:00:00Z", labels={"team": "x", "spark-app-selector": "s-b"}
        ),
        mk("stray", "executor", "2026-03-01T00:00:00Z"),
    ]
    result = analyze(typed_snapshot(pods=pods, now=NOW), group_by="team")
    # Two applications (their app ids differ, no name says they are one) that share the label.
    assert [(a.name, len(a.attempts)) for a in result.apps] == [("x:s-a", 1), ("x:s-b", 1)]
    assert [(u.pod, u.role) for u in result.ungrouped] == [("stray", "executor")]
    assert printed(analyze(typed_snapshot(pods=pods, now=NOW)))["ungrouped"][0]["pod"] == "stray"


def test_group_by_does_not_make_unrelated_applications_attempts_of_one() -> None:
    """Issue 23: two unrelated applications sharing the --group-by label are not attempts 1
    and 2, raise no SplitBrain and get no advice to fence one; resubmits of one name are."""
    team = {"team": "data"}
    pods = [
        mk("etl-driver", "driver", "2026-03-01T00:00:00Z",
           labels={**team, "spark-app-name": "etl", "spark-app-selector": "s-1"}),
        mk("ml-driver", "driver", "2026-03-01T00:01:00Z",
           labels={**team, "spark-app-name": "ml", "spark-app-selector": "s-2"}),
        mk("etl-driver-2", "driver", "2026-03-01T00:02:00Z",
           labels={**team, "spark-app-name": "etl", "spark-app-selector": "s-3"}),
    ]  # fmt: skip
    apps = analyze(typed_snapshot(pods=pods, now=NOW), group_by="team").apps
    assert [(a.name, len(a.attempts)) for a in apps] == [("data:etl", 2), ("data:ml", 1)]
    ml = apps[1]
    assert not ml.alerts
    assert all(
        alert.type != "SplitBrain" or "ml" not in alert.message for a in apps for alert in a.alerts
    )
    alone = analyze(typed_snapshot(pods=pods[:1] + pods[2:], now=NOW), group_by="team").apps
    assert [(a.name, len(a.attempts)) for a in alone] == [("data", 2)]


def test_split_brain_zombie_and_orphans() -> None:
    labels = {"spark-app-selector": "spark-4", "spark-app-name": "s"}
    job_ref = ref("Job", "s-driver", "job-4")
    old = mk(
        "s-driver-1", "driver", "2026-03-01T00:00:00Z", labels=labels, owner=job_ref, node="dead"
    )
    old["metadata"]["deletionTimestamp"] = "2026-03-01T00:06:00Z"
    old["status"]["conditions"] = [
        {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager"}
    ]
    new = mk(
        "s-driver-2", "driver", "2026-03-01T00:06:00Z", labels=labels, owner=job_ref, node="n1"
    )
    nodes = [
        {
            "metadata": {"name": "dead"},
            "status": {
                "conditions": [
                    {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown"}
                ]
            },
        },
        {
            "metadata": {"name": "n1"},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]},
        },
    ]
    (result,) = analyze(typed_snapshot(pods=[old, new], nodes=nodes_of(nodes), now=NOW)).apps
    types = {a.type: a.attempts for a in result.alerts}
    assert types["SplitBrain"] == (1, 2) and types["ZombieDriver"] == (1,)
    assert result.attempts[0].state == "Lost" and result.attempts[0].reason is not None
    assert result.attempts[0].reason.code == "NodeLost"


roles = st.sampled_from(["driver", "executor", "", "weird"])
words = st.sampled_from(
    [
        "a",
        "b",
        "spark-1",
        "",
        "x/y",
        "Pod",
        "Job",
        "SparkApplication",
        "2026-03-01T00:00:00Z",
        "bad-time",
    ]
)


@st.composite
def spark_pod(draw: st.DrawFn) -> dict[str, Any]:
    labels = {"spark-role": draw(roles)}
    for key in (
        "spark-app-selector",
        "spark-app-name",
        "spark-exec-id",
        "sparkoperator.k8s.io/app-name",
        "sparkoperator.k8s.io/submission-id",
        "spark-exec-inactive",
    ):
        if draw(st.booleans()):
            labels[key] = draw(words)
    meta: dict[str, Any] = {
        "name": draw(words),
        "namespace": draw(st.sampled_from(["ns", "other"])),
        "uid": draw(st.uuids()).hex,
        "creationTimestamp": draw(words),
        "labels": labels,
    }
    if draw(st.booleans()):
        meta["ownerReferences"] = draw(
            st.lists(
                st.fixed_dictionaries(
                    {
                        "kind": st.sampled_from(["Pod", "Job", "SparkApplication", 3]),
                        "uid": words,
                        "name": words,
                        "controller": json_leaf,
                    }
                ),
                max_size=2,
            )
        )
    if draw(st.booleans()):
        meta["deletionTimestamp"] = draw(words)
    return {
        "metadata": meta,
        "spec": draw(st.one_of(json_value, st.fixed_dictionaries({"nodeName": words}))),
        "status": draw(
            st.one_of(
                json_value,
                st.fixed_dictionaries(
                    {
                        "phase": st.sampled_from(["Running", "Failed", "Pending", "Succeeded", 7]),
                        "reason": words,
                        "containerStatuses": st.lists(json_value, max_size=2),
                        "conditions": st.lists(json_value, max_size=2),
                    }
                ),
            )
        ),
    }


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(spark_pod(), max_size=8),
    st.lists(json_value, max_size=3),
    st.lists(json_value, max_size=3),
)
def test_arbitrary_input_never_raises_and_every_spark_pod_appears_once(
    pods: list[dict[str, Any]], events: list[Any], jobs: list[Any]
) -> None:
    result = analyze(
        typed_snapshot(
            pods=pods,
            events=events,
            jobs=jobs,
            nodes=nodes_of(events),
            sparkapplications=jobs,
            now=NOW,
        )
    )
    doc = result.to_json()
    seen: Counter[str] = Counter()
    for app in result.apps:
        for attempt in app.attempts:
            if attempt.uid and any(
                p["metadata"]["uid"] == attempt.uid
                and p["metadata"]["labels"].get("spark-role") == "driver"
                for p in pods
            ):
                seen[attempt.uid] += 1
            for executor in attempt.executors:
                seen[executor.uid] += 1
    for u in result.ungrouped:
        seen[u.uid] += 1
    assert sorted(seen) == sorted(p["metadata"]["uid"] for p in pods)
    assert all(v == 1 for v in seen.values())
    assert doc["kind"] == "SparkAppList"


@settings(max_examples=300, deadline=None)
@given(st.lists(json_value, max_size=6), st.lists(json_value, max_size=4))
def test_malformed_json_never_makes_the_core_raise(pods: list[Any], other: list[Any]) -> None:
    # to_json reads every part of the answer, the timelines (built when read) too
    analyze(
        typed_snapshot(
            pods=pods,
            jobs=other,
            events=other,
            nodes=nodes_of(other),  # typed as the gateway types whatever it read
            sparkapplications=other,
            volumeattachments=other,
            pvcs=other,
            now=NOW,
        )
    ).to_json()


def test_a_jobs_gone_attempts_are_the_events_of_its_own_pods_not_a_longer_named_jobs() -> None:
    pods, jobs, events = job_pair()
    apps = {
        a.name: a
        for a in analyze(typed_snapshot(pods=pods, jobs=jobs, events=events, now=NOW)).apps
    }
    assert [a.driver_pod for a in apps["etl"].attempts] == ["etl-gone1", "etl-live1"]
    assert [a.driver_pod for a in apps["etl-daily"].attempts] == [
        "etl-daily-gone2",
        "etl-daily-live1",
    ]


def test_a_run_names_its_schedule_by_label_or_by_owner() -> None:
    from kubectl_spark.core.analyze import schedule_of

    labelled = {"metadata": {"labels": {"sparkoperator.k8s.io/scheduled-app-name": "nightly"}}}
    owned = {
        "metadata": {
            "ownerReferences": [
                {"kind": "ScheduledSparkApplication", "name": "weekly", "uid": "u"},
            ]
        }
    }
    assert schedule_of(labelled) == "nightly" and schedule_of(owned) == "weekly"
    assert schedule_of({"metadata": {}}) == "" and schedule_of(None) == ""


def test_the_apache_operators_attempts_are_one_application() -> None:
    """Each attempt of an Apache-operator application has its own app id (<name>-<attemptId>)
    and driver name: grouped by app id they were separate applications, and two attempts alive
    were no split brain. Its label (spark.operator/spark-app-name) makes them one."""
    pods = [*apache_attempt(0, "2026-03-01T00:00:00Z"), *apache_attempt(1, "2026-03-01T00:10:00Z")]
    (app,) = analyze(typed_snapshot(pods=pods, now=NOW)).apps
    assert (app.name, app.source, app.app_id) == ("pi", "apache-operator", "pi-0")
    assert [(a.number, a.driver_pod, [e.pod for e in a.executors]) for a in app.attempts] == [
        (1, "pi-0-driver", ["pi-0-exec-1"]),
        (2, "pi-1-driver", ["pi-1-exec-1"]),
    ]
    assert "SplitBrain" in {a.type for a in app.alerts}
    # Once the first attempt has failed, no alert: one attempt alive.
    ended = [
        *apache_attempt(0, "2026-03-01T00:00:00Z", "Failed"),
        *apache_attempt(1, "2026-03-01T00:10:00Z"),
    ]
    (app,) = analyze(typed_snapshot(pods=ended, now=NOW)).apps
    assert "SplitBrain" not in {a.type for a in app.alerts}
    assert app.to_json()["source"] == "apache-operator"


def test_a_sparkcluster_is_an_application_of_its_own_not_executors() -> None:
    """The Apache operator's SparkCluster (spark-role master/worker) is a standalone cluster:
    its own application (source spark-cluster), its master read as the driver and its workers
    as executors by StatefulSet ordinal, never counted among another app's executors."""
    cluster = {"spark.operator/spark-cluster-name": "prod"}
    pods = [
        mk("prod-worker-1", "worker", "2026-03-01T00:00:00Z", labels=cluster),
        mk("prod-master-0", "master", "2026-03-01T00:00:01Z", labels=cluster),
        mk("prod-worker-0", "worker", "2026-03-01T00:00:00Z", labels=cluster, phase="Failed"),
        *apache_attempt(0, "2026-03-01T00:00:00Z"),
    ]
    owner = {
        "apiVersion": "spark.apache.org/v1",
        "kind": "SparkCluster",
        "metadata": {"name": "prod", "namespace": "ns", "uid": "uid-prod"},
        "status": {"currentState": {"currentStateSummary": "RunningHealthy", "message": "ok"}},
    }
    analysis = analyze(typed_snapshot(pods=pods, sparkclusters=[owner], now=NOW))
    assert [(a.name, a.source) for a in analysis.apps] == [
        ("pi", "apache-operator"),
        ("prod", "spark-cluster"),
    ]
    assert sum(len(t.executors) for t in analysis.apps[0].attempts) == 1
    prod = analysis.apps[1]
    (master,) = prod.attempts
    assert (master.driver_pod, prod.state, prod.owner) == ("prod-master-0", "Running", "prod")
    assert [(e.id, e.pod, e.state) for e in master.executors] == [
        ("0", "prod-worker-0", "Failed"),
        ("1", "prod-worker-1", "Running"),
    ]
    assert prod.to_json()["operator"] == {
        "kind": "SparkCluster",
        "apiVersion": "spark.apache.org/v1",
        "state": "RunningHealthy",
        "message": "ok",
    }
    assert analysis.ungrouped == ()
