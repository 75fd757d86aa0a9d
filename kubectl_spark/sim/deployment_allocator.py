"""Spark 4.2's DeploymentPodsAllocator, as the simulator's Spark plays it.

One Deployment ``spark-d-<appId>-<rp>`` per resource profile, owned by the driver, scaled to the
executor target; its ReplicaSet (the real one, or ``sim/deployments.py`` on the emulator) makes
the pods. Split from ``sim/spark.py``, which plays the direct allocator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubectl_spark.knowledge import labels as spark_labels

from . import objects
from .client import pods
from .sparkapp import executor_pod
from .sparkrest import exited_text

if TYPE_CHECKING:
    from .spark import SparkDrivers
    from .sparkapp import DriverState

# CoarseGrainedSchedulerBackend.onDisconnected: an executor whose JVM went away, pod or not.
DISASSOCIATED = (
    "Remote RPC client disassociated. Likely due to containers exceeding thresholds, or network "
    "issues. Check driver logs for WARN messages."
)


def drive_deployment(drivers: SparkDrivers, driver: dict[str, Any], state: DriverState) -> None:
    """Spark 4.2's DeploymentPodsAllocator: one Deployment, scaled; ids given at registration.

    Its pod template carries the executor id EXECID (KubernetesConf.createExecutorConf); each
    JVM gets its id from the driver as it registers. An executor that dies in a pod that
    restarts it (restartPolicy Always) is lost to Spark ("Remote RPC client disassociated",
    CoarseGrainedSchedulerBackend) and the restarted JVM is a new executor.
    """
    app = state.app
    client = drivers.world.acting_as(driver)
    ns = driver["metadata"]["namespace"]
    name = f"spark-d-{app.app_id}-0"
    path = f"/apis/apps/v1/namespaces/{ns}/deployments"
    found = client.get(f"{path}/{name}")
    if found is None and not state.finished:
        template = executor_pod(driver, state, "EXECID")
        meta = template["metadata"]
        labels = {**meta["labels"], "spark-version": app.spark_version}
        annotations = {"controller.kubernetes.io/pod-deletion-cost": "0"}
        template["spec"]["restartPolicy"] = "Always"  # a Deployment's pods must restart
        client.create(
            path,
            {
                "metadata": {"name": name, "ownerReferences": [objects.owner_ref(driver)]},
                "spec": {
                    "replicas": app.executors,
                    "selector": {"matchLabels": {
                        spark_labels.APP_ID: app.app_id, spark_labels.ROLE: "executor",
                        "spark-exec-resourceprofile-id": "0",
                    }},
                    "template": {
                        "metadata": {"labels": labels, "annotations": annotations},
                        "spec": template["spec"],
                    },
                },
            },
        )  # fmt: skip
        drivers.world.log(driver, f"INFO DeploymentPodsAllocator: created Deployment {name}")
    elif found is not None and (found.get("spec") or {}).get("replicas") != app.executors:
        client.patch(f"{path}/{name}", {"spec": {"replicas": app.executors}})
    execs = client.list(
        pods(ns), labelSelector=f"spark-app-selector={app.app_id},spark-role=executor"
    )
    live: set[tuple[str, int]] = set()
    for item in execs:
        statuses = (item.get("status") or {}).get("containerStatuses") or []
        restarts = int(statuses[0].get("restartCount") or 0) if statuses else 0
        key = (item["metadata"]["uid"], restarts)
        if objects.is_terminal(item) or objects.deleting(item):
            continue
        live.add(key)
        if key not in state.registered and objects.phase(item) == "Running":
            exec_id = str(state.next_id)
            state.next_id += 1
            state.registered[key] = exec_id
            if state.ui is not None:  # Spark's executors bind to their pod's IP
                host = str((item.get("status") or {}).get("podIP") or "")
                state.ui.added(exec_id, drivers.world.now_text(), host)
            drivers.world.log(
                driver,
                f"INFO KubernetesClusterSchedulerBackend: executor {exec_id} registered ({item['metadata']['name']})",
            )
    for key, exec_id in list(state.registered.items()):
        if key in live:
            continue
        gone: dict[str, Any] | None = next(
            (p for p in execs if p["metadata"]["uid"] == key[0]), None
        )
        failed = gone is not None and objects.is_terminal(gone)
        reason = exited_text(exec_id, gone) if failed and gone is not None else DISASSOCIATED
        drivers.world.log(
            driver,
            f"ERROR TaskSchedulerImpl: Lost executor {exec_id}: {reason.splitlines()[0]}",
        )
        drivers.removed(state, exec_id, reason)
        del state.registered[key]
