"""The simulated driver's REST API: Spark's shapes, texts, and spark.ui.retainedDeadExecutors."""

from __future__ import annotations

import orjson

from kubectl_spark.sim.sparkrest import KILLED_BY_DRIVER, SparkUI, deleted_text


def test_dead_executors_beyond_the_retained_count_are_dropped_oldest_first() -> None:
    ui = SparkUI("spark-1", "app", "2026-03-01T00:00:00Z", retained_dead=100)
    for i in range(1, 131):
        ui.added(str(i), "2026-03-01T00:00:01Z")
        ui.removed(str(i), "2026-03-01T00:00:02Z", deleted_text(str(i)))
    ui.added("131", "2026-03-01T00:00:03Z")
    status, kind, body = ui.answer("/api/v1/applications/spark-1/allexecutors")
    executors = orjson.loads(body)
    assert (status, kind) == (200, "application/json")
    dead = [e["id"] for e in executors if not e["isActive"]]
    assert dead == [str(i) for i in range(31, 131)]
    assert [e["id"] for e in executors if e["isActive"]] == ["driver", "131"]
    assert (
        executors[1]["removeReason"]
        == "The executor with id 31 was deleted by a user or the framework."
    )


def test_an_executor_is_removed_once_and_the_first_reason_stays() -> None:
    ui = SparkUI("spark-1", "app", "t0")
    ui.added("1", "t1")
    ui.removed("1", "t2", KILLED_BY_DRIVER)
    ui.removed("1", "t3", deleted_text("1"))  # the later DELETED event does not replace it
    [_, one] = orjson.loads(ui.answer("/api/v1/applications/spark-1/allexecutors")[2])
    assert (one["removeReason"], one["removeTime"]) == ("Executor killed by driver.", "t2")
    assert ui.answer("/api/v1/applications/other/allexecutors")[0] == 404
    assert orjson.loads(ui.answer("/api/v1/applications")[2])[0]["id"] == "spark-1"
