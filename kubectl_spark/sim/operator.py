"""The spark-operator's controller, as kubeflow/spark-operator runs a SparkApplication: submit, watch the driver, rerun by restartPolicy, report status and Events."""

from __future__ import annotations

import hashlib
import uuid
from typing import TYPE_CHECKING, Any

from . import objects
from .client import pod, pods, reconcile_each, sparkapps
from .spark import SparkDrivers
from .sparkapp import AppConfig, driver_pod

if TYPE_CHECKING:
    from .world import World


class SparkOperator:
    """The Kubeflow spark-operator's controller loop for SparkApplications (v1beta2)."""

    def __init__(self, world: World, drivers: SparkDrivers) -> None:
        self.world = world
        self.drivers = drivers
        self.templates: dict[tuple[str, str], AppConfig] = {}
        self.specs: dict[str, str] = {}  # app uid → the spec (less suspend) last acted on

    def tick(self) -> None:
        reconcile_each(
            self.world.client, "/apis/sparkoperator.k8s.io/v1beta2/sparkapplications", self._sync
        )

    def _config(self, app: dict[str, Any]) -> AppConfig:
        key = (app["metadata"]["namespace"], app["metadata"]["name"])
        template = self.templates.get(key)
        if template is None:
            template = AppConfig(
                app["metadata"]["name"],
                app["metadata"]["namespace"],
                launch="operator",
                executors=int(
                    ((app.get("spec") or {}).get("executor") or {}).get("instances") or 1
                ),
            )
            self.templates[key] = template
        return template

    def _status(self, app: dict[str, Any], status: dict[str, Any]) -> None:
        ns, name = app["metadata"]["namespace"], app["metadata"]["name"]
        self.world.client.patch(f"{sparkapps(ns)}/{name}/status", {"status": status})

    def _sync(self, app: dict[str, Any]) -> None:
        client = self.world.client
        ns, name = app["metadata"]["namespace"], app["metadata"]["name"]
        status = app.get("status") or {}
        state = (status.get("applicationState") or {}).get("state", "")
        driver_name = f"{name}-driver"
        # The spec as the operator compares it: without suspend and timeToLiveSeconds, which
        # change without invalidating the run (event_filter.go).
        spec = {
            k: v
            for k, v in (app.get("spec") or {}).items()
            if k not in ("suspend", "timeToLiveSeconds")
        }
        key = hashlib.sha256(repr(sorted(spec.items())).encode()).hexdigest()
        seen = self.specs.setdefault(app["metadata"]["uid"], key)
        if key != seen:
            # A changed spec invalidates the current run: the operator deletes its resources and
            # submits anew with fresh counters (INVALIDATING).
            self.specs[app["metadata"]["uid"]] = key
            old = client.get(pod(ns, driver_name))
            if old is not None:
                client.delete(pod(ns, driver_name), uid=old["metadata"]["uid"], grace=0)
            self._status(
                app,
                {
                    "applicationState": {"state": "INVALIDATING"},
                    "executionAttempts": 0,
                    "submissionAttempts": 0,
                    "sparkApplicationId": None,
                    "driverInfo": None,
                    "executorState": None,
                    "terminationTime": None,
                },
            )
            return
        if self._suspension(app, state, driver_name):
            return
        if state == "INVALIDATING":
            state = ""
        stamp = self.world.now_text()
        if state in ("", "PENDING_RERUN"):
            if client.get(pod(ns, driver_name)) is not None:
                return  # the previous driver is still going away
            if state == "PENDING_RERUN":
                interval = float(
                    (app["spec"].get("restartPolicy") or {}).get("onFailureRetryInterval", 5)
                )
                last = status.get("lastSubmissionAttemptTime")
                if (
                    last
                    and (self.world.clock.now() - objects_time(last)).total_seconds() < interval
                ):
                    return
            self._submit(app, status, driver_name)
            return
        driver = client.get(pod(ns, driver_name))
        if state in ("SUBMITTED", "RUNNING"):
            self._follow_driver(app, state, driver, driver_name, stamp)
        elif state == "SUCCEEDING":
            self._status(
                app, {"applicationState": {"state": "COMPLETED"}, "terminationTime": stamp}
            )
            self.world.events.event(
                app,
                "SparkApplicationCompleted",
                f"SparkApplication {name} completed",
                component="spark-operator",
            )
        elif state == "FAILING":
            self._failing(app, status, driver, driver_name)

    def _suspension(self, app: dict[str, Any], state: str, driver_name: str) -> bool:
        """spec.suspend, as controller.go runs it; True when this tick was about it.

        Any state but COMPLETED, FAILED and SUSPENDED goes SUSPENDING; then the driver is
        deleted and the state is SUSPENDED (app id, driver and executor state cleared, the
        attempt counters kept); once suspend is false and the driver gone, RESUMING, then a new
        submission.
        """
        client = self.world.client
        ns, name = app["metadata"]["namespace"], app["metadata"]["name"]
        suspend = bool((app.get("spec") or {}).get("suspend"))
        if suspend and state not in ("COMPLETED", "FAILED", "SUSPENDED", "SUSPENDING"):
            self._status(app, {"applicationState": {"state": "SUSPENDING"}})
            self.world.events.event(
                app, "SparkApplicationSuspending", f"SparkApplication {name} is suspending",
                component="spark-operator",
            )  # fmt: skip
            return True
        driver = client.get(pod(ns, driver_name))
        if state == "SUSPENDING":
            if driver is not None:
                client.delete(pod(ns, driver_name), uid=driver["metadata"]["uid"])
            self._status(
                app,
                {
                    "applicationState": {"state": "SUSPENDED"},
                    "sparkApplicationId": None,
                    "driverInfo": None,
                    "executorState": None,
                },
            )
            self.world.events.event(
                app, "SparkApplicationSuspended", f"SparkApplication {name} is suspended",
                component="spark-operator",
            )  # fmt: skip
            return True
        if state == "SUSPENDED":
            if driver is None and not suspend:
                self._status(app, {"applicationState": {"state": "RESUMING"}})
                self.world.events.event(
                    app, "SparkApplicationResuming", f"SparkApplication {name} is resuming",
                    component="spark-operator",
                )  # fmt: skip
            return True
        if state == "RESUMING":
            self._submit(app, app.get("status") or {}, driver_name)
            return True
        return False

    def _follow_driver(
        self,
        app: dict[str, Any],
        state: str,
        driver: dict[str, Any] | None,
        driver_name: str,
        stamp: str,
    ) -> None:
        """SUBMITTED or RUNNING: the driver pod's phase moves the application on."""
        if driver is None:
            self._status(
                app,
                {
                    "applicationState": {
                        "state": "FAILING",
                        "errorMessage": "driver pod not found",
                    }
                },
            )
            self.world.events.event(
                app,
                "SparkDriverNotFound",
                f"Driver {driver_name} not found",
                type_="Warning",
                component="spark-operator",
            )
            return
        phase = objects.phase(driver)
        if phase == "Running" and state == "SUBMITTED":
            self._status(app, {"applicationState": {"state": "RUNNING"}})
            self.world.events.event(
                app,
                "SparkDriverRunning",
                f"Driver {driver_name} is running",
                component="spark-operator",
            )
        elif phase == "Succeeded":
            self._status(app, {"applicationState": {"state": "SUCCEEDING"}})
        elif phase == "Failed":
            term = next(
                (
                    ((s.get("state") or {}).get("terminated") or {})
                    for s in (driver.get("status") or {}).get("containerStatuses") or []
                ),
                {},
            )
            message = f"driver container failed with ExitCode: {term.get('exitCode')}, Reason: {term.get('reason')}"
            self._status(
                app,
                {
                    "applicationState": {"state": "FAILING", "errorMessage": message},
                    "terminationTime": stamp,
                },
            )
            self.world.events.event(
                app,
                "SparkDriverFailed",
                f"Driver {driver_name} failed",
                type_="Warning",
                component="spark-operator",
            )
        self._executor_state(app)
        return

    def _failing(
        self,
        app: dict[str, Any],
        status: dict[str, Any],
        driver: dict[str, Any] | None,
        driver_name: str,
    ) -> None:
        """FAILING: rerun by the restartPolicy (after deleting the old driver), or FAILED."""
        client = self.world.client
        ns, name = app["metadata"]["namespace"], app["metadata"]["name"]
        policy = app["spec"].get("restartPolicy") or {}
        attempts = int(status.get("executionAttempts") or 0)
        retry = policy.get("type") == "Always" or (
            policy.get("type") == "OnFailure"
            and policy.get("onFailureRetries") is not None
            and attempts <= int(policy["onFailureRetries"])
        )
        if retry:
            if driver is not None:
                client.delete(pod(ns, driver_name), uid=driver["metadata"]["uid"], grace=0)
            self._status(
                app,
                {
                    "applicationState": {"state": "PENDING_RERUN", "errorMessage": ""},
                    "sparkApplicationId": None,
                    "driverInfo": None,
                    "executorState": None,
                    "terminationTime": None,
                },
            )
            self.world.events.event(
                app,
                "SparkApplicationPendingRerun",
                f"SparkApplication {name} is pending rerun",
                type_="Warning",
                component="spark-operator",
            )
        else:
            error = (status.get("applicationState") or {}).get("errorMessage", "")
            self._status(app, {"applicationState": {"state": "FAILED", "errorMessage": error}})
            self.world.events.event(
                app,
                "SparkApplicationFailed",
                f"SparkApplication {name} failed: {error}",
                type_="Warning",
                component="spark-operator",
            )

    def _submit(self, app: dict[str, Any], status: dict[str, Any], driver_name: str) -> None:
        ns, name = app["metadata"]["namespace"], app["metadata"]["name"]
        template = self._config(app)
        submission = str(
            uuid.UUID(
                hashlib.sha256(
                    f"{app['metadata']['uid']}/{status.get('submissionAttempts', 0)}".encode()
                ).hexdigest()[:32]
            )
        )
        config = AppConfig(
            **{**template.__dict__, "app_id": "spark-" + submission.replace("-", "")}
        )
        self.drivers.register(config)
        labels = {
            "sparkoperator.k8s.io/app-name": name,
            "sparkoperator.k8s.io/launched-by-spark-operator": "true",
            "sparkoperator.k8s.io/submission-id": submission,
        }
        body = driver_pod(config, name=driver_name, extra_labels=labels)
        body["metadata"]["ownerReferences"] = [objects.owner_ref(app)]
        prefix = (app["spec"].get("sparkConf") or {}).get("spark.kubernetes.executor.podNamePrefix")
        if prefix:  # the operator passes sparkConf to spark-submit as --conf
            container = body["spec"]["containers"][0]
            container["args"] = [
                container["args"][0],
                "--conf",
                f"spark.kubernetes.executor.podNamePrefix={prefix}",
                *container["args"][1:],
            ]
        self.world.client.create(pods(ns), body)
        stamp = self.world.now_text()
        self._status(
            app,
            {
                "submissionID": submission,
                "sparkApplicationId": config.app_id,
                "lastSubmissionAttemptTime": stamp,
                "submissionAttempts": int(status.get("submissionAttempts") or 0) + 1,
                "executionAttempts": int(status.get("executionAttempts") or 0) + 1,
                "applicationState": {"state": "SUBMITTED"},
                "driverInfo": {
                    "podName": driver_name,
                    "webUIPort": 4040,
                    "webUIServiceName": f"{name}-ui-svc",
                },
            },
        )
        self.world.events.event(
            app,
            "SparkApplicationSubmitted",
            f"SparkApplication {name} was submitted successfully",
            component="spark-operator",
        )

    def _executor_state(self, app: dict[str, Any]) -> None:
        ns, name = app["metadata"]["namespace"], app["metadata"]["name"]
        submission = (app.get("status") or {}).get("submissionID")
        if not submission:
            return
        mapping = {
            "Pending": "PENDING",
            "Running": "RUNNING",
            "Succeeded": "COMPLETED",
            "Failed": "FAILED",
        }
        execs = self.world.client.list(
            pods(ns),
            labelSelector=f"sparkoperator.k8s.io/app-name={name},sparkoperator.k8s.io/submission-id={submission},spark-role=executor",
        )
        states = {p["metadata"]["name"]: mapping.get(objects.phase(p), "UNKNOWN") for p in execs}
        if states and states != (app.get("status") or {}).get("executorState"):
            self._status(app, {"executorState": states})


def objects_time(value: str) -> Any:
    from kubectl_spark.knowledge.times import parse_time

    return parse_time(value)
