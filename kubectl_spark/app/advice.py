"""What to do about each loss reason: one text, shown by ``describe`` and by the TUI."""

from __future__ import annotations

from kubectl_spark.core.model import Reason

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
    "VolumeAttachFailure": "a ReadWriteOnce volume is still attached to another node: end the attempt that holds it "
    "(kubectl spark force-kill --detach-volumes; K in the TUI), once that node is confirmed down",
    "VolumeMountFailure": "create the ConfigMap or Secret it mounts, or check the volume's storage (its Events say which)",
}


def advice(reason: Reason | None) -> str | None:
    return ADVICE.get(reason.code) if reason is not None else None
