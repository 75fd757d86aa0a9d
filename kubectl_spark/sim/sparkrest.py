"""What a simulated driver's UI answers at /api/v1: applications and (all)executors.

Shapes and texts follow Spark (``spark-on-kubernetes.md`` §2.2, §5): ``ExecutorSummary`` with
``isActive``, ``addTime``, ``removeTime`` and ``removeReason``, where ``removeReason`` is the loss
reason's message — the "exited with exit code" text with the API's container statuses, "was
deleted by a user or the framework", or "Executor killed by driver." At most
``spark.ui.retainedDeadExecutors`` dead executors are kept (default 100), oldest dropped first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from kubectl_spark.knowledge.exitcodes import spark_words
from kubectl_spark.knowledge.times import parse


def spark_date(at: str) -> str:
    """An RFC 3339 time as Spark's REST API writes dates: ``2026-12-04T10:01:02.000GMT``.

    JacksonMessageWriter.makeISODateFormat: milliseconds, UTC, a literal GMT.
    """
    parsed = parse(at)
    if parsed is None:
        return at
    return parsed.strftime("%Y-%m-%dT%H:%M:%S.") + f"{parsed.microsecond // 1000:03d}GMT"


KILLED_BY_DRIVER = "Executor killed by driver."
FORBIDDEN_PAGE = (
    b"<html><head><title>Error 403 User null is not authorized to access this page.</title>"
    b"</head><body><h2>HTTP ERROR 403 User null is not authorized to access this page.</h2>"
    b"</body></html>"
)


def deleted_text(exec_id: str) -> str:
    return f"The executor with id {exec_id} was deleted by a user or the framework."


def exited_text(exec_id: str, pod: dict[str, Any]) -> str:
    """Spark's message for a PodFailed or PodSucceeded executor, as Spark 3.x and 4.x write it.

    ExecutorPodsLifecycleManager.exitReasonMessage: a Scala string literal, so the text starts
    with a newline, keeps an empty line for the brief reason and the message the API did not
    give, and ends with the literal's closing indentation; the containers as
    KubernetesUtils.containersDescription formats them (each pair on a new line, tab-indented, N/A for
    an empty value, containers apart by a blank line). Held to real Spark's own words by
    tests/realspark/test_executor_losses.py.
    """
    status = pod.get("status") or {}
    containers = status.get("containerStatuses") or []
    code = -1
    for c in containers:
        terminated = (c.get("state") or {}).get("terminated")
        if terminated:
            code = int(terminated.get("exitCode", -1))
            break
    reason, message = status.get("reason"), status.get("message")
    return (
        f"\nThe executor with id {exec_id} exited with exit code {code}{spark_words(code)}.\n"
        f"{f'The API gave the following brief reason: {reason}' if reason else ''}\n"
        f"{f'The API gave the following message: {message}' if message else ''}\n"
        "\nThe API gave the following container statuses:\n"
        f"\n{containers_description(containers)}\n      "
    )


def containers_description(containers: list[dict[str, Any]]) -> str:
    """KubernetesUtils.containersDescription (Spark 3.0+), pair by pair."""
    bundles = []
    for c in containers:
        state = c.get("state") or {}
        pairs = [("container name", c.get("name")), ("container image", c.get("image"))]
        if "running" in state:
            pairs += [
                ("container state", "running"),
                ("container started at", state["running"].get("startedAt")),
            ]
        elif "terminated" in state:
            ended = state["terminated"]
            pairs += [
                ("container state", "terminated"),
                ("container started at", ended.get("startedAt")),
                ("container finished at", ended.get("finishedAt")),
                ("exit code", str(ended.get("exitCode", ""))),
                ("termination reason", ended.get("reason")),
            ]
        elif "waiting" in state:
            pairs += [
                ("container state", "waiting"),
                ("pending reason", state["waiting"].get("reason")),
            ]
        else:
            pairs.append(("container state", "N/A"))
        bundles.append("".join(f"\n\t {key}: {value or 'N/A'}" for key, value in pairs))
    return "\n\n".join(bundles)


@dataclass
class SparkUI:
    """One driver's status store, as its REST API shows it."""

    app_id: str
    app_name: str
    start_time: str
    retained_dead: int = 100
    executors: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Answers given: a live executor's task counters move with each, as a busy driver's do
    # (ExecutorSummary's completedTasks, totalDuration, memoryUsed… in Spark's api.scala).
    answers: int = 0
    # spark.acls.enable, and whoever asks is not in spark.ui.view.acls: every read is refused
    view_acls: bool = False

    def __post_init__(self) -> None:
        self.start_time = spark_date(self.start_time)

    def added(self, exec_id: str, at: str, host: str = "") -> None:
        at = spark_date(at)
        self.executors[exec_id] = {
            "id": exec_id,
            "hostPort": f"{host}:7079" if host else "",
            "isActive": True,
            "totalCores": 1,
            "maxTasks": 1,
            "addTime": at,
            "resourceProfileId": 0,
        }

    def removed(self, exec_id: str, at: str, reason: str) -> None:
        summary = self.executors.get(exec_id)
        if summary is None or not summary["isActive"]:
            return  # removed at most once (removedExecutorsCache): the first reason stays
        summary.update(isActive=False, removeTime=spark_date(at), removeReason=reason)
        dead = [e for e in self.executors.values() if not e["isActive"]]
        for old in dead[: max(0, len(dead) - self.retained_dead)]:
            del self.executors[old["id"]]

    def _busy(self, summary: dict[str, Any]) -> dict[str, Any]:
        """A live executor's summary with the counters a running task moves."""
        if not summary["isActive"]:
            return summary  # a removed executor's counters stand still
        n = self.answers
        return {
            **summary,
            "activeTasks": n % 2,
            "completedTasks": n,
            "totalTasks": n + n % 2,
            "totalDuration": 1500 * n,
            "memoryUsed": 1024 * 1024 * (n % 7),
        }

    def answer(self, path: str) -> tuple[int, str, bytes]:
        self.answers += 1
        if self.view_acls:
            # spark.acls.enable with a user not in spark.ui.view.acls: HttpSecurityFilter's
            # sendError(403, "User … is not authorized to access this page."), Jetty's page.
            return 403, "text/html", FORBIDDEN_PAGE
        parts = [p for p in path.split("/") if p]
        if parts[:2] != ["api", "v1"] or len(parts) < 3 or parts[2] != "applications":
            return 404, "text/plain", b"Not Found"
        if len(parts) == 3:
            body: Any = [
                {
                    "id": self.app_id,
                    "name": self.app_name,
                    "attempts": [{"startTime": self.start_time, "completed": False}],
                }
            ]
        elif len(parts) == 5 and parts[3] == self.app_id and parts[4] == "allexecutors":
            body = [{"id": "driver", "isActive": True, "addTime": self.start_time}]
            body += [self._busy(e) for e in self.executors.values()]
        elif len(parts) == 5 and parts[3] == self.app_id and parts[4] == "executors":
            body = [{"id": "driver", "isActive": True, "addTime": self.start_time}]
            body += [self._busy(e) for e in self.executors.values() if e["isActive"]]
        else:
            return 404, "text/plain", f"unknown app id {parts[3]}".encode()
        return 200, "application/json", orjson.dumps(body)
