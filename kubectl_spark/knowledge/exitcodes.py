"""Spark's exit codes on Kubernetes, in Spark's own words.

``ExecutorPodsLifecycleManager.describeExitCode`` (resource-managers/kubernetes/core) writes the
descriptions into the loss message the driver keeps (``removeReason`` in its REST API); the core
reads them back and names the loss, the simulator writes them as a driver would. One table.
"""

from __future__ import annotations

from typing import Literal

# ExecutorPodsLifecycleManager.describeExitCode, word for word.
SPARK_EXIT_CODES = {
    0: "(success)",
    1: "(generic, look at logs to clarify)",
    10: "(Uncaught exception)",
    42: "(Douglas Adams fan)",
    50: "(Uncaught exception)",
    52: "(JVM OOM)",
    53: "(DiskStore failed to create temp dir)",
    126: "(not executable - possibly perm or arch)",
    137: "(SIGKILL, possible container OOM)",
    139: "(SIGSEGV: that's unexpected)",
    255: "(exit-1, your guess is as good as mine)",
}
# Exit codes that name a cause: SparkExitCode (OOM 52, uncaught exception 50 and 10) and the
# executor's heartbeat timeout to its driver (56).
ExitCause = Literal["JvmOutOfMemory", "UncaughtException", "HeartbeatTimeout"]
EXIT_CODE_REASONS: dict[int, ExitCause] = {
    52: "JvmOutOfMemory",
    50: "UncaughtException",
    10: "UncaughtException",
    56: "HeartbeatTimeout",
}


def spark_words(code: int) -> str:
    """What describeExitCode appends to a code: "(JVM OOM)", or "(unexpected)"."""
    return SPARK_EXIT_CODES.get(code, "(unexpected)")


def describe_exit(code: int | None) -> str:
    if code is None:
        return "no exit code"
    return f"exit code {code} {spark_words(code)}"
