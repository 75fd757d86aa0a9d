"""The Apache Spark Kubernetes Operator's controller, as apache/spark-kubernetes-operator runs a SparkApplication.

Played from its sources (spark-operator/…/reconciler/reconcilesteps and observers;
spark-operator-api/…/status): one state transition per reconcile, appended to
``status.stateTransitionHistory``; AppInitStep creates the driver pod ``<appId>-driver`` with
app id ``<name>-<attemptId>`` once the restart backoff has passed; the observers move
DriverRequested → DriverStarted → DriverReady → RunningHealthy and end an attempt on the
driver's exit, eviction or disappearance, or on a timeout (AppDriverTimeoutObserver);
AppCleanUpStep deletes the driver (foreground; with grace 0 once the stopping state is older
than ``forceTerminationGracePeriodMillis``) and then ``terminateOrRestart`` decides by the
restart policy and its counters. What it does not play: SparkClusters, ingresses, config maps,
executor thresholds (``instanceConfig``), resource retention.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from kubectl_spark.knowledge.operator_names import app_id_of
from kubectl_spark.knowledge.times import parse_time

from . import objects
from .client import SimApiError, pod, pods, reconcile_each
from .spark import SparkDrivers
from .sparkapp import AppConfig, driver_pod

if TYPE_CHECKING:
    from .world import World

API = "/apis/spark.apache.org/v1"
INFRASTRUCTURE = ("DriverStartTimedOut", "ExecutorsStartTimedOut", "SchedulingFailure")
FAILURES = (*INFRASTRUCTURE, "DriverEvicted", "Failed", "DriverReadyTimedOut")
RUNNING = ("DriverReady", "InitializedBelowThresholdExecutors", "RunningHealthy")
# Constants.java's messages, as the operator writes them.
MESSAGES = {
    "Submitted": "Spark application has been created on Kubernetes Cluster.",
    "DriverRequested": "Requested driver from resource scheduler.",
    "DriverStarted": "Driver has started running.",
    "DriverReady": "Driver has reached ready state.",
    "RunningHealthy": "Application is running healthy.",
    "DriverStartTimedOut": "The driver has not responded to the initial health check request "
    "within the allotted start-up time. This can be configured by setting "
    ".spec.applicationTolerations.applicationTimeoutConfig.",
    "DriverReadyTimedOut": "The driver has not responded to the initial health check request "
    "within the allotted start-up time. This can be configured by setting "
    ".spec.applicationTolerations.applicationTimeoutConfig.",
    "Failed": "Driver has one or more failed critical container(s), refer last observed status "
    "for details.",
    "Removed": "Driver removed. This could caused by 'exit' called in driver process with "
    "non-zero code, involuntary disruptions or unintentional destroy behavior, check "
    "Kubernetes events for more details.",
    "Succeeded": "Driver has critical container(s) exited with 0.",
}
DEFAULT_MILLIS = {  # ApplicationTimeoutConfig.java and RestartConfig.java
    "driverStartTimeoutMillis": 300_000,
    "driverReadyTimeoutMillis": 300_000,
    "executorStartTimeoutMillis": 300_000,
    "forceTerminationGracePeriodMillis": 300_000,
    "restartBackoffMillis": 30_000,
}


def sparkapps(namespace: str) -> str:
    return f"{API}/namespaces/{namespace}/sparkapplications"


class ApacheOperator:
    """The reconcile loop of the Apache operator's SparkApplications (spark.apache.org/v1)."""

    def __init__(self, world: World, drivers: SparkDrivers) -> None:
        self.world = world
        self.drivers = drivers
        self.templates: dict[tuple[str, str], AppConfig] = {}

    def tick(self) -> None:
        reconcile_each(self.world.client, f"{API}/sparkapplications", self._reconcile)

    # ----------------------------------------------------------------------------- status
    def _now(self) -> datetime:
        return self.world.clock.now()

    def _append(
        self,
        app: dict[str, Any],
        summary: str,
        message: str | None = None,
        *,
        driver_status: dict[str, Any] | None = None,
        **more: Any,
    ) -> None:
        """ApplicationStatus.appendNewState: the new state, also under the next history key."""
        status = dict(app.get("status") or {})
        state: dict[str, Any] = {
            "currentStateSummary": summary,
            "lastTransitionTime": self.world.now_text(),
            "message": MESSAGES.get(summary, "") if message is None else message,
        }
        if driver_status is not None:
            state["lastObservedDriverStatus"] = driver_status
        history = dict(status.get("stateTransitionHistory") or {})
        key = max((int(k) for k in history), default=-1) + 1
        history[str(key)] = state
        status.update(currentState=state, stateTransitionHistory=history, **more)
        ns, name = app["metadata"]["namespace"], app["metadata"]["name"]
        self.world.client.request(
            "PUT", f"{sparkapps(ns)}/{name}/status", {**app, "status": status}
        )

    @staticmethod
    def _millis(app: dict[str, Any], key: str) -> float:
        tolerations = (app.get("spec") or {}).get("applicationTolerations") or {}
        where = "restartConfig" if key.startswith("restart") else "applicationTimeoutConfig"
        value = (tolerations.get(where) or {}).get(key)
        return float(DEFAULT_MILLIS[key] if value is None else value)

    def _since(self, state: dict[str, Any]) -> float:
        return (self._now() - parse_time(state["lastTransitionTime"])).total_seconds() * 1000

    # ---------------------------------------------------------------------------- reconcile
    def _reconcile(self, app: dict[str, Any]) -> None:
        status = app.get("status") or {}
        current = status.get("currentState") or {}
        summary = current.get("currentStateSummary")
        if summary is None:
            info = {"id": 0, "restartCounter": 0, "failureRestartCounter": 0,
                    "schedulingFailureRestartCounter": 0}  # fmt: skip
            self._append(app, "Submitted", currentAttemptSummary={"attemptInfo": info})
            return
        driver = self._driver(app)
        if summary in ("Submitted", "ScheduledToRestart"):
            self._init(app, status, current)
        elif summary == "DriverRequested":
            if not self._ended(app, driver):
                if driver is not None and _started(driver):
                    self._append(app, "DriverStarted")
                elif self._since(current) > self._millis(app, "driverStartTimeoutMillis"):
                    self._append(app, "DriverStartTimedOut")
        elif summary == "DriverStarted":
            if not self._ended(app, driver):
                if driver is not None and _ready(driver):
                    self._append(app, "DriverReady")
                elif self._since(current) > self._millis(app, "driverReadyTimeoutMillis"):
                    self._append(app, "DriverReadyTimedOut")
        elif summary in RUNNING:
            if not self._ended(app, driver) and summary != "RunningHealthy":
                self._append(app, "RunningHealthy")
        elif summary in (*FAILURES, "Succeeded"):
            self._clean_up(app, status, current, driver)

    def _driver(self, app: dict[str, Any]) -> dict[str, Any] | None:
        return self.world.client.get(pod(app["metadata"]["namespace"], f"{_app_id(app)}-driver"))

    def _ended(self, app: dict[str, Any], driver: dict[str, Any] | None) -> bool:
        """BaseAppDriverObserver.observeDriverTermination, and a driver that vanished."""
        if driver is None:
            self._append(app, "Failed", MESSAGES["Removed"])
            return True
        status = driver.get("status") or {}
        phase = objects.phase(driver)
        if phase == "Failed":
            evicted = str(status.get("reason") or "").lower() == "evicted"
            self._append(
                app, "DriverEvicted" if evicted else "Failed", MESSAGES["Failed"],
                driver_status=status,
            )  # fmt: skip
            return True
        terminated: list[dict[str, Any]] = [
            term
            for s in status.get("containerStatuses") or []
            if (term := (s.get("state") or {}).get("terminated"))
        ]
        if phase == "Succeeded" or (terminated and all(t.get("exitCode") == 0 for t in terminated)):
            self._append(app, "Succeeded", driver_status=status)
            return True
        if terminated:
            self._append(app, "Failed", MESSAGES["Failed"], driver_status=status)
            return True
        return False

    def _init(self, app: dict[str, Any], status: dict[str, Any], current: dict[str, Any]) -> None:
        """AppInitStep: after the backoff of the state that ended the last attempt, a driver."""
        if status.get("previousAttemptSummary") is not None:
            history = status.get("stateTransitionHistory") or {}
            keys = sorted(int(k) for k in history)
            before = history[str(keys[-2])] if len(keys) > 1 else current
            backoff = self._millis(app, "restartBackoffMillis")
            failure = before.get("currentStateSummary") in FAILURES
            for_failure = (
                ((app.get("spec") or {}).get("applicationTolerations") or {}).get("restartConfig")
                or {}
            ).get("restartBackoffMillisForFailure")
            if failure and for_failure is not None:
                backoff = float(for_failure)
            if self._since(current) < backoff:
                return
        ns, name = app["metadata"]["namespace"], app["metadata"]["name"]
        app_id = _app_id(app)
        template = self._template(app)
        config = AppConfig(**{**template.__dict__, "app_id": app_id, "executor_prefix": app_id})
        self.drivers.register(config)
        labels = {
            "spark.operator/name": "spark-kubernetes-operator",
            "spark.operator/spark-app-name": name,
        }
        body = driver_pod(config, name=f"{app_id}-driver", extra_labels=labels)
        body["metadata"]["ownerReferences"] = [objects.owner_ref(app)]
        try:
            self.world.client.create(pods(ns), body)
        except SimApiError as err:
            if err.status != 409:
                self._append(app, "SchedulingFailure", "Failed to request driver from "
                             f"scheduler backend. StackTrace: {err}")  # fmt: skip
                return
        self._append(app, "DriverRequested")

    def _template(self, app: dict[str, Any]) -> AppConfig:
        key = (app["metadata"]["namespace"], app["metadata"]["name"])
        found = self.templates.get(key)
        if found is None:
            conf = (app.get("spec") or {}).get("sparkConf") or {}
            found = self.templates[key] = AppConfig(
                key[1], key[0], launch="apache",
                executors=int(conf.get("spark.executor.instances") or 1),
            )  # fmt: skip
        return found

    def _clean_up(
        self,
        app: dict[str, Any],
        status: dict[str, Any],
        current: dict[str, Any],
        driver: dict[str, Any] | None,
    ) -> None:
        """AppCleanUpStep: release the driver, then terminate or restart.

        The delete is foreground and waits for the pod to go; a driver that does not (its node
        unreachable: no kubelet confirms) holds the attempt in its stopping state until that
        state is ``forceTerminationGracePeriodMillis`` old, when the delete is made with grace 0:
        the pod leaves the API whether or not its JVM stopped.
        """
        if driver is not None:
            ns = app["metadata"]["namespace"]
            name = driver["metadata"]["name"]
            uid = driver["metadata"]["uid"]
            force = self._since(current) > self._millis(app, "forceTerminationGracePeriodMillis")
            if force:
                self.world.client.delete(pod(ns, name), uid=uid, grace=0)
            elif not objects.deleting(driver):
                self.world.client.delete(pod(ns, name), uid=uid, propagation="Foreground")
            if not force or self.world.client.get(pod(ns, name)) is not None:
                return  # the foreground delete waits: the next reconcile asks again
        self._terminate_or_restart(app, status, current)

    def _terminate_or_restart(
        self, app: dict[str, Any], status: dict[str, Any], current: dict[str, Any]
    ) -> None:
        """ApplicationStatus.terminateOrRestart (non-trim mode), by the restart policy."""
        summary = current.get("currentStateSummary")
        config = ((app.get("spec") or {}).get("applicationTolerations") or {}).get(
            "restartConfig"
        ) or {}
        policy = config.get("restartPolicy") or "Never"
        restart = {
            "Always": True,
            "Never": False,
            "OnFailure": summary in FAILURES,
            "OnInfrastructureFailure": summary in INFRASTRUCTURE,
        }.get(policy, False)
        info = dict(((status.get("currentAttemptSummary") or {}).get("attemptInfo")) or {})
        if restart:
            failed = summary in FAILURES
            scheduling = summary == "SchedulingFailure"
            following = {
                "id": int(info.get("id") or 0) + 1,
                "restartCounter": int(info.get("restartCounter") or 0) + 1,
                "failureRestartCounter": int(info.get("failureRestartCounter") or 0) + 1
                if failed
                else 0,
                "schedulingFailureRestartCounter": int(
                    info.get("schedulingFailureRestartCounter") or 0
                )
                + 1
                if scheduling
                else 0,
            }
            limit = config.get("maxRestartAttempts")
            if following["restartCounter"] <= (3 if limit is None else int(limit)):
                self._append(
                    app,
                    "ScheduledToRestart",
                    "",
                    previousAttemptSummary=status.get("currentAttemptSummary"),
                    currentAttemptSummary={"attemptInfo": following},
                )
                return
            message = (
                f"The maximum number of restart attempts ({3 if limit is None else limit}) "
                "has been exceeded."
            )
            self._append(app, "ResourceReleased", message)
            return
        self._append(app, "ResourceReleased", "")


def _app_id(app: dict[str, Any]) -> str:
    """SparkAppSubmissionWorker.generateSparkAppId: ``<name>-<attemptId>``, hashed if long."""
    info = (((app.get("status") or {}).get("currentAttemptSummary") or {}).get("attemptInfo")) or {}
    meta = app["metadata"]
    return app_id_of(meta.get("namespace", ""), meta["name"], int(info.get("id") or 0))


def _started(driver: dict[str, Any]) -> bool:
    """PodUtils.isDriverPodStarted: its (only, or Spark's) container is ready."""
    statuses = (driver.get("status") or {}).get("containerStatuses") or []
    return objects.phase(driver) == "Running" and any(s.get("ready") for s in statuses)


def _ready(driver: dict[str, Any]) -> bool:
    ready = objects.condition(driver, "Ready")
    return (
        objects.phase(driver) == "Running" and ready is not None and ready.get("status") == "True"
    )
