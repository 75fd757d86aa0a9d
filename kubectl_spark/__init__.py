"""kubectl spark: Apache Spark on Kubernetes, explained and made safe to operate."""

__version__ = "0.1.0"
