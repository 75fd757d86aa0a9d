"""The emulator's server-side printing: kubectl's STATUS and RESTARTS rules, and negotiation."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kubectl_spark.cluster.apiserver import tables

NOW = datetime(2026, 3, 1, 3, 0, tzinfo=UTC)
KUBECTL_ACCEPT = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,"
    "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)


@pytest.mark.parametrize(
    ("accept", "chosen"),
    [
        (KUBECTL_ACCEPT, "meta.k8s.io/v1"),
        ("application/json;as=Table;v=v1beta1;g=meta.k8s.io", "meta.k8s.io/v1beta1"),
        ("application/json", None),
        ("application/json, application/json;as=Table;v=v1;g=meta.k8s.io", None),
        ("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json", None),
        ("application/json;as=Table;v=v2;g=meta.k8s.io,application/json", None),
        (None, None),
    ],
)
def test_the_clients_first_acceptable_form_wins(accept: str | None, chosen: str | None) -> None:
    assert tables.requested(accept) == chosen


def pod(**status: Any) -> dict[str, Any]:
    meta = status.pop("meta", {})
    spec: dict[str, Any] = {"containers": [{"name": "a"}, {"name": "b"}]}
    if "init" in status:
        spec["initContainers"] = status.pop("init")
    return {
        "metadata": {"name": "p", "creationTimestamp": "2026-03-01T02:00:00Z", **meta},
        "spec": spec,
        "status": status,
    }


INIT = [{"name": "istio-init"}, {"name": "fetch-jars"}]
DONE = {"name": "istio-init", "state": {"terminated": {"reason": "Completed", "exitCode": 0}}}


def container(
    state: dict[str, Any], *, ready: bool = False, restarts: int = 0, **more: Any
) -> dict[str, Any]:
    return {"name": "a", "state": state, "ready": ready, "restartCount": restarts, **more}


RUNNING = {"running": {"startedAt": "2026-03-01T02:00:00Z"}}
PODINITIALIZING = container({"waiting": {"reason": "PodInitializing"}})


@pytest.mark.parametrize(
    ("obj", "ready", "status", "restarts"),
    [
        (pod(phase="Pending"), "0/2", "Pending", "0"),
        (pod(phase="Failed", reason="Evicted"), "0/2", "Evicted", "0"),
        (
            pod(
                phase="Pending",
                containerStatuses=[container({"waiting": {"reason": "ImagePullBackOff"}})],
            ),
            "0/2",
            "ImagePullBackOff",
            "0",
        ),
        (
            pod(
                phase="Failed",
                containerStatuses=[
                    container({"terminated": {"reason": "OOMKilled", "exitCode": 137}})
                ],
            ),
            "0/2",
            "OOMKilled",
            "0",
        ),
        (
            pod(phase="Failed", containerStatuses=[container({"terminated": {"exitCode": 52}})]),
            "0/2",
            "ExitCode:52",
            "0",
        ),
        (
            pod(
                phase="Failed",
                containerStatuses=[container({"terminated": {"exitCode": 0, "signal": 9}})],
            ),
            "0/2",
            "Signal:9",
            "0",
        ),
        (  # the last container's reason wins (they are read from the last to the first)
            pod(
                phase="Running",
                containerStatuses=[
                    container({"terminated": {"reason": "Error", "exitCode": 1}}),
                    container(RUNNING, ready=True),
                ],
            ),
            "1/2",
            "Error",
            "0",
        ),
        (
            pod(
                phase="Running",
                containerStatuses=[
                    container(
                        RUNNING,
                        ready=True,
                        restarts=3,
                        lastState={"terminated": {"finishedAt": "2026-03-01T02:55:00Z"}},
                    ),
                ],
            ),
            "1/2",
            "Running",
            "3 (5m ago)",
        ),
        (  # a sidecar still running after the main container completed
            pod(
                phase="Running",
                conditions=[{"type": "Ready", "status": "False"}],
                containerStatuses=[
                    container(RUNNING, ready=True),
                    container({"terminated": {"reason": "Completed", "exitCode": 0}}),
                ],
            ),
            "1/2",
            "NotReady",
            "0",
        ),
        (
            pod(phase="Running", meta={"deletionTimestamp": "2026-03-01T03:00:30Z"}),
            "0/2",
            "Terminating",
            "0",
        ),
        (
            pod(phase="Failed", meta={"deletionTimestamp": "2026-03-01T03:00:30Z"}),
            "0/2",
            "Failed",
            "0",
        ),
        (
            pod(
                phase="Running",
                reason="NodeLost",
                meta={"deletionTimestamp": "2026-03-01T03:00:30Z"},
            ),
            "0/2",
            "Unknown",
            "0",
        ),
        (
            pod(
                phase="Pending", conditions=[{"type": "PodScheduled", "reason": "SchedulingGated"}]
            ),
            "0/2",
            "SchedulingGated",
            "0",
        ),
        (  # an init container failed: the main containers never ran
            pod(
                phase="Failed",
                init=INIT,
                initContainerStatuses=[
                    DONE,
                    {
                        "name": "fetch-jars",
                        "state": {"terminated": {"reason": "Error", "exitCode": 1}},
                    },
                ],
                containerStatuses=[PODINITIALIZING],
            ),
            "0/2",
            "Init:Error",
            "0",
        ),
        (  # without a reason, the signal
            pod(
                phase="Failed",
                init=INIT,
                initContainerStatuses=[
                    {"name": "istio-init", "state": {"terminated": {"exitCode": 137, "signal": 9}}}
                ],
            ),
            "0/2",
            "Init:Signal:9",
            "0",
        ),
        (  # restarting init container: its restarts count, not the waiting main containers'
            pod(
                phase="Pending",
                init=INIT,
                initContainerStatuses=[
                    DONE,
                    {
                        "name": "fetch-jars",
                        "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                        "restartCount": 3,
                        "lastState": {"terminated": {"finishedAt": "2026-03-01T02:55:00Z"}},
                    },
                ],
                containerStatuses=[PODINITIALIZING],
            ),
            "0/2",
            "Init:CrashLoopBackOff",
            "3 (5m ago)",
        ),
        (  # the second of two init containers runs
            pod(
                phase="Pending",
                init=INIT,
                initContainerStatuses=[DONE, {"name": "fetch-jars", "state": RUNNING}],
                containerStatuses=[PODINITIALIZING],
            ),
            "0/2",
            "Init:1/2",
            "0",
        ),
        (  # a termination without an exit code is Go's zero value, 0: a completed one
            pod(
                phase="Pending",
                init=INIT,
                initContainerStatuses=[
                    {"name": "istio-init", "state": {"terminated": {}}},
                    {"name": "fetch-jars", "state": RUNNING},
                ],
                containerStatuses=[PODINITIALIZING],
            ),
            "0/2",
            "Init:1/2",
            "0",
        ),
        (  # a started sidecar (an init container that always restarts) counts as a container
            pod(
                phase="Running",
                init=[{"name": "proxy", "restartPolicy": "Always"}],
                conditions=[{"type": "Initialized", "status": "True"}],
                initContainerStatuses=[
                    {
                        "name": "proxy",
                        "state": RUNNING,
                        "started": True,
                        "ready": True,
                        "restartCount": 2,
                    }
                ],
                containerStatuses=[container(RUNNING, ready=True)],
            ),
            "2/3",
            "Running",
            "2",
        ),
    ],
)
def test_pod_rows_read_as_kubectl_prints_them(
    obj: dict[str, Any], ready: str, status: str, restarts: str
) -> None:
    doc = tables.table(
        "pods", [obj], NOW, version="meta.k8s.io/v1", include_object=None, list_meta={}
    )
    cells = doc["rows"][0]["cells"]
    assert cells[:5] == ["p", ready, status, restarts, "60m"]
    assert doc["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    assert [c["priority"] for c in doc["columnDefinitions"]] == [0, 0, 0, 0, 0, 1, 1, 1, 1]


def test_hostile_shapes_still_make_a_row() -> None:
    for odd in (
        {},
        {"metadata": [], "status": "x"},
        {"status": {"containerStatuses": ["x", {"state": 3, "restartCount": "2"}]}},
        {
            "spec": {"initContainers": ["y", {"name": [], "restartPolicy": "Always"}]},
            "status": {"initContainerStatuses": ["x", {"name": [], "state": 3}]},
        },
    ):
        for plural in (
            "pods",
            "nodes",
            "namespaces",
            "events",
            "jobs",
            "sparkapplications",
            "leases",
        ):
            doc = tables.table(
                plural, [odd], NOW, version="meta.k8s.io/v1", include_object="None", list_meta={}
            )
            assert len(doc["rows"]) == 1 and "object" not in doc["rows"][0]


@pytest.mark.parametrize(
    ("status", "spec", "cells"),
    [
        ({}, {}, ["Running", "0/1", ""]),
        (
            {"startTime": "2026-03-01T02:50:00Z", "failed": 2},
            {"completions": 1},
            ["Running", "0/1", "10m"],
        ),
        (
            {
                "startTime": "2026-03-01T02:00:00Z",
                "completionTime": "2026-03-01T02:07:00Z",
                "succeeded": 1,
                "conditions": [{"type": "Complete", "status": "True"}],
            },
            {"completions": 1},
            ["Complete", "1/1", "7m"],
        ),
        (
            {"conditions": [{"type": "FailureTarget", "status": "True"}]},
            {"parallelism": 3},
            ["FailureTarget", "0/1 of 3", ""],
        ),
        (
            {
                "conditions": [
                    {"type": "Failed", "status": "True"},
                    {"type": "Suspended", "status": "True"},
                ]
            },
            {},
            ["Failed", "0/1", ""],
        ),
    ],
)
def test_job_rows_read_as_kubectl_prints_them(
    status: dict[str, Any], spec: dict[str, Any], cells: list[str]
) -> None:
    job = {
        "metadata": {"name": "pi-driver", "creationTimestamp": "2026-03-01T02:00:00Z"},
        "spec": {
            **spec,
            "selector": {
                "matchLabels": {"batch.kubernetes.io/controller-uid": "u"},
                "matchExpressions": [{"key": "app", "operator": "In", "values": ["b", "a"]}],
            },
            "template": {
                "spec": {"containers": [{"name": "spark-kubernetes-driver", "image": "spark:3.5"}]}
            },
        },
        "status": status,
    }
    doc = tables.table(
        "jobs", [job], NOW, version="meta.k8s.io/v1", include_object=None, list_meta={}
    )
    row = doc["rows"][0]["cells"]
    assert row[1:4] == cells
    assert row[4] == "60m"
    assert row[5:] == [
        "spark-kubernetes-driver",
        "spark:3.5",
        "app in (a,b),batch.kubernetes.io/controller-uid=u",
    ]


def test_sparkapplication_rows_follow_the_operators_printer_columns() -> None:
    app = {
        "metadata": {"name": "pi", "creationTimestamp": "2026-03-01T02:58:00Z"},
        "status": {
            "applicationState": {"state": "FAILING"},
            "executionAttempts": 2,
            "lastSubmissionAttemptTime": "2026-03-01T02:59:00Z",
        },
    }
    doc = tables.table(
        "sparkapplications", [app], NOW, version="meta.k8s.io/v1", include_object=None, list_meta={}
    )
    assert [c["name"] for c in doc["columnDefinitions"]] == [
        "Name",
        "Status",
        "Attempts",
        "Start",
        "Finish",
        "Age",
    ]
    assert doc["rows"][0]["cells"] == ["pi", "FAILING", "2", "2026-03-01T02:59:00Z", None, "2m"]
