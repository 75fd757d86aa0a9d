"""Issue 23, "Attempts and alerts": one named test per bullet the core answers alone.

Plain dicts in, the analysis out (no cluster): each fails without its fix.
"""

from __future__ import annotations

from typing import Any

from kubectl_spark.core.analyze import analyze
from kubectl_spark.core.inputs import Snapshot
from kubectl_spark.core.model import App
from tests.core_pods import APP, JOB, NOW, kept, mk, node, ref, typed_snapshot


def executor(name: str, owner: dict[str, Any], exec_id: str, *, node_name: str = "n2",
             labels: dict[str, str] = APP, created: str = "2026-03-01T00:01:00Z") -> dict[str, Any]:  # fmt: skip
    return mk(name, "executor", created, labels={**labels, "spark-exec-id": exec_id},
              owner=owner, node=node_name)  # fmt: skip


def one(snapshot: Snapshot) -> App:
    (app,) = analyze(snapshot).apps
    return app


def types(app: App) -> dict[str, tuple[int, ...]]:
    return {a.type: a.attempts for a in app.alerts}


def test_attempts_sharing_one_app_id_are_flagged() -> None:
    """Driver Job retries share the app id: Spark's attempt 2 counts attempt 1's executors."""
    first = mk("wc-driver-a", "driver", "2026-03-01T00:00:00Z", labels=APP, owner=JOB, node="n1")
    first["metadata"]["deletionTimestamp"] = "2026-03-01T00:09:00Z"
    second = mk("wc-driver-b", "driver", "2026-03-01T00:10:00Z", labels=APP, owner=JOB, node="n2")
    old_exec = executor("wc-exec-1", ref("Pod", "wc-driver-a", "uid-wc-driver-a"), "1")
    app = one(
        typed_snapshot(
            pods=[first, second, old_exec], nodes=[node("n1", "Unknown"), node("n2")], now=NOW
        )
    )
    shared = next(a for a in app.alerts if a.type == "SharedAppId")
    assert shared.attempts == (1, 2)
    assert "spark-1" in shared.message and "wc-exec-1" in shared.message
    assert "NameCollision" not in types(app)  # the cause is the app id, not a name prefix
    # Each attempt its own app id: nothing shared.
    second["metadata"]["labels"]["spark-app-selector"] = "spark-2"
    app = one(
        typed_snapshot(
            pods=[first, second, old_exec], nodes=[node("n1", "Unknown"), node("n2")], now=NOW
        )
    )
    assert "SharedAppId" not in types(app)


def test_name_collision_says_that_each_409_burns_an_executor_id() -> None:
    first = mk("wc-driver-a", "driver", "2026-03-01T00:00:00Z", labels=APP, owner=JOB, node="n1")
    first["metadata"]["deletionTimestamp"] = "2026-03-01T00:09:00Z"
    second = mk("wc-driver-b", "driver", "2026-03-01T00:10:00Z",
                labels={**APP, "spark-app-selector": "spark-2"}, owner=JOB, node="n2")  # fmt: skip
    old_exec = executor("wc-exec-1", ref("Pod", "wc-driver-a", "uid-wc-driver-a"), "1")
    app = one(
        typed_snapshot(
            pods=[first, second, old_exec], nodes=[node("n1", "Unknown"), node("n2")], now=NOW
        )
    )
    collision = next(a for a in app.alerts if a.type == "NameCollision")
    assert collision.attempts == (1, 2)
    assert "burns an executor id" in collision.message and "unknown losses" in collision.message


def test_force_deleted_pod_on_an_unreachable_node_leaves_a_tombstone_alert() -> None:
    driver = mk("wc-driver-a", "driver", "2026-03-01T00:00:00Z", labels=APP, node="dead")
    gone = kept(driver, "watch", "2026-03-01T00:20:00Z")  # deleted after the node was lost
    ok = [node("n2")]
    app = one(typed_snapshot(pods=[gone], nodes=[node("dead", "Unknown"), *ok], now=NOW))
    tomb = next(a for a in app.alerts if a.type == "ForceDeletedOnLostNode")
    assert tomb.attempts == (1,) and "may still run" in tomb.message
    # Until the node is Ready again, tainted out-of-service, or deleted:
    for nodes in (
        [node("dead"), *ok],
        [
            node(
                "dead",
                "Unknown",
                [{"key": "node.kubernetes.io/out-of-service", "effect": "NoExecute"}],
            ),
            *ok,
        ],
        ok,
    ):
        app = one(typed_snapshot(pods=[gone], nodes=nodes, now=NOW))
        assert "ForceDeletedOnLostNode" not in types(app)
    # A pod seen deleted before its node was lost ended then: no tombstone.
    early = kept(driver, "watch", "2026-03-01T00:01:00Z")
    app = one(typed_snapshot(pods=[early], nodes=[node("dead", "Unknown"), *ok], now=NOW))
    assert "ForceDeletedOnLostNode" not in types(app)


def sparkapp(state: str) -> dict[str, Any]:
    return {
        "apiVersion": "sparkoperator.k8s.io/v1beta2",
        "kind": "SparkApplication",
        "metadata": {"name": "wc", "namespace": "ns", "uid": "sa-1",
                     "creationTimestamp": "2026-03-01T00:00:00Z"},
        "spec": {"restartPolicy": {"type": "Always"}},
        "status": {"applicationState": {"state": state}, "sparkApplicationId": "spark-1"},
    }  # fmt: skip


def test_pending_rerun_behind_a_driver_stuck_terminating_is_replacement_blocked() -> None:
    labels = {**APP, "sparkoperator.k8s.io/app-name": "wc"}
    driver = mk("wc-driver", "driver", "2026-03-01T00:00:00Z", labels=labels, node="dead")
    driver["metadata"]["deletionTimestamp"] = "2026-03-01T00:09:00Z"
    snapshot = typed_snapshot(pods=[driver], sparkapplications=[sparkapp("PENDING_RERUN")],
                        nodes=[node("dead", "Unknown")], now=NOW)  # fmt: skip
    app = one(snapshot)
    blocked = next(a for a in app.alerts if a.type == "ReplacementBlocked")
    assert "PENDING_RERUN" in blocked.message and "--out-of-service" in blocked.message
    assert "ZombieDriver" in types(app)  # and still a zombie


def test_suspended_spark_application_reads_suspended_not_unknown() -> None:
    app = one(typed_snapshot(sparkapplications=[sparkapp("SUSPENDED")], now=NOW))
    assert app.state == "Suspended"


def test_partitioned_drivers_executors_still_serve_it_and_its_attempt_has_no_end() -> None:
    driver = mk("wc-driver-a", "driver", "2026-03-01T00:00:00Z", labels=APP, node="dead")
    driver["metadata"]["deletionTimestamp"] = "2026-03-01T00:09:00Z"
    owner = ref("Pod", "wc-driver-a", "uid-wc-driver-a")
    execs = [executor(f"wc-exec-{i}", owner, str(i)) for i in (1, 2)]
    app = one(
        typed_snapshot(pods=[driver, *execs], nodes=[node("dead", "Unknown"), node("n2")], now=NOW)
    )
    attempt = app.attempts[0]
    assert attempt.state == "Lost" and attempt.ended_at is None
    assert [(e.state, e.reason) for e in attempt.executors] == [("Running", None)] * 2


def test_a_fenced_attempt_force_killed_reads_gone_not_fenced() -> None:
    """Issue 24: after fence and force-kill, a kept copy of the driver still carries the fence
    label; the attempt is gone, not Fenced (the TUI advised fencing it again)."""
    driver = mk("wc-driver-a", "driver", "2026-03-01T00:00:00Z", labels=APP, node="n1")
    driver["metadata"]["labels"]["kubectl-spark.io/fenced"] = "true"
    gone = kept(driver, "watch", "2026-03-01T00:20:00Z")
    app = one(typed_snapshot(pods=[gone], nodes=[node("n1")], now=NOW))
    assert app.attempts[0].state == "Gone"
