"""What the core reads, resource by resource: one list for the snapshot and the live view."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Resource:
    key: str  # the Snapshot field it fills
    base: str  # /api/v1 or /apis/<group>/<version>
    plural: str
    namespaced: bool
    selector: str | None = None  # pods: only Spark's (spark-role)
    # Other served versions, asked in turn when one answers 404 (an older operator's CRD).
    fallbacks: tuple[str, ...] = ()

    @property
    def bases(self) -> tuple[str, ...]:
        return (self.base, *self.fallbacks)

    def path(self, namespace: str | None) -> str:
        if self.namespaced and namespace:
            return f"{self.base}/namespaces/{namespace}/{self.plural}"
        return f"{self.base}/{self.plural}"


PODS = Resource("pods", "/api/v1", "pods", namespaced=True, selector="spark-role")
# Typed as they are read (``core.node.Node``): the core reads no node's JSON.
NODES = Resource("nodes", "/api/v1", "nodes", namespaced=False)
# Read when allowed: a refused or missing one (no spark-operator CRD) is noted, never an error.
OPTIONAL = (
    Resource("jobs", "/apis/batch/v1", "jobs", namespaced=True),
    Resource("events", "/api/v1", "events", namespaced=True),
    NODES,
    Resource(
        "sparkapplications",
        "/apis/sparkoperator.k8s.io/v1beta2",
        "sparkapplications",
        namespaced=True,
    ),
    # The Apache Spark Kubernetes Operator (spark.apache.org): v1 is stored; v1beta1 is all an
    # older release serves. Its SparkApplication shares the Kubeflow one's plural.
    Resource(
        "apacheapps",
        "/apis/spark.apache.org/v1",
        "sparkapplications",
        namespaced=True,
        fallbacks=("/apis/spark.apache.org/v1beta1",),
    ),
    Resource(
        "sparkclusters",
        "/apis/spark.apache.org/v1",
        "sparkclusters",
        namespaced=True,
        fallbacks=("/apis/spark.apache.org/v1beta1",),
    ),
    Resource("volumeattachments", "/apis/storage.k8s.io/v1", "volumeattachments", namespaced=False),
    Resource("pvcs", "/api/v1", "persistentvolumeclaims", namespaced=True),
)
ALL = (PODS, *OPTIONAL)
