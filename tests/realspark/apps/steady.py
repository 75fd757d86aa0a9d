"""A driver that keeps its executors busy: a small job every second, for ARGV[1] seconds (0: until stopped)."""

import sys
import time

from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0
started = time.monotonic()
while seconds <= 0 or time.monotonic() - started < seconds:
    total = spark.range(0, 100000, numPartitions=2).selectExpr("sum(id)").collect()[0][0]
    print(f"steady: sum {total}", flush=True)
    time.sleep(1)
spark.stop()
