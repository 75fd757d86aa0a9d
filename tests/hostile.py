"""Odd and hostile cluster data for property tests: text that must never reach a terminal raw
(NASTY, RAW, hostile) and snapshots made of it (clusters); any JSON (json_value); a plain
running pod (RUNNING) and pods a signal or a malformed field away from it (varied_pods)."""

from __future__ import annotations

import copy
import re
from datetime import UTC, datetime
from typing import Any

from hypothesis import strategies as st

from kubectl_spark.core.inputs import Snapshot
from kubectl_spark.core.node import nodes_of
from tests.core_pods import typed_snapshot

# What must never reach a terminal raw: C0 (but newline and tab), DEL, C1, bidi overrides.
# Nor what is invisible: zero-width characters, joiners, separators, the byte-order mark.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


@st.composite
def clusters(draw: Any) -> Snapshot:
    app_name = draw(hostile)
    app_id = draw(st.one_of(st.just("spark-a"), hostile))
    labels = {
        "spark-app-selector": app_id,
        "spark-app-name": app_name,
        draw(hostile): draw(hostile),
    }
    node = draw(hostile)
    driver = {
        "metadata": {
            "name": draw(hostile),
            "namespace": "ns",
            "uid": "d",
            "creationTimestamp": "2026-03-01T02:00:00Z",
            "labels": {**labels, "spark-role": "driver"},
            "annotations": {draw(hostile): draw(hostile)},
        },
        "spec": {"nodeName": node},
        "status": {
            "phase": draw(st.sampled_from(["Running", "Failed", "Pending"])),
            "message": draw(hostile),
        },
    }
    pods = [driver]
    for i in range(draw(st.integers(0, 3))):
        pods.append(
            {
                "metadata": {
                    "name": draw(hostile),
                    "namespace": "ns",
                    "uid": f"e{i}",
                    "creationTimestamp": "2026-03-01T02:01:00Z",
                    "labels": {
                        **labels,
                        "spark-role": "executor",
                        "spark-exec-id": draw(st.one_of(st.just(str(i + 1)), hostile)),
                    },
                    "ownerReferences": [
                        {"kind": "Pod", "name": "d", "uid": "d", "controller": True}
                    ],
                },
                "spec": {"nodeName": node, "restartPolicy": "Never"},
                "status": {
                    "phase": "Failed",
                    "reason": draw(st.one_of(st.just("Evicted"), hostile)),
                    "message": draw(hostile),
                    "containerStatuses": [
                        {
                            "name": "spark-kubernetes-executor",
                            "state": {
                                "terminated": {
                                    "exitCode": draw(st.sampled_from([137, 52, 1, 143])),
                                    "reason": draw(st.one_of(st.just("OOMKilled"), hostile)),
                                    "message": draw(hostile),
                                }
                            },
                        }
                    ],
                },
            }
        )
    event = {
        "metadata": {"uid": "ev", "namespace": "ns", "creationTimestamp": "2026-03-01T02:02:00Z"},
        "involvedObject": {
            "kind": "Pod",
            "namespace": "ns",
            "name": pods[-1]["metadata"]["name"],
            "uid": pods[-1]["metadata"]["uid"],
        },
        "reason": draw(st.one_of(st.sampled_from(["Evicted", "Preempted", "Killing"]), hostile)),
        "message": draw(hostile),
        "type": "Warning",
        "source": {"component": draw(hostile)},
    }
    nodes = [
        {
            "metadata": {"name": node},
            "status": {
                "conditions": [
                    {
                        "type": "Ready",
                        "status": draw(st.sampled_from(["True", "Unknown"])),
                        "message": draw(hostile),
                    }
                ]
            },
        }
    ]
    return typed_snapshot(pods=pods, events=[event], nodes=nodes_of(nodes), now=NOW)


NOW = datetime(2026, 3, 1, 3, 0, tzinfo=UTC)


NASTY = [
    "[bold red]x[/]",
    "\x1b[31mred\x1b[0m",
    "\x1b]8;;https://evil.example\x07click\x1b]8;;\x07",
    "\x1b]52;c;cGF5bG9hZA==\x07",  # OSC 52: write the clipboard
    "\u202egnp.exe",
    "\u2066isolate\u2069",
    "line\r\nforged: yes",
    "\x00\x07\x08\x9b",
    "zero\u200bwidth\u200djoin\u2060word\ufeffbom",
    "x" * 5000,
]


hostile = st.one_of(
    st.sampled_from(NASTY),
    st.text(max_size=60),
    st.text(alphabet=st.characters(max_codepoint=0x2070), max_size=30),
)


# ------------------------------------------------------------------------- properties
json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=8), st.floats(allow_nan=False)
)


json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


RUNNING: dict[str, Any] = {
    "metadata": {
        "name": "app-exec-1",
        "namespace": "spark",
        "uid": "u-1",
        "creationTimestamp": "2026-03-01T02:00:00Z",
        "labels": {
            "spark-role": "executor",
            "spark-app-selector": "spark-1",
            "spark-exec-id": "1",
            "spark-app-name": "app",
        },
        "ownerReferences": [{"kind": "Pod", "name": "d", "uid": "d", "controller": True}],
    },
    "spec": {"nodeName": "node-1", "restartPolicy": "Never"},
    "status": {
        "phase": "Running",
        "containerStatuses": [
            {"name": "spark-kubernetes-executor", "restartCount": 0, "state": {"running": {}}}
        ],
    },
}


odd = st.one_of(
    st.none(),
    st.integers(-3, 3),
    st.booleans(),
    st.floats(allow_nan=False),
    st.just([]),
    st.just({}),
)


text = st.sampled_from(["", "x", "true", "Running", "2026-03-01T02:00:00+01:00", "not a time"])


value = st.one_of(text, odd)


# What a pod may say of a loss (each one makes it not quiet), and ways a pod can be malformed.
SIGNALS: list[tuple[tuple[Any, ...], Any]] = [
    (("metadata", "deletionTimestamp"), "2026-03-01T03:00:00Z"),
    (("metadata", "deletionTimestamp"), 0),
    (("metadata", "labels", "spark-exec-inactive"), "true"),
    (("metadata", "labels", "kubectl-spark.io/fenced"), "true"),
    # a kept copy of a gone pod, as its keeper marks it (``core.pod.Pod.source``)
    (("source",), "watch"),
    (("source",), "history"),
    (("status", "phase"), "Failed"),
    (("status", "phase"), "Succeeded"),
    (("status", "phase"), "Pending"),
    (("status", "reason"), "Evicted"),
    (("status", "reason"), "Preempting"),
    (
        ("status", "conditions"),
        [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}],
    ),
    (
        ("status", "conditions"),
        [{"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager"}],
    ),
    (
        ("status", "containerStatuses", 0, "state"),
        {"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
    ),
    (("status", "containerStatuses", 0, "state"), {"terminated": {"exitCode": 0}}),
    (
        ("status", "containerStatuses"),
        [
            {"name": "c", "state": {"terminated": {"exitCode": 1}}},
            {"name": "spark-kubernetes-executor", "state": {"running": {}}},
        ],
    ),
    (
        ("status", "containerStatuses"),
        [
            {"name": "sidecar", "state": {"running": {}}},
            {"name": "spark-kubernetes-executor", "state": {"terminated": {"exitCode": 52}}},
        ],
    ),
    # Init containers: one that failed, one crash-looping, one whose image cannot be pulled,
    # and a sidecar (an init container that always restarts) that restarted twice.
    (
        ("status", "initContainerStatuses"),
        [{"name": "fetch-jars", "restartCount": 0, "state": {"terminated": {"exitCode": 1}}}],
    ),
    (
        ("status", "initContainerStatuses"),
        [
            {"name": "istio-init", "restartCount": 0, "state": {"terminated": {"exitCode": 0}}},
            {
                "name": "fetch-jars",
                "restartCount": 3,
                "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                "lastState": {"terminated": {"exitCode": 2, "reason": "Error"}},
            },
        ],
    ),
    (
        ("status", "initContainerStatuses"),
        [{"name": "fetch-jars", "state": {"waiting": {"reason": "ImagePullBackOff"}}}],
    ),
    (
        ("status", "initContainerStatuses"),
        [
            {
                "name": "proxy",
                "restartCount": 2,
                "started": True,
                "ready": True,
                "state": {"running": {}},
                "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2026-03-01T02:30:00Z"}},
            }
        ],
    ),
    (("spec", "initContainers"), [{"name": "proxy", "image": "envoy", "restartPolicy": "Always"}]),
    (("status", "conditions"), [{"type": "Initialized", "status": "True"}]),
]


MALFORMED: list[tuple[tuple[Any, ...], st.SearchStrategy[Any]]] = [
    (("metadata", "name"), value),
    (("metadata", "uid"), value),
    (("metadata", "namespace"), value),
    (("metadata", "creationTimestamp"), value),
    (("metadata", "labels"), st.one_of(odd, st.just({"spark-role": "driver"}))),
    (("metadata", "labels", "spark-role"), value),
    (("metadata", "labels", "spark-exec-id"), value),
    (("metadata", "labels", "spark-exec-inactive"), value),
    (("metadata", "labels", "kubectl-spark.io/fenced"), value),
    (("metadata", "labels", "sparkoperator.k8s.io/app-name"), value),
    (("metadata", "annotations"), odd),
    (("metadata", "annotations", "kubectl-spark.io/source"), value),  # no longer a mark
    (("source",), value),
    (("metadata", "annotations", "kubectl-spark.io/action"), value),
    (("metadata", "deletionTimestamp"), odd),
    (
        ("metadata", "ownerReferences"),
        st.one_of(odd, st.just([{"controller": True}]), st.just(["x"])),
    ),
    (("metadata", "ownerReferences", 0, "controller"), value),
    (("metadata", "ownerReferences", 0, "uid"), value),
    (("spec",), odd),
    (("spec", "nodeName"), value),
    (("status",), odd),
    (("status", "phase"), value),
    (("status", "reason"), value),
    (("status", "conditions"), st.one_of(odd, st.just([{"type": "Ready", "status": "True"}, "x"]))),
    (("status", "containerStatuses"), st.one_of(odd, st.just(["x"]), st.just([{}]))),
    (("status", "containerStatuses", 0, "restartCount"), value),
    (("status", "containerStatuses", 0, "name"), value),
    (("status", "containerStatuses", 0, "state"), odd),
    (("status", "initContainerStatuses"), st.one_of(odd, st.just(["x"]), st.just([{}]))),
    (("status", "initContainerStatuses", 0, "restartCount"), value),
    (("status", "initContainerStatuses", 0, "name"), value),
    (("spec", "initContainers"), st.one_of(odd, st.just(["x"]), st.just([{"name": 3}]))),
]


def set_at(pod: dict[str, Any], path: tuple[Any, ...], new: Any, delete: bool) -> None:
    where: Any = pod
    for key in path[:-1]:
        try:
            where = where[key]
        except (KeyError, IndexError, TypeError):
            return
    try:
        if delete:
            del where[path[-1]]
        else:
            where[path[-1]] = new
    except (KeyError, IndexError, TypeError):
        return


@st.composite
def varied_pods(draw: Any) -> dict[str, Any]:
    pod = copy.deepcopy(RUNNING)
    for path, new in draw(st.lists(st.sampled_from(SIGNALS), max_size=2)):
        set_at(pod, path, copy.deepcopy(new), delete=False)
    for path, values in draw(st.lists(st.sampled_from(MALFORMED), max_size=2)):
        set_at(pod, path, draw(values), draw(st.booleans()))
    return pod
