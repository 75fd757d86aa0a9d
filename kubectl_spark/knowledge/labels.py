"""The labels and container names Spark, the spark-operator and kubectl spark put on pods.

Spark's ``Constants.scala`` (resource-managers/kubernetes/core) names the labels spark-submit and
the driver set; the operator adds its own; ``kubectl-spark.io/*`` are this plugin's. The core
reads them, the simulator writes them: one list.
"""

from __future__ import annotations

ROLE = "spark-role"  # driver | executor
APP_ID = "spark-app-selector"  # spark.app.id, shared by every attempt of a resubmitted driver
EXEC_ID = "spark-exec-id"
APP_NAME = "spark-app-name"
SPARK_VERSION = "spark-version"  # Spark's own label on its pods (Constants.SPARK_VERSION_LABEL)
INACTIVE = "spark-exec-inactive"  # set on executors kept by deleteOnTermination=false
# Spark 4.1+ writes the driver's exit exception here (at most 64 KiB of stack trace) when
# spark.kubernetes.driver.annotateExitException is true (SPARK-53335; the Apache operator sets
# it by default, SPARK-56752): SparkKubernetesDiagnosticsSetter, Constants.EXIT_EXCEPTION_ANNOTATION.
EXIT_EXCEPTION = "spark.exit-exception"
OPERATOR_APP = "sparkoperator.k8s.io/app-name"
SUBMISSION = "sparkoperator.k8s.io/submission-id"
# The Apache Spark Kubernetes Operator's (spark.apache.org) label on every pod of an
# application, each attempt with an app id of its own (<name>-<attemptId>):
# spark-operator-api/.../Constants.java LABEL_SPARK_APPLICATION_NAME.
APACHE_APP = "spark.operator/spark-app-name"
APACHE_CLUSTER = "spark.operator/spark-cluster-name"  # on a SparkCluster's master and workers
# On each run a Kubeflow ScheduledSparkApplication starts (a SparkApplication it also owns):
# internal/controller/scheduledsparkapplication/controller.go, createSparkApplication.
SCHEDULED_APP = "sparkoperator.k8s.io/scheduled-app-name"
SCHEDULE_KIND = "ScheduledSparkApplication"
FENCE_LABEL = "kubectl-spark.io/fenced"
ACTION_ANNOTATION = "kubectl-spark.io/action"
# The reason of the Event an action leaves on each executor it deletes, and the Spark id the
# executor held (an annotation of that Event): what describe knows of it once the pod is gone.
EXECUTOR_DELETED = "DeletedByKubectlSpark"
EXECUTOR_ID_ANNOTATION = "kubectl-spark.io/executor-id"
# On a fenced pod: the fence was asked to keep the attempt's executors (--keep-executors).
KEEPS_EXECUTORS = "kubectl-spark.io/keep-executors"
DRIVER_CONTAINER = "spark-kubernetes-driver"
EXECUTOR_CONTAINER = "spark-kubernetes-executor"
SPARK_CONTAINERS = (DRIVER_CONTAINER, EXECUTOR_CONTAINER)
RESUBMITTED_FROM = (
    "kubectl-spark.io/resubmitted-from"  # on a resubmitted copy: the object it copies
)
FENCED_DRIVER = "kubectl-spark.io/fenced-driver"  # on a fence NetworkPolicy: its driver pod
