"""Which fields the emulator calls unknown, and how each fieldValidation mode answers."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubectl_spark.cluster.apiserver.errors import ApiError
from kubectl_spark.cluster.apiserver.fieldvalidation import check, unknown_fields

JOB: dict[str, Any] = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "pi-driver", "labels": {"a": "b"}},
    "spec": {
        "backoffLimit": 3,
        "podReplacementPolicy": "Failed",
        "template": {
            "metadata": {"labels": {"spark-role": "driver"}, "annotaions": {}},
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "d", "image": "spark", "resources": {"limits": {}}}],
                "initContainers": [{"name": "i", "image": "x", "comand": ["sh"]}],
                "volumez": [],
            },
        },
        "backofLimit": 1,
    },
    "extra": True,
}


def test_unknown_fields_are_named_by_their_path() -> None:
    assert unknown_fields("Job", JOB, "batch/v1") == [
        "extra",
        "spec.backofLimit",
        "spec.template.metadata.annotaions",
        "spec.template.spec.volumez",
        "spec.template.spec.initContainers[0].comand",
    ]
    event = {"metadata": {"name": "e"}, "involvedObject": {}, "reason": "x", "count": 2}
    assert unknown_fields("Event", event) == []
    new_event = {"metadata": {"name": "e"}, "regarding": {}, "note": "x", "involvedObject": {}}
    assert unknown_fields("Event", new_event, "events.k8s.io/v1") == ["involvedObject"]
    # deeper fields and custom resources' specs are not checked (no schemas are held)
    assert unknown_fields("SparkApplication", {"spec": {"anything": 1}}) == []


def test_modes() -> None:
    ignored, warned = copy.deepcopy(JOB), copy.deepcopy(JOB)
    assert check("Ignore", "Job", "batch/v1", ignored) == []
    assert check(None, "Job", "batch/v1", warned)[0] == '299 - "unknown field \\"extra\\""'  # Warn
    for kept in (ignored, warned):  # stored without them, as a typed decode drops them
        assert unknown_fields("Job", kept, "batch/v1") == []
        assert kept["spec"]["template"]["spec"]["initContainers"][0] == {"name": "i", "image": "x"}
    with pytest.raises(ApiError) as err:
        check("Strict", "Job", "batch/v1", JOB)
    assert err.value.code == 400
    assert err.value.message.startswith(
        'Job in version "v1" cannot be handled as a Job: strict decoding error: unknown field "extra"'
    )
    with pytest.raises(ApiError, match="fieldValidation must be one of"):
        check("Loud", "Job", "batch/v1", JOB)
