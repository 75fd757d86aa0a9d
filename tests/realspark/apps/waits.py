"""A driver whose first job waits on executors that cannot start, and gives up after ARGV[1] s.

Dynamic allocation then has no task to run, lowers its target to nothing and deletes the pending
executor pods as excess requests. A file named ``again`` in its working folder makes it run one
more job (on executors that can start by then), then stay idle until stopped.
"""

import sys
import threading
import time
from pathlib import Path

from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
threading.Timer(
    float(sys.argv[1]) if len(sys.argv) > 1 else 20.0, spark.sparkContext.cancelAllJobs
).start()
try:
    spark.range(0, 1000, numPartitions=2).collect()
except Exception as cancelled:
    print(f"waits: the first job gave up: {type(cancelled).__name__}", flush=True)
while not Path("again").exists():
    time.sleep(0.5)
print("waits: rows", len(spark.range(0, 1000, numPartitions=2).collect()), flush=True)
while True:
    time.sleep(1)
