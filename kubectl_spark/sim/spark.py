"""Spark on Kubernetes as the cluster sees it: drivers that create executors, and launchers.

A driver pod, once Running, creates its ConfigMap and headless Service (owned by the driver
pod), then executor pods ``<prefix>-exec-<id>`` with Spark's labels and a controller owner
reference to the driver pod; it replaces lost executors with new ids, deletes (or marks
``spark-exec-inactive``) failed ones, and deletes its executors when it finishes. The prefix is
fresh per driver JVM (Spark 3.x) or fixed across attempts (``podNamePrefix``: collisions, S7).
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from kubectl_spark.knowledge import labels as spark_labels

from . import objects
from .client import SimApiError, jobs, pod, pods, sparkapps
from .deployment_allocator import drive_deployment
from .sparkrest import KILLED_BY_DRIVER, SparkUI, deleted_text, exited_text

if TYPE_CHECKING:
    from .world import World

SPARK_VERSION = "3.5.1"
IMAGE = f"apache/spark:{SPARK_VERSION}"


@dataclass
class AppConfig:
    """How one application behaves (what a user's code and configuration would decide)."""

    name: str
    namespace: str = "default"
    launch: str = "submit"  # submit (bare driver pod), job, operator (Kubeflow), apache
    # The Apache operator's spec.applicationTolerations (restartConfig, applicationTimeoutConfig)
    apache_tolerations: dict[str, Any] = field(default_factory=dict)
    executors: int = 2
    executor_prefix: str = "fresh"  # fresh per attempt, or fixed across attempts
    delete_on_termination: bool = True
    ui: bool = True  # spark.ui.enabled: the REST API kubectl spark reads through the pod proxy
    retained_dead_executors: int = 100  # spark.ui.retainedDeadExecutors
    driver_node: str | None = None
    driver_memory: str = "2Gi"
    executor_memory: str = "4Gi"
    executor_cpu: str = "1"
    driver_exit_after: float | None = None
    driver_exit_code: int = 0
    backoff_limit: int = 3
    pod_replacement_policy: str | None = None
    pod_failure_policy: dict[str, Any] | None = None
    restart_policy: dict[str, Any] = field(default_factory=lambda: {"type": "Never"})
    pvc: str | None = None
    executor_priority: int = 0
    driver_restart_policy: str = "Never"  # Spark hard-codes Never; a Job template may say OnFailure
    executor_restart_policy: str = (
        "Never"  # the seed's surprise: anything but Never restarts in place
    )
    app_id: str = ""
    # spark.kubernetes.allocation.pods.allocator: direct (one pod per executor) or deployment
    # (4.2: one Deployment spark-d-<appId>-<rp> whose ReplicaSet makes the executor pods)
    allocator: str = "direct"
    spark_version: str = SPARK_VERSION

    def __post_init__(self) -> None:
        if not self.app_id:
            self.app_id = (
                "spark-" + hashlib.sha256(f"{self.namespace}/{self.name}".encode()).hexdigest()[:32]
            )


@dataclass
class DriverState:
    uid: str
    app: AppConfig
    prefix: str
    next_id: int = 1
    known: dict[str, str] = field(default_factory=dict)  # exec id → pod uid
    set_up: bool = False
    finished: bool = False
    collisions: int = 0
    ui: SparkUI | None = None
    # Deployment allocator: executor id by (pod uid, container restarts) — each JVM that
    # registers gets the next id, a restarted one a new id in the same pod.
    registered: dict[tuple[str, int], str] = field(default_factory=dict)
    # Ended executor pods told to Spark, by pod uid, with when: deleted a processing round later.
    ended: dict[str, datetime] = field(default_factory=dict)


# Spark handles executor pod changes in batches (ExecutorPodsSnapshotsStoreImpl, every
# spark.kubernetes.executor.eventProcessingInterval, 1 s by default): a failed executor's pod
# is deleted up to a second after its end, the window in which a recorder reads its log.
EVENT_PROCESSING_SECONDS = 1.0


def configured(driver: dict[str, Any], key: str) -> str:
    """``--conf key=value`` in the driver's args ("" when absent), as its JVM sees it.

    The kubelet expands ``$(VAR)`` in args from the container's environment, the downward
    API's fields included (``metadata.name``, ``metadata.uid``, ``status.podIP``): a Job's
    template can so give each of its pods its own app id and executor prefix.
    """
    for container in driver["spec"].get("containers") or []:
        args = [str(a) for a in container.get("args") or []]
        for i, arg in enumerate(args[:-1]):
            if arg == "--conf" and args[i + 1].startswith(key + "="):
                return _expanded(args[i + 1].split("=", 1)[1], driver, container)
    return ""


def _expanded(value: str, pod: dict[str, Any], container: dict[str, Any]) -> str:
    fields = {
        "metadata.name": pod["metadata"].get("name", ""),
        "metadata.namespace": pod["metadata"].get("namespace", ""),
        "metadata.uid": pod["metadata"].get("uid", ""),
        "status.podIP": (pod.get("status") or {}).get("podIP", ""),
    }
    env: dict[str, str] = {}
    for item in container.get("env") or []:
        path = ((item.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
        env[str(item.get("name"))] = fields.get(path, "") if path else str(item.get("value", ""))
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m[1], m[0]), value)


def configured_prefix(driver: dict[str, Any]) -> str:
    """``--conf spark.kubernetes.executor.podNamePrefix=...`` in the driver's args wins, as in Spark."""
    return configured(driver, "spark.kubernetes.executor.podNamePrefix")


def app_id_of(driver: dict[str, Any]) -> str:
    """spark.app.id: the conf when given, else the label spark-submit wrote from it.

    Spark's KubernetesClusterSchedulerBackend.applicationId takes the conf first.
    """
    return configured(driver, "spark.app.id") or objects.labels(driver).get(spark_labels.APP_ID, "")


def resource_prefix(name: str, salt: str) -> str:
    return f"{name}-{hashlib.sha256(salt.encode()).hexdigest()[:16]}"


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
    def driver_pod(
        self, app: AppConfig, *, name: str | None = None, extra_labels: dict[str, str] | None = None
    ) -> dict[str, Any]:
        labels = {
            spark_labels.APP_ID: app.app_id,
            spark_labels.ROLE: "driver",
            "spark-app-name": app.name,
            "spark-version": app.spark_version,
            **(extra_labels or {}),
        }
        spec: dict[str, Any] = {
            "restartPolicy": app.driver_restart_policy,
            "containers": [
                {
                    "name": "spark-kubernetes-driver",
                    "image": IMAGE,
                    "args": ["driver", "--class", "org.apache.spark.examples.SparkPi"],
                    "ports": [
                        {"name": "driver-rpc-port", "containerPort": 7078},
                        {"name": "blockmanager", "containerPort": 7079},
                        {"name": "spark-ui", "containerPort": 4040},
                    ],
                    "resources": {
                        "requests": {"cpu": "1", "memory": app.driver_memory},
                        "limits": {"memory": app.driver_memory},
                    },
                }
            ],
        }
        if app.driver_node:
            spec["nodeSelector"] = {"kubernetes.io/hostname": app.driver_node}
        if app.pvc:
            spec["volumes"] = [
                {"name": "checkpoint", "persistentVolumeClaim": {"claimName": app.pvc}}
            ]
            spec["containers"][0]["volumeMounts"] = [
                {"name": "checkpoint", "mountPath": "/checkpoint"}
            ]
        meta: dict[str, Any] = {"labels": labels}
        if name:
            meta["name"] = name
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}

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
            template = self.driver_pod(app)
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
        return client.create(pods(app.namespace), self.driver_pod(app, name=f"{prefix}-driver"))

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
            body = self.executor_pod(driver, state, exec_id)
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

    def executor_pod(
        self, driver: dict[str, Any], state: DriverState, exec_id: str
    ) -> dict[str, Any]:
        app = state.app
        labels = {
            spark_labels.APP_ID: app.app_id,
            spark_labels.ROLE: "executor",
            spark_labels.EXEC_ID: exec_id,
            "spark-exec-resourceprofile-id": "0",
            "spark-app-name": app.name,
            "spark-version": app.spark_version,
        }
        labels.update(
            {
                k: v
                for k, v in objects.labels(driver).items()
                # Both operators pass their labels on (spark.kubernetes.executor.label.*).
                if k.startswith(("sparkoperator.k8s.io/", "spark.operator/"))
            }
        )
        # spark-operator#2961: executors also name the SparkApplication, as a non-controller owner
        owners = [objects.owner_ref(driver)]
        owners.extend(
            {**ref, "controller": False}
            for ref in driver["metadata"].get("ownerReferences") or []
            if ref.get("kind") == "SparkApplication"
            and str(ref.get("apiVersion")).startswith("sparkoperator.k8s.io/")
        )
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{state.prefix}-exec-{exec_id}",
                "labels": labels,
                "ownerReferences": owners,
            },
            "spec": {
                "restartPolicy": app.executor_restart_policy,
                "priority": app.executor_priority,
                "containers": [
                    {
                        "name": "spark-kubernetes-executor",
                        "image": IMAGE,
                        "args": ["executor"],
                        "env": [
                            {"name": "SPARK_EXECUTOR_ID", "value": exec_id},
                            {"name": "SPARK_APPLICATION_ID", "value": app.app_id},
                        ],
                        "resources": {
                            "requests": {"cpu": app.executor_cpu, "memory": app.executor_memory},
                            "limits": {"memory": app.executor_memory},
                        },
                    }
                ],
            },
        }

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
