"""A driver whose one job fills an executor's heap, and which ends with that job's failure.

With ``spark.task.maxFailures`` 1 the job aborts on the lost executor and the Python raises:
spark-submit exits 1 seconds after its executor died of running out of memory.
"""

from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
print("fills_heap: rows", spark.range(0, 1000, numPartitions=1).count(), flush=True)
# One group's list of 200,000 strings of 10 kB: 2 GB, far past a 512 MiB heap.
spark.range(0, 200_000, 1, 1).selectExpr("collect_list(repeat('x', 10000)) AS a").selectExpr(
    "size(a)"
).collect()
