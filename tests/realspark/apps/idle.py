"""A driver that runs one job, then stays idle for ARGV[1] seconds: dynamic allocation gives its executors back."""

import sys
import time

from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
print("idle: rows", len(spark.range(0, 1000, numPartitions=2).collect()), flush=True)
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 60.0)
spark.stop()
