"""What to do about each loss reason: one text, shown by ``describe`` and by the TUI."""

from __future__ import annotations

from kubectl_spark.core.model import Attempt, Reason

ADVICE = {
    "OOMKilled": "raise spark.executor.memoryOverhead / memory, or reduce the partition size",
    "PossibleOOM": "likely a system OOM kill: check the node's memory pressure and the container's limits",
    "JvmOutOfMemory": "raise spark.executor.memory (the JVM heap) or reduce cached data",
    "Evicted": "the node ran out of a resource: set requests equal to limits, or use another node pool",
    "Preempted": "a higher-priority pod needed the room: give Spark a PriorityClass, or capacity",
    "NodeLost": "the node is unreachable: if this attempt may still run, fence it (kubectl spark "
    "fence; f in the TUI) or force-kill it (kubectl spark force-kill; K in the TUI)",
    "OwnerGone": "its driver attempt is gone or going: this executor follows it",
    "ImagePullFailure": "fix the image name or the registry credentials",
    "Unschedulable": "no node has room: lower the requests or add capacity",
    "ContainerConfigError": "a ConfigMap, Secret or key it references is missing: create it, or fix the pod template",
    "VolumeAttachFailure": "a ReadWriteOnce (or ReadWriteOncePod) volume is still attached to another node: end the attempt that holds it "
    "(kubectl spark force-kill --detach-volumes --node-down), once that node is confirmed powered off",
    "VolumeMountFailure": "create the ConfigMap or Secret it mounts, or check the volume's storage (its Events say which)",
    "AdmissionRejected": "the kubelet refused it after scheduling (its node's resources or "
    "affinity changed): Spark counts it; check the node, or the requests of the pods there",
    "SidecarFailed": "a sidecar exited non-zero and Spark 4 failed the executor for it: fix the "
    "sidecar, or set spark.kubernetes.executor.checkAllContainers=false",
    "LivenessProbe": "its liveness probe failed: relax the probe, or find what stalls the JVM (long GC)",
    "DriverUnreachable": "the executor could not reach its driver: look for long GC pauses in "
    "the driver's log, then check the network between their nodes",
    "LocalDirFailure": "the executor could not create its local dirs: check the node's disk "
    "(full or read-only) and spark.local.dir",
    "CommandNotFound": "the image lacks the command it was told to run: check the image and "
    "its entrypoint",
    "HeartbeatTimeout": "the driver heard nothing for spark.network.timeout: look for long GC "
    "pauses in the executor's log, or a network or node problem",
    "ExecutorFailuresExceeded": "too many executors failed: see their reasons below; raise "
    "spark.executor.maxNumFailures only once those are understood",
    "TaskReaperKill": "a task would not stop when killed: find the blocking call in its thread dump",
    "ClassNotFound": "the main class or a dependency is missing from the image or --jars",
    "DriverTimeout": "the application ran past spark.driver.timeout: raise it, or find what is slow",
}
# Advice where the category changes it: an eviction for the pod's own limits is the app's.
ADVICE_BY_CATEGORY = {
    ("Evicted", "app"): "the pod outgrew its own limit (ephemeral storage, an emptyDir's "
    "sizeLimit) or its memory request: raise the limit or request to what it uses",
}


# A lost node's attempt whose pods are gone from the API: there is nothing left to fence or kill.
NODE_LOST_KILLED = (
    "already force-killed: its pods are gone from the API; if the node comes back, its kubelet "
    "stops what still runs there"
)
NODE_LOST_GONE = (
    "its pod is gone from the API: nothing is left to fence or kill here; if the node may come "
    "back with the process running, keep it powered off or tainted out-of-service until then"
)


# An executor lost with its node while its driver runs elsewhere: fencing or killing the
# attempt would stop the healthy driver (and fence refuses an attempt that is not a zombie).
NODE_LOST_EXECUTOR = (
    "its driver runs on a reachable node and replaces it (the heartbeat expiry removes it): "
    "nothing to fence; once the node is confirmed powered off, taint it out-of-service "
    "(node.kubernetes.io/out-of-service) so that Kubernetes deletes what it held"
)
# A fenced attempt's lost driver: the fence stands; what is left is ending it for good.
NODE_LOST_FENCED = (
    "the attempt is fenced: once the node is confirmed powered off, end it for good "
    "(kubectl spark force-kill --node-down; K in the TUI)"
)


def advice(
    reason: Reason | None, attempt: Attempt | None = None, role: str = "executor"
) -> str | None:
    """What to do; ``attempt`` (the one the pod belongs to) keeps it to actions that will run."""
    if reason is None:
        return None
    if reason.code == "NodeLost":
        if any(e.startswith("event ForceKilled") for e in reason.evidence):
            return NODE_LOST_KILLED
        if "the pod is gone" in reason.message:
            return NODE_LOST_GONE
        if attempt is not None and (attempt.fenced or attempt.state == "Fenced"):
            return NODE_LOST_FENCED
        if attempt is not None and role == "executor" and attempt.state == "Running":
            return NODE_LOST_EXECUTOR
    return ADVICE_BY_CATEGORY.get((reason.code, reason.category)) or ADVICE.get(reason.code)
