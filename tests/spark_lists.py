"""Executor lists as a real driver writes them: every field of Spark's ExecutorSummary.

Spark's core/src/main/scala/org/apache/spark/status/api/v1/api.scala, written by
JacksonMessageWriter (dates as ``yyyy-MM-dd'T'HH:mm:ss.SSS'GMT'``, an empty Option left out);
executors added five a second, as the Kubernetes allocator's batch.size and batch.delay
defaults add them. The simulator's lists hold only what the analysis reads.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson

PEAK_METRICS = (
    "JVMHeapMemory",
    "JVMOffHeapMemory",
    "OnHeapExecutionMemory",
    "OffHeapExecutionMemory",
    "OnHeapStorageMemory",
    "OffHeapStorageMemory",
    "OnHeapUnifiedMemory",
    "OffHeapUnifiedMemory",
    "DirectPoolMemory",
    "MappedPoolMemory",
    "ProcessTreeJVMVMemory",
    "ProcessTreeJVMRSSMemory",
    "ProcessTreePythonVMemory",
    "ProcessTreePythonRSSMemory",
    "ProcessTreeOtherVMemory",
    "ProcessTreeOtherRSSMemory",
    "MinorGCCount",
    "MinorGCTime",
    "MajorGCCount",
    "MajorGCTime",
    "TotalGCTime",
)


def spark_date(seconds: int, millis: int) -> str:
    at = datetime(2026, 12, 4, 10, tzinfo=UTC).timestamp() + seconds
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{millis:03d}GMT"


def real_summary(n: int, removed: bool) -> dict[str, Any]:
    """Executor ``n`` as a real driver's ``allexecutors`` writes it (every field of api.scala)."""
    host = f"10.244.{n // 250}.{n % 250}"
    found: dict[str, Any] = {
        "id": str(n),
        "hostPort": f"{host}:7079",
        "isActive": not removed,
        "rddBlocks": 0,
        "memoryUsed": 1048576 * n,
        "diskUsed": 0,
        "totalCores": 4,
        "maxTasks": 4,
        "activeTasks": n % 4,
        "failedTasks": n % 3,
        "completedTasks": 1200 + n,
        "totalTasks": 1204 + n,
        "totalDuration": 9876543 + n,
        "totalGCTime": 12345 + n,
        "totalInputBytes": 987654321,
        "totalShuffleRead": 123456789,
        "totalShuffleWrite": 123456789,
        "isBlacklisted": False,
        "maxMemory": 2147483648,
        "addTime": spark_date(n // 5, n * 37 % 1000),
        "executorLogs": {
            kind: f"http://{host}:8081/logPage/?appId=spark-1&executorId={n}&logType={kind}"
            for kind in ("stdout", "stderr")
        },
        "memoryMetrics": {
            "usedOnHeapStorageMemory": 1024 * n,
            "usedOffHeapStorageMemory": 0,
            "totalOnHeapStorageMemory": 2147483648,
            "totalOffHeapStorageMemory": 0,
        },
        "blacklistedInStages": [],
        "peakMemoryMetrics": {name: 1000003 * (i + n) for i, name in enumerate(PEAK_METRICS)},
        "attributes": {},
        "resources": {},
        "resourceProfileId": 0,
        "isExcluded": False,
        "excludedInStages": [],
    }
    if removed:
        found["removeTime"] = spark_date(600 + n, n * 7 % 1000)
        found["removeReason"] = (
            f"The executor with id {n} exited with exit code 137(SIGKILL, possible container OOM)."
        )
    return found


def real_list(executors: int) -> bytes:
    listed = [{**real_summary(0, False), "id": "driver", "hostPort": "driver-svc:7078"}]
    listed += [real_summary(n, removed=n % 9 == 0) for n in range(1, executors + 1)]
    return orjson.dumps(listed)
