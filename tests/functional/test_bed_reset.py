"""The real control plane's reset between tests: the next test starts on an empty cluster.

The reset finalizes a deleted namespace itself instead of waiting the namespace controller's
5 s (``tests/beds.py: _finish``); nothing the namespace held may outlive it and show up in a
namespace of the same name made by the next test.
"""

from __future__ import annotations

from typing import Any

from kubectl_spark.sim.client import Client
from tests.beds import SYSTEM_NAMESPACES, reset


def test_a_namespace_made_again_after_the_reset_holds_nothing_of_the_one_before(
    control_plane: Any,
) -> None:
    client = Client(control_plane.url, control_plane.token, control_plane.ca_pem)
    try:
        reset(control_plane)  # whatever a test before left on this worker's control plane
        for round_ in range(2):
            client.create("/api/v1/namespaces", {"metadata": {"name": "spark-dev"}})
            base = "/api/v1/namespaces/spark-dev"
            # Made again at once: a ConfigMap left over from the round before is a 409 here.
            client.create(f"{base}/configmaps", {"metadata": {"name": "kept"}, "data": {}})
            client.create(f"{base}/secrets", {"metadata": {"name": "kept"}, "stringData": {}})
            client.create(
                f"{base}/persistentvolumeclaims",
                {
                    "metadata": {"name": "kept"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Gi"}},
                    },
                },
            )
            reset(control_plane)
            names = {n["metadata"]["name"] for n in client.list("/api/v1/namespaces")}
            assert names == SYSTEM_NAMESPACES, (round_, names)
            for kind in ("configmaps", "secrets", "persistentvolumeclaims"):
                assert (
                    client.list(f"/api/v1/{kind}", fieldSelector="metadata.namespace=spark-dev")
                    == []
                )
    finally:
        client.close()
