"""Delete one executor's pod (the TUI's raw view, k9s's ctrl+d): that pod, by UID, and a record.

One stuck or misbehaving executor is removed without touching its attempt: the deletion is
graceful (the kubelet stops the JVM with SIGTERM, as ``kubectl delete pod`` does) and pinned
to the UID that was read, so a pod of the same name made since is never the one deleted. An
Event on the pod says kubectl spark deleted it, so ``describe`` reads the loss as the user's
act, not as an unknown one, once the pod is gone. Spark's driver then counts the executor lost
("deleted by a user or the framework") and asks for another (ExecutorPodsLifecycleManager);
that is said, not hidden.
"""

import dataclasses

from kubectl_spark.core.model import App, Attempt

from .base import Operation, Plan, executor_deleted

REPLACED = (
    "Spark's driver counts the executor lost and asks for another in its place "
    "(ExecutorPodsLifecycleManager); the attempt goes on"
)


def delete_pod_plan(app: App, attempt: Attempt, executor_id: str, *, now: str, actor: str) -> Plan:
    base = Plan("delete-pod", app.namespace, app.name, attempt.number)
    executor = next((e for e in attempt.executors if e.id == executor_id), None)
    if executor is None or executor.source != "cluster" or not executor.uid:
        return dataclasses.replace(
            base,
            refusal=f"executor {executor_id} of {app.name}/{attempt.number} has no pod in the "
            "cluster to delete",
        )
    deleted = executor_deleted(app, attempt, executor, "delete-pod", now, actor)
    delete = Operation(
        "delete",
        "v1",
        "pods",
        app.namespace,
        executor.pod,
        f"delete executor {executor.id}'s pod (graceful, only if it is still uid {executor.uid})",
        {"propagationPolicy": "Background"},
        uid=executor.uid,
    )
    return dataclasses.replace(base, operations=(deleted, delete), notes=(REPLACED,))
