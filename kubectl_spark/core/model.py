"""The core's answers: slotted dataclasses, and their JSON form (the public output contract).

They are values: nothing changes one after ``analyze`` returns it (``dataclasses.replace`` makes
a changed copy). They are not ``frozen`` because a frozen dataclass's ``__init__`` costs five
times as much, and the core builds one or two per pod (the performance issue).

The contract (``kubectl spark ls -o json`` → ``SparkAppList``, ``describe -o json`` → one App) is
documented in the README; scripts depend on it: fields may be added, never renamed or removed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from operator import attrgetter, itemgetter
from typing import Literal, get_args, overload

from kubectl_spark.core.jsonvalue import JsonObject
from kubectl_spark.knowledge.exitcodes import ExitCause

API_VERSION = "kubectl-spark/v1"

# Reason codes: extend with care, never rename. VolumeAttachFailure … Gone were in use before
# they were listed: a pod whose volume cannot attach or mount (waiting), and what Spark's own
# executor list says of a pod it saw deleted, found missing, or that is gone with no word
# (sparkview). docs/reasons.md says what evidence yields each, and where Spark or Kubernetes
# defines it. Nested Literals flatten (and repeat nothing), in this order.
ReasonCode = Literal[
    "OOMKilled",
    "PossibleOOM",
    "JvmOutOfMemory",
    "UncaughtException",
    "HeartbeatTimeout",
    "ExitCode",
    "Evicted",
    "Preempted",
    "NodeLost",
    "NodeShutdown",
    "TaintEviction",
    "ApiEviction",
    "DeletedByDriver",
    "DeletedByUser",
    "OwnerGone",
    "Decommissioned",
    "ImagePullFailure",
    "Unschedulable",
    "ContainerConfigError",
    "Completed",
    "DeadlineExceeded",
    "Unknown",
    "VolumeAttachFailure",
    "VolumeMountFailure",
    "Deleted",
    "MissingPod",
    "Gone",
    "AdmissionRejected",
    "SidecarFailed",
    "LivenessProbe",
    "StartupProbe",
    "ContainerStateLost",
    "JobFailed",
    "Sigterm",
    # The Apache operator's own failure states (core.apache), when its status is the evidence.
    "SchedulingFailure",
    "DriverStartTimedOut",
    "DriverReadyTimedOut",
    "ExecutorsStartTimedOut",
    ExitCause,  # the causes Spark's exit codes name (knowledge.exitcodes), listed there once
]
REASON_CODES: tuple[ReasonCode, ...] = get_args(ReasonCode)
CATEGORIES = ("app", "cluster", "driver", "user", "unknown")
ALERT_TYPES = (
    "SplitBrain",
    "ZombieDriver",
    "ReplacementBlocked",
    "NameCollision",
    "OrphanedExecutors",
    "ExecutorChurn",
    "SharedAppId",
    "ForceDeletedOnLostNode",
)


@dataclass(slots=True, kw_only=True)
class Reason:
    """Why a pod stopped, and what Spark made of it.

    Spark keeps two different counts of a lost executor (docs/reasons.md):

    - ``counts_as_failure`` (JSON ``countsAsFailure``): Spark's ``exitCausedByApp``, whether the
      tasks that ran on the executor count toward ``spark.task.maxFailures``
      (``TaskSetManager.executorLost``). False when Spark saw only a deletion (PodDeleted) or the
      driver killed the executor itself.
    - ``counts_toward_max_failures`` (JSON ``countsTowardMaxNumFailures``): whether the
      allocator counted the pod toward ``spark.executor.maxNumFailures``: every executor first
      seen as PodFailed (``ExecutorPodsAllocator``, ``registerExecutorFailure``). The driver
      exits 11 once the count passes the limit. Always False for a driver.
    """

    category: str
    code: ReasonCode
    exit_code: int | None
    counts_as_failure: bool
    message: str
    evidence: tuple[str, ...] = ()
    counts_toward_max_failures: bool = False

    def to_json(self) -> JsonObject:
        return {
            "category": self.category,
            "code": self.code,
            "exitCode": self.exit_code,
            "countsAsFailure": self.counts_as_failure,
            "countsTowardMaxNumFailures": self.counts_toward_max_failures,
            "message": self.message,
            "evidence": list(self.evidence),
        }


@dataclass(slots=True)
class Executor:
    id: str
    pod: str
    uid: str
    node: str | None
    phase: str
    state: str
    restarts: int
    reason: Reason | None
    created_at: str | None = None
    ended_at: str | None = None
    # Where it was read: the pod in the cluster, a watch's last sight of a deleted pod, the
    # local history store, or Spark's own executor list (the pod is gone).
    source: str = "cluster"
    # Why it has not started, or keeps restarting, while nothing is lost (reason is None).
    waiting: Reason | None = None
    # Spark's own ids for the JVMs this pod ran, in order, where the pod's label does not carry
    # one (the StatefulSet and Deployment allocators' EXECID): found by the pod's IP in Spark's
    # executor list. Spark's UI and logs say "executor 3"; ``logs APP/1/exec-3`` finds the pod.
    spark_ids: tuple[str, ...] = ()

    def to_json(self) -> JsonObject:
        out: JsonObject = {
            "id": self.id,
            "pod": self.pod,
            "uid": self.uid,
            "node": self.node,
            "phase": self.phase,
            "state": self.state,
            "restarts": self.restarts,
            "reason": self.reason.to_json() if self.reason else None,
            "waiting": self.waiting.to_json() if self.waiting else None,
            "source": self.source,
        }
        if self.spark_ids:  # only where known
            out["sparkIds"] = list(self.spark_ids)
        return out


def in_id_order(executors: list[Executor]) -> tuple[Executor, ...]:
    """By id as a number, then pod name (ties keep their order); ids that are not numbers last.

    When every id is a number (the usual case), the sort keys are made by C loops (``map``,
    ``zip``) rather than a Python key function per executor, which cost a twentieth of the core.
    """
    ids = list(map(_ID, executors))
    if all(map(str.isdecimal, ids)):
        keyed = zip(map(int, ids), map(_POD, executors), range(len(ids)), executors, strict=True)
        return tuple(map(itemgetter(3), sorted(keyed)))
    return tuple(sorted(executors, key=_exec_sort))


_ID = attrgetter("id")
_POD = attrgetter("pod")


def _exec_sort(executor: Executor) -> tuple[int, str]:
    return (int(executor.id) if executor.id.isdecimal() else 1 << 30, executor.pod)


@dataclass(slots=True)
class Attempt:
    number: int
    driver_pod: str | None
    uid: str | None
    node: str | None
    phase: str
    state: str
    created_at: str | None
    started_at: str | None
    ended_at: str | None
    restarts: int
    fenced: bool
    reason: Reason | None
    executors: tuple[Executor, ...] = ()
    # Executor ids this attempt used that no source explains (gaps in Spark's sequence).
    unknown_losses: int = 0
    # No driver pod, ever: executors that name no owner (client mode); the notes say so in JSON.
    outside: bool = False
    # The driver runs in a pod spark-submit did not make (no spark-role=driver label: Spark's
    # client mode in a notebook's pod, which its executors name as owner). Not in JSON.
    driver_unlabelled: bool = False
    # Why its driver has not started, or keeps restarting, while nothing is lost (reason is None).
    waiting: Reason | None = None

    def driver_shown(self) -> str:
        """The driver pod's name, or why there is none, for people."""
        return self.driver_pod or ("<outside the cluster>" if self.outside else "<gone>")

    def to_json(self) -> JsonObject:
        return {
            "number": self.number,
            "driverPod": self.driver_pod,
            "uid": self.uid,
            "node": self.node,
            "phase": self.phase,
            "state": self.state,
            "createdAt": self.created_at,
            "startedAt": self.started_at,
            "endedAt": self.ended_at,
            "restarts": self.restarts,
            "fenced": self.fenced,
            "reason": self.reason.to_json() if self.reason else None,
            "waiting": self.waiting.to_json() if self.waiting else None,
            "executors": [e.to_json() for e in self.executors],
            "unknownLosses": self.unknown_losses,
        }


@dataclass(slots=True)
class Alert:
    type: str
    message: str
    attempts: tuple[int, ...] = ()
    action: str = ""

    def to_json(self) -> JsonObject:
        return {"type": self.type, "message": self.message, "attempts": list(self.attempts)}


@dataclass(slots=True)
class HistoryEntry:
    time: str | None
    kind: str
    attempt: int | None
    executor: str | None
    message: str

    def to_json(self) -> JsonObject:
        return {
            "time": self.time,
            "kind": self.kind,
            "attempt": self.attempt,
            "executor": self.executor,
            "message": self.message,
        }


class History(Sequence["HistoryEntry"]):
    """An application's timeline, built the first time it is read.

    ``ls`` shows no timeline, and a live view reads one application's at a time; building every
    application's on each analysis cost as much as grouping its executors (the performance
    issue). ``describe``, ``history``, JSON output and the TUI read it as any tuple.
    """

    __slots__ = ("_build", "_entries")

    def __init__(self, build: Callable[[], tuple[HistoryEntry, ...]]) -> None:
        self._build: Callable[[], tuple[HistoryEntry, ...]] | None = build
        self._entries: tuple[HistoryEntry, ...] = ()

    def _read(self) -> tuple[HistoryEntry, ...]:
        build = self._build
        if build is not None:
            self._entries = build()
            self._build = None  # the data it was built from can go
        return self._entries

    @overload
    def __getitem__(self, index: int) -> HistoryEntry: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[HistoryEntry, ...]: ...
    def __getitem__(self, index: int | slice) -> HistoryEntry | tuple[HistoryEntry, ...]:
        return self._read()[index]

    def __len__(self) -> int:
        return len(self._read())

    def __iter__(self) -> Iterator[HistoryEntry]:
        return iter(self._read())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return self._read() == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"History({self._read()!r})"


@dataclass(slots=True)
class App:
    namespace: str
    name: str
    app_id: str
    source: str  # job, pod, sparkapplication or apache-operator
    state: str
    created_at: str | None
    alerts: tuple[Alert, ...] = ()
    attempts: tuple[Attempt, ...] = ()
    history: Sequence[HistoryEntry] = ()  # a tuple, or a History built when first read
    owner: str = ""  # the Job or SparkApplication name, when there is one
    sources: tuple[str, ...] = ("cluster",)  # what was read: cluster, watch, history, spark-api
    notes: tuple[str, ...] = ()  # what could not be read, and why (said, never an error)
    schedule: str = ""  # the ScheduledSparkApplication this run was started by, if any
    # The Apache operator's own view (core.apache.operator_view): state, attempt id, restarts.
    operator: JsonObject | None = None
    # The kubeconfig context it was read through, when several clusters are read at once
    # (``--context a,b``); "" for one. Set by the reader, never by the analysis.
    context: str = ""

    @property
    def current(self) -> Attempt | None:
        return self.attempts[-1] if self.attempts else None

    def to_json(self) -> JsonObject:
        out: JsonObject = {
            "namespace": self.namespace,
            "name": self.name,
            "appId": self.app_id,
            "source": self.source,
            "state": self.state,
            "createdAt": self.created_at,
            "alerts": [a.to_json() for a in self.alerts],
            "attempts": [a.to_json() for a in self.attempts],
            "history": [h.to_json() for h in self.history],
            "sources": list(self.sources),
            "notes": list(self.notes),
            "schedule": self.schedule or None,
            "operator": dict(self.operator) if self.operator is not None else None,
        }
        if self.context:  # only where known: one cluster's answer is as before
            out["context"] = self.context
        return out


@dataclass(slots=True)
class UngroupedPod:
    """A pod with a spark-role label that cannot be placed in an application: shown, never dropped."""

    namespace: str
    pod: str
    uid: str
    role: str
    why: str
    context: str = ""  # as App.context: set when several clusters are read at once

    def to_json(self) -> JsonObject:
        out: JsonObject = {
            "namespace": self.namespace,
            "pod": self.pod,
            "uid": self.uid,
            "role": self.role,
            "why": self.why,
        }
        if self.context:  # only where known: one cluster's answer is as before
            out["context"] = self.context
        return out


@dataclass(slots=True)
class Analysis:
    apps: tuple[App, ...] = ()
    ungrouped: tuple[UngroupedPod, ...] = field(default_factory=tuple)

    def in_context(self, context: str) -> Analysis:
        """The same answer read through ``context``: each application and pod says so."""
        return Analysis(
            tuple(replace(a, context=context) for a in self.apps),
            tuple(replace(u, context=context) for u in self.ungrouped),
        )

    def to_json(self) -> JsonObject:
        return {
            "apiVersion": API_VERSION,
            "kind": "SparkAppList",
            "items": [a.to_json() for a in self.apps],
            "ungrouped": [u.to_json() for u in self.ungrouped],
        }
