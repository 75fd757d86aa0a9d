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
# Exit codes that name a cause, with whose fault it is. SparkExitCode (core/.../util):
# EXCEED_MAX_EXECUTOR_FAILURES 11 (the driver gives up once spark.executor.maxNumFailures is
# passed), UNCAUGHT_EXCEPTION 50 (10 in older releases), OOM 52, CLASS_NOT_FOUND 101
# (SparkSubmit: the main class is missing), DRIVER_TIMEOUT 124 (spark.driver.timeout),
# UNCAUGHT_EXCEPTION_TWICE 51 (the uncaught-exception handler itself failed),
# ERROR_COMMAND_NOT_FOUND 127 (the shell found no such command: the image's entrypoint).
# ExecutorExitCode: DISK_STORE_FAILED_TO_CREATE_DIR 53 (no local dir under spark.local.dir
# could be made: a full or read-only disk), EXTERNAL_BLOCK_STORE_FAILED_TO_INITIALIZE 54 and
# _TO_CREATE_DIR 55 (an external block store), HEARTBEAT_FAILURE 56 (the executor could not
# send heartbeats to its driver: the network, or a driver stuck in GC, is as likely as a gone
# driver, so whose fault it is stays unknown; not the driver-side expiry), KILLED_BY_TASK_REAPER
# 57 (a task that would not stop after spark.task.reaper.killTimeout),
# BLOCK_MANAGER_REREGISTRATION_FAILED 58 (the driver no longer knew the executor's block
# manager: it had removed it). Read from the 4.1.1 jars' bytecode (SparkExitCode$,
# ExecutorExitCode$).
ExitCause = Literal[
    "JvmOutOfMemory",
    "UncaughtException",
    "DriverUnreachable",
    "ExecutorFailuresExceeded",
    "TaskReaperKill",
    "BlockManagerLost",
    "ClassNotFound",
    "DriverTimeout",
    "LocalDirFailure",
    "ExternalBlockStoreFailure",
    "CommandNotFound",
]
EXIT_CODE_REASONS: dict[int, ExitCause] = {
    11: "ExecutorFailuresExceeded",
    52: "JvmOutOfMemory",
    50: "UncaughtException",
    51: "UncaughtException",
    10: "UncaughtException",
    53: "LocalDirFailure",
    54: "ExternalBlockStoreFailure",
    55: "ExternalBlockStoreFailure",
    127: "CommandNotFound",
    56: "DriverUnreachable",
    57: "TaskReaperKill",
    58: "BlockManagerLost",
    101: "ClassNotFound",
    124: "DriverTimeout",
}
# Whose fault each cause is (the category of the loss); the app's unless said here. Exit 11's
# category is that of the executor losses Spark counted (the core links them).
EXIT_CAUSE_CATEGORY: dict[ExitCause, str] = {
    "DriverUnreachable": "unknown",
    "LocalDirFailure": "cluster",
    "ExternalBlockStoreFailure": "unknown",
    "BlockManagerLost": "unknown",
    "DriverTimeout": "user",
}
# What the codes describeExitCode does not know mean, for people.
EXIT_CAUSE_WORDS: dict[int, str] = {
    11: "(too many executor failures: spark.executor.maxNumFailures passed)",
    51: "(uncaught exception, twice: the handler itself failed)",
    54: "(the external block store failed to initialize)",
    55: "(the external block store failed to create a directory)",
    56: "(the executor could not reach its driver: heartbeats failed)",
    57: "(killed by the task reaper: a task did not stop)",
    58: "(block manager re-registration failed: the driver had removed this executor)",
    101: "(class not found)",
    124: "(spark.driver.timeout reached)",
    127: "(command not found: the image has no such entrypoint or program)",
}


def spark_words(code: int) -> str:
    """What describeExitCode appends to a code: "(JVM OOM)", or "(unexpected)"."""
    return SPARK_EXIT_CODES.get(code, "(unexpected)")


def cause_words(code: int) -> str:
    """Spark's words for a code, or ours for the codes Spark names elsewhere (SparkExitCode)."""
    return SPARK_EXIT_CODES.get(code) or EXIT_CAUSE_WORDS.get(code, "(unexpected)")


def describe_exit(code: int | None) -> str:
    if code is None:
        return "no exit code"
    return f"exit code {code} {cause_words(code)}"
