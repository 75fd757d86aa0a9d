"""A driver that keeps its executors busy: a small job every second, for ARGV[1] seconds (0: until stopped).

A job that fails (an executor lost under it) is said and the loop goes on.

A file named ``oom`` in its working folder makes it run, once, a query whose task fills an
executor's heap (a JVM OutOfMemoryError: Spark ends that executor with exit 52).
"""

import sys
import time
from pathlib import Path

from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0
started = time.monotonic()
while seconds <= 0 or time.monotonic() - started < seconds:
    trigger = Path("oom")
    if trigger.exists():
        trigger.unlink()
        try:
            # One group's list of 200,000 strings of 10 kB: 2 GB, far past a 512 MiB heap, in
            # few enough objects that the JVM runs out at once rather than collecting for long.
            spark.range(0, 200_000, 1, 1).selectExpr(
                "collect_list(repeat('x', 10000)) AS a"
            ).selectExpr("size(a)").collect()
        except Exception as failed:
            print(f"steady: the heap-filling job failed: {type(failed).__name__}", flush=True)
    try:
        total = spark.range(0, 100000, numPartitions=2).selectExpr("sum(id)").collect()[0][0]
        print(f"steady: sum {total}", flush=True)
    except Exception as failed:
        # An executor ended mid-task (the test's own doing) fails the job under
        # spark.task.maxFailures=1 — e.g. a task launched on an executor already running its
        # shutdown hooks is rejected (Executor.launchTask). The driver must outlive its losses.
        print(f"steady: a job failed: {type(failed).__name__}", flush=True)
    time.sleep(1)
spark.stop()
