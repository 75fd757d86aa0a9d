"""A driver whose application code throws once Spark is up: spark-submit ends with exit 1."""

from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
print("throws: sum", spark.range(0, 1000, numPartitions=2).selectExpr("sum(id)").collect()[0][0])
raise RuntimeError("the application failed on purpose")
