"""Which drivers are asked for Spark's executor list: running ones the cluster listed."""

from __future__ import annotations

from typing import Any

from kubectl_spark.core.pod import Pod
from kubectl_spark.kube.sparkapi import running_drivers
from tests.core_pods import kept


def _driver(name: str, uid: str) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": "spark",
            "uid": uid,
            "labels": {"spark-role": "driver", "spark-app-selector": f"spark-{uid}"},
        },
        "spec": {"nodeName": "node-a"},
        "status": {"phase": "Running"},
    }


def test_a_kept_copy_of_a_gone_driver_is_not_asked() -> None:
    """Its name may now be another attempt's driver (the Kubeflow operator's ``<app>-driver``):
    the pod proxy would reach that one. The kept copy is told by its source."""
    live = Pod.of(_driver("pi-driver", "2"))
    gone = kept(_driver("pi-driver", "1"), "history", "2026-12-04T00:00:00Z")
    assert running_drivers([gone, live]) == [live]
