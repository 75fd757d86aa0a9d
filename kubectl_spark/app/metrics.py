"""The recorder's Prometheus metrics: losses by reason, alerts, attempts, its own health.

What no other Spark tool exports: a loss counted with the reason code and whose fault it was
(``category``), and Spark's two counters as labels; the alerts (SplitBrain, ZombieDriver …) as
gauges an alert rule can fire on (``docs/recorder.md`` has rules). Counters count each loss
once, by pod (or attempt) and reason, for the life of the process: Prometheus reads a restart
as a counter reset. Only the leader counts; a standby exports its health alone.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge

from kubectl_spark.core.alerts import NOT_LOSSES
from kubectl_spark.core.model import Analysis, Reason

LOSS_LABELS = (
    "namespace",
    "app",
    "code",
    "category",
    "counts_as_failure",
    "counts_toward_max_failures",
)


def _flag(value: bool) -> str:
    return "true" if value else "false"


class RecorderMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.executor_losses = Counter(
            "kubectl_spark_executor_losses", "Executors lost, by reason and whose fault.",
            LOSS_LABELS, registry=r,
        )  # fmt: skip
        self.driver_losses = Counter(
            "kubectl_spark_driver_attempt_losses", "Driver attempts lost or failed, by reason.",
            LOSS_LABELS, registry=r,
        )  # fmt: skip
        self.alerts = Gauge(
            "kubectl_spark_alerts", "Current alerts, by type (1 while raised).",
            ("namespace", "app", "type"), registry=r,
        )  # fmt: skip
        self.attempts = Gauge(
            "kubectl_spark_attempts", "Driver attempts of an application.",
            ("namespace", "app", "state"), registry=r,
        )  # fmt: skip
        self.app_state = Gauge(
            "kubectl_spark_app_state", "1 for an application's state now (ls's STATE).",
            ("namespace", "app", "source", "state"), registry=r,
        )  # fmt: skip
        self.leader = Gauge(
            "kubectl_spark_recorder_leader", "1 while this recorder records.", registry=r
        )
        self.watch_restarts = Counter(
            "kubectl_spark_recorder_watch_restarts", "Lists made again after a lost watch.", registry=r
        )  # fmt: skip
        self.store_bytes = Gauge(
            "kubectl_spark_recorder_store_bytes", "The store's size.", registry=r
        )
        self.last_event_age = Gauge(
            "kubectl_spark_recorder_last_event_age_seconds",
            "Seconds since the last watch event arrived.", registry=r,
        )  # fmt: skip
        self._counted: set[tuple[str, str]] = set()
        self._alerts_seen: set[tuple[str, str, str]] = set()
        self._lists = 0
        self._lock = threading.Lock()

    def update(self, analysis: Analysis) -> None:
        """Count new losses; set the alerts and attempts to what the analysis says now."""
        with self._lock:
            raised = {
                (a.namespace, a.name, alert.type) for a in analysis.apps for alert in a.alerts
            }
            # A cleared alert reads 0 (its series kept): "at 1, then 0", as rules expect.
            for labels in self._alerts_seen | raised:
                self.alerts.labels(*labels).set(1 if labels in raised else 0)
            self._alerts_seen |= raised
            self.attempts.clear()
            self.app_state.clear()
            for app in analysis.apps:
                self.app_state.labels(app.namespace, app.name, app.source, app.state).set(1)
                states: dict[str, int] = {}
                for attempt in app.attempts:
                    states[attempt.state] = states.get(attempt.state, 0) + 1
                    key = f"attempt:{app.namespace}/{app.name}/{attempt.uid or attempt.number}"
                    self._count(self.driver_losses, app.namespace, app.name, key, attempt.reason)
                    for executor in attempt.executors:
                        key = f"executor:{executor.uid or f'{attempt.uid}/{executor.id}'}"
                        self._count(
                            self.executor_losses, app.namespace, app.name, key, executor.reason
                        )
                for state, count in states.items():
                    self.attempts.labels(app.namespace, app.name, state).set(count)

    def _count(
        self, counter: Counter, namespace: str, app: str, key: str, reason: Reason | None
    ) -> None:
        if reason is None or (key, reason.code) in self._counted:
            return
        if reason.code in NOT_LOSSES:
            return  # not a loss: the driver's own decision, a person's, or its end
        self._counted.add((key, reason.code))
        counter.labels(
            namespace, app, reason.code, reason.category, _flag(reason.counts_as_failure),
            _flag(reason.counts_toward_max_failures),
        ).inc()  # fmt: skip

    def health(
        self, *, leading: bool, store_bytes: int, last_event_age: float | None, lists: int
    ) -> None:
        """``lists``: how many lists the watches made; past the first of each, a watch was lost."""
        self.leader.set(1 if leading else 0)
        if lists > self._lists:
            self.watch_restarts.inc(lists - self._lists)
            self._lists = lists
        self.store_bytes.set(store_bytes)
        if last_event_age is not None:
            self.last_event_age.set(last_event_age)

    def lines(self) -> Iterable[Any]:
        from prometheus_client import generate_latest

        return generate_latest(self.registry).decode().splitlines()
