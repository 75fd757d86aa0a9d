"""Spark on Kubernetes as the cluster sees it: drivers that create executors, and launchers (the application and its pods: sparkapp.py).

A driver pod, once Running, creates its ConfigMap and headless Service (owned by the driver
pod), then executor pods ``<prefix>-exec-<id>`` with Spark's labels and a controller owner
reference to the driver pod; it replaces lost executors with new ids, deletes (or marks
``spark-exec-inactive``) failed ones, and deletes its executors when it finishes. The prefix is
fresh per driver JVM (Spark 3.x) or fixed across attempts (``podNamePrefix``: collisions, S7).
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import TYPE_CHECKING, Any

from kubectl_spark.knowledge import labels as spark_labels

from . import objects
from .client import SimApiError, jobs, pod, pods, sparkapps
from .deployment_allocator import drive_deployment
from .sparkapp import (
    IMAGE,
    SPARK_VERSION,
    AppConfig,
    DriverState,
    app_id_of,
    configured_prefix,
    driver_pod,
    executor_pod,
    resource_prefix,
)
from .sparkrest import KILLED_BY_DRIVER, SparkUI, deleted_text, exited_text

if TYPE_CHECKING:
    from .world import World

# Spark handles executor pod changes in batches (ExecutorPodsSnapshotsStoreImpl, every
# spark.kubernetes.executor.eventProcessingInterval, 1 s by default): a failed executor's pod
# is deleted up to a second after its end, the window in which a watcher (record, the TUI)
# reads its log.
EVENT_PROCESSING_SECONDS = 1.0


class SparkDrivers:
    def __init__(self, world: World) -> None:
        self.world = world
        self.apps: dict[str, AppConfig] = {}  # app id → config
        self.drivers: dict[str, DriverState] = {}
        # Every driver's status store by app id, kept after the driver is gone: what a Spark
        # History Server would serve from the event logs (sim/historyserver.py).
        self.uis: dict[str, SparkUI] = {}

    def register(self, app: AppConfig) -> None:
        self.apps[app.app_id] = app

    # ------------------------------------------------------------------------- launchers
    def submit(self, app: AppConfig) -> dict[str, Any]:
        """Launch as spark-submit (cluster mode), a driver Job, or a SparkApplication."""
        self.register(app)
        client = self.world.client
        if app.launch == "operator":
            body = {
                "apiVersion": "sparkoperator.k8s.io/v1beta2",
                "kind": "SparkApplication",
                "metadata": {"name": app.name, "namespace": app.namespace},
                "spec": {
                    "type": "Scala",
                    "mode": "cluster",
                    "image": IMAGE,
                    "sparkVersion": SPARK_VERSION,
                    "mainClass": "org.apache.spark.examples.SparkPi",
                    "restartPolicy": app.restart_policy,
                    "driver": {"memory": app.driver_memory},
                    "executor": {"instances": app.executors, "memory": app.executor_memory},
                },
            }
            created: dict[str, Any] = client.create(sparkapps(app.namespace), body)
            return created
        if app.launch == "apache":
            apache_app = {
                "apiVersion": "spark.apache.org/v1",
                "kind": "SparkApplication",
                "metadata": {"name": app.name, "namespace": app.namespace},
                "spec": {
                    "mainClass": "org.apache.spark.examples.SparkPi",
                    "jars": "local:///opt/spark/examples/jars/spark-examples.jar",
                    "runtimeVersions": {"sparkVersion": SPARK_VERSION},
                    "sparkConf": {"spark.executor.instances": str(app.executors)},
                    "applicationTolerations": app.apache_tolerations,
                },
            }
            made: dict[str, Any] = client.create(
                f"/apis/spark.apache.org/v1/namespaces/{app.namespace}/sparkapplications",
                apache_app,
            )
            return made
        if app.launch == "job":
            stamp = int(self.world.clock.now().timestamp() * 1000)
            template = driver_pod(app)
            job_spec: dict[str, Any] = {
                "backoffLimit": app.backoff_limit,
                "template": {"metadata": template["metadata"], "spec": template["spec"]},
            }
            if app.pod_replacement_policy:
                job_spec["podReplacementPolicy"] = app.pod_replacement_policy
            if app.pod_failure_policy:
                job_spec["podFailurePolicy"] = app.pod_failure_policy
            body = {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": f"{app.name}-{stamp}-driver"},
                "spec": job_spec,
            }
            return client.create(jobs(app.namespace), body)
        prefix = resource_prefix(app.name, app.app_id)
        return client.create(pods(app.namespace), driver_pod(app, name=f"{prefix}-driver"))

    # ----------------------------------------------------------------------------- ticks
    def tick(self) -> None:
        client = self.world.client
        drivers = client.list("/api/v1/pods", labelSelector="spark-role=driver")
        live = {d["metadata"]["uid"] for d in drivers}
        for uid in list(self.drivers):
            if uid not in live:
                del self.drivers[uid]
        for driver in drivers:
            app_id = app_id_of(driver)
            app = self.apps.get(app_id) or self._adopted(driver, app_id)
            if app is None:
                continue
            if not self.world.process_alive(driver) or not self.world.reaches_api(driver):
                continue  # not running, or cut off from the API: it can change nothing
            try:
                self._drive(driver, app)
            except SimApiError as err:
                if err.status == 403:
                    # Refused by the API server (a fence's admission policy): Spark logs the
                    # failed request and tries again on its next allocation round.
                    self.world.log(driver, f"WARN ExecutorPodsAllocator: {err}")
                elif err.status not in (404, 409):
                    raise

    def _adopted(self, driver: dict[str, Any], app_id: str) -> AppConfig | None:
        """The application of a driver started with an app id of its own: a resubmitted copy.

        Spark's driver takes spark.app.id from its properties; the application is the same.
        """
        name = objects.labels(driver).get(spark_labels.APP_NAME, "")
        namespace = driver["metadata"].get("namespace", "")
        known = next(
            (a for a in self.apps.values() if a.name == name and a.namespace == namespace), None
        )
        if known is None or not app_id:
            return None
        adopted = self.apps[app_id] = dataclasses.replace(known, app_id=app_id)
        return adopted

    def _state(self, driver: dict[str, Any], app: AppConfig) -> DriverState:
        uid = driver["metadata"]["uid"]
        state = self.drivers.get(uid)
        if state is None:
            salt = uid if app.executor_prefix == "fresh" else app.app_id
            prefix = (
                app.executor_prefix
                if app.executor_prefix not in ("fresh", "fixed")
                else resource_prefix(app.name, salt)
            )
            prefix = configured_prefix(driver) or prefix
            state = self.drivers[uid] = DriverState(uid, app, prefix)
        return state

    @staticmethod
    def _dispose(client: Any, app: AppConfig, ns: str, item: dict[str, Any]) -> None:
        """An ended executor's pod, once Spark processed its end: deleted, or marked inactive."""
        if app.delete_on_termination:
            client.delete(pod(ns, item["metadata"]["name"]), uid=item["metadata"]["uid"])
        else:
            client.patch(
                pod(ns, item["metadata"]["name"]),
                {"metadata": {"labels": {"spark-exec-inactive": "true"}}},
            )

    def _ended(
        self,
        client: Any,
        driver: dict[str, Any],
        state: DriverState,
        exec_id: str,
        item: dict[str, Any],
    ) -> None:
        """An executor whose pod ended: told to Spark once, its pod disposed of a round later."""
        app, ns = state.app, driver["metadata"]["namespace"]
        ended = state.ended.get(item["metadata"]["uid"])
        if ended is not None:
            if (self.world.clock.now() - ended).total_seconds() >= EVENT_PROCESSING_SECONDS:
                self._dispose(client, app, ns, item)
            return
        code = next(
            (
                ((s.get("state") or {}).get("terminated") or {}).get("exitCode")
                for s in (item.get("status") or {}).get("containerStatuses") or []
            ),
            None,
        )
        self.world.log(
            driver,
            f"ERROR TaskSchedulerImpl: Lost executor {exec_id}: The executor with id {exec_id} exited with exit code {code}.",
        )
        self.removed(state, exec_id, exited_text(exec_id, item))
        state.known.pop(exec_id, None)
        state.ended[item["metadata"]["uid"]] = self.world.clock.now()

    def _drive(self, driver: dict[str, Any], app: AppConfig) -> None:
        client = self.world.acting_as(driver)
        state = self._state(driver, app)
        ns = driver["metadata"]["namespace"]
        if not state.set_up:
            self._set_up(driver, state)
        if app.allocator == "deployment":
            drive_deployment(self, driver, state)
            return
        # Spark's snapshot of its executors: every executor pod that carries its app id, whoever
        # owns it, keyed by executor id (ExecutorPodsWatchSnapshotSource selects by the
        # spark-app-selector and spark-role labels; ExecutorPodsSnapshot maps spark-exec-id to
        # the pod). So the attempts of a driver Job, in-place restarts and resubmitted copies,
        # which share one app id, count (and delete) each other's executors.
        execs = sorted(
            client.list(
                pods(ns), labelSelector=f"spark-app-selector={app.app_id},spark-role=executor"
            ),
            key=lambda p: (p["metadata"]["creationTimestamp"], p["metadata"]["name"]),
        )
        by_id = {objects.labels(p).get(spark_labels.EXEC_ID, ""): p for p in execs}
        for exec_id in list(state.known):
            if exec_id not in by_id:
                self.world.log(
                    driver,
                    f"WARN ExecutorPodsLifecycleManager: {deleted_text(exec_id)}",
                )
                self.removed(state, exec_id, deleted_text(exec_id))
                del state.known[exec_id]
        active = 0
        for exec_id, item in by_id.items():
            if objects.labels(item).get("spark-exec-inactive") == "true":
                continue
            if objects.is_terminal(item):
                self._ended(client, driver, state, exec_id, item)
                continue
            if objects.deleting(item):
                continue
            state.known[exec_id] = item["metadata"]["uid"]
            active += 1
        if active > app.executors:
            self._scale_down(
                driver,
                state,
                [p for p in by_id.values() if p["metadata"]["uid"] in state.known.values()],
                active - app.executors,
            )
            return
        while active < app.executors and not state.finished:
            exec_id = str(state.next_id)
            body = executor_pod(driver, state, exec_id)
            # Spark numbers the executor before it creates the pod (ExecutorPodsAllocator:
            # EXECUTOR_ID_COUNTER.incrementAndGet()), so a failed create burns the id.
            state.next_id += 1
            try:
                created = client.create(pods(ns), body)
            except SimApiError as err:
                if err.status == 409:
                    state.collisions += 1
                    self.world.log(
                        driver,
                        f'WARN ExecutorPodsAllocator: Failed to request executor {exec_id}: pods "{body["metadata"]["name"]}" already exists',
                    )
                    return  # the next id on a later tick
                raise
            state.known[exec_id] = created["metadata"]["uid"]
            if state.ui is not None:
                state.ui.added(exec_id, self.world.now_text())
            self.world.log(
                driver,
                f"INFO ExecutorPodsAllocator: Requested executor with id {exec_id} from Kubernetes.",
            )
            active += 1

    def _scale_down(
        self, driver: dict[str, Any], state: DriverState, live: list[dict[str, Any]], surplus: int
    ) -> None:
        """Give executors back, as dynamic allocation does.

        Pending ones go first (they never started), then the newest running ones ("Executor
        killed by driver.").
        """
        order = sorted(
            live,
            key=lambda p: (
                objects.phase(p) != "Pending",
                -int(objects.labels(p).get(spark_labels.EXEC_ID, "0")),
            ),
        )
        for item in order[:surplus]:
            exec_id = objects.labels(item).get(spark_labels.EXEC_ID, "")
            self._give_back(
                driver,
                state,
                item,
                f"INFO ExecutorPodsAllocator: Deleting executor {exec_id} (scale down)",
            )

    def kill_executor(self, item: dict[str, Any], *, silent_ms: int = 0) -> None:
        """The driver gives one executor back (``killExecutors``), as a scenario asks.

        Spark records it as ExecutorKilled, "Executor killed by driver."
        (KubernetesClusterSchedulerBackend.doKillExecutors removes it with that reason before
        the pod goes), and the pod is deleted with the driver's own credentials. ``silent_ms``:
        the kill is HeartbeatReceiver's, after that long without a heartbeat (over the 120 s of
        spark.network.timeout), which logs it first (expireDeadHosts' warning, word for word).
        """
        ns = item["metadata"]["namespace"]
        owner: dict[str, Any] = next(iter(item["metadata"].get("ownerReferences") or []), {})
        driver = self.world.client.get(pod(ns, owner.get("name", "")))
        state = self.drivers.get(owner.get("uid", ""))
        if driver is None or state is None:
            return  # no driver to act: nothing it could kill
        exec_id = objects.labels(item).get(spark_labels.EXEC_ID, "")
        if silent_ms:
            self.world.log(
                driver,
                f"WARN HeartbeatReceiver: Removing executor {exec_id} with no recent heartbeats: "
                f"{silent_ms} ms exceeds timeout 120000 ms",
            )
        self._give_back(
            driver,
            state,
            item,
            f"INFO KubernetesClusterSchedulerBackend: Killing executor {exec_id}",
        )

    def _give_back(
        self, driver: dict[str, Any], state: DriverState, item: dict[str, Any], said: str
    ) -> None:
        """The driver's own deletion of an executor, as Spark records it.

        Logged, deleted with the driver's credentials, "Executor killed by driver." in its UI,
        and forgotten by its allocator.
        """
        self.world.log(driver, said)
        ns, name = item["metadata"]["namespace"], item["metadata"]["name"]
        self.world.acting_as(driver).delete(pod(ns, name), uid=item["metadata"]["uid"])
        exec_id = objects.labels(item).get(spark_labels.EXEC_ID, "")
        self.removed(state, exec_id, KILLED_BY_DRIVER)
        state.known.pop(exec_id, None)

    def removed(self, state: DriverState, exec_id: str, reason: str) -> None:
        if state.ui is not None:
            state.ui.removed(exec_id, self.world.now_text(), reason)

    def _set_up(self, driver: dict[str, Any], state: DriverState) -> None:
        state.ui = SparkUI(
            state.app.app_id,
            state.app.name,
            self.world.now_text(),
            retained_dead=state.app.retained_dead_executors,
        )
        self.uis[state.app.app_id] = state.ui
        if state.app.ui:
            self.world.serve(driver, 4040, state.ui.answer)
        client = self.world.acting_as(driver)
        ns = driver["metadata"]["namespace"]
        owner = [objects.owner_ref(driver)]
        short = hashlib.sha256(state.uid.encode()).hexdigest()[:16]
        for path, body in (
            (
                f"/api/v1/namespaces/{ns}/configmaps",
                {
                    "metadata": {
                        "name": f"spark-drv-{short}-conf-map",
                        "ownerReferences": owner,
                        "labels": {spark_labels.APP_ID: state.app.app_id},
                    },
                    "data": {"spark.properties": f"spark.app.id={state.app.app_id}\n"},
                },
            ),
            (
                f"/api/v1/namespaces/{ns}/services",
                {
                    "metadata": {
                        "name": f"{resource_prefix(state.app.name, state.uid)}-driver-svc",
                        "ownerReferences": owner,
                        "labels": {spark_labels.APP_ID: state.app.app_id},
                    },
                    "spec": {
                        "clusterIP": "None",
                        "selector": {
                            spark_labels.APP_ID: state.app.app_id,
                            spark_labels.ROLE: "driver",
                        },
                        "ports": [
                            {"name": "driver-rpc-port", "port": 7078},
                            {"name": "blockmanager", "port": 7079},
                            {"name": "spark-ui", "port": 4040},
                        ],
                    },
                },
            ),
        ):
            try:
                client.create(path, body)
            except SimApiError as err:
                if err.status != 409:
                    raise
        state.set_up = True
        self.world.log(driver, f"INFO SparkContext: Running Spark version {SPARK_VERSION}")
        self.world.log(
            driver,
            f"INFO SparkContext: Submitted application: {state.app.name} ({state.app.app_id})",
        )

    def on_driver_finished(self, driver: dict[str, Any], phase: str) -> None:
        """A finished driver stops its executors (SparkContext.stop deletes them)."""
        state = self.drivers.get(driver["metadata"]["uid"])
        if state is None or state.finished:
            return
        state.finished = True
        if not state.app.delete_on_termination:
            return
        # SparkContext.stop() → ExecutorPodsAllocator.stop(appId): every executor pod with the
        # app id goes, whichever driver made it (KubernetesClusterSchedulerBackend.stop).
        ns = driver["metadata"]["namespace"]
        for item in self.world.acting_as(driver).list(
            pods(ns), labelSelector=f"spark-app-selector={state.app.app_id},spark-role=executor"
        ):
            self.world.acting_as(driver).delete(
                pod(ns, item["metadata"]["name"]), uid=item["metadata"]["uid"]
            )
        del phase
