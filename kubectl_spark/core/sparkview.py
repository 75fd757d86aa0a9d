"""What outlives an executor's pod: Spark's own executor list, and copies kept by a watch or store.

With Spark's defaults the driver deletes a failed executor pod seconds after it fails
(``spark-on-kubernetes.md`` §2.4), so the pod's last state survives only where something kept
it: a watch that saw the DELETED event, the local history store (``kubectl spark record``), or
the driver itself, whose REST API lists dead executors with ``removeReason`` (§5; read through
the API server's pod proxy while the driver lives). A kept copy says so in
its ``source`` and ``seen_at`` fields (``core.pod.kept_copy``), never in an annotation a pod in
the cluster could carry too; Spark's list arrives as ``Snapshot.spark_views``, keyed by the
driver pod's uid.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

from kubectl_spark.knowledge.labels import EXECUTOR_CONTAINER
from kubectl_spark.knowledge.times import spark_time

from . import raw, slim
from .inputs import Snapshot
from .losses import classify
from .model import Attempt, Executor, Reason, in_id_order
from .pod import (
    ContainerState,
    ContainerStatus,
    Pod,
    PodCondition,
    PodSpec,
    PodStatus,
    Terminated,
    Waiting,
    kept_copy,
)
from .raw import RawObject
from .reasons import PodContext, event_evidence, never_started
from .removals import given_back

_EXIT = re.compile(r"exited with exit code (-?\d+)")
# The verdicts of a pod that never ran (reasons.never_started): with Spark's "Executor killed
# by driver." they say why it had not started, and Spark's word is the end.
NEVER_RAN = frozenset(
    {
        "Unschedulable",
        "ImagePullFailure",
        "ContainerConfigError",
        "VolumeAttachFailure",
        "VolumeMountFailure",
        "Gone",
    }
)
# Words of a decommission the driver itself decided (see reason_from_spark).
DRIVER_DECOMMISSIONS = ("Rolling via", "spark scale down", "excluded", "actually decommissioning")


def only_kept(pods: Iterable[Pod], uid: str) -> bool:
    """Whether the pod ``uid`` is known only as a kept copy (watch, history, recorder) of a gone pod."""
    pod = next((p for p in pods if p.metadata.uid == uid), None)
    return pod is not None and pod.kept


def kept_evidence(pod: Pod) -> str:
    seen = pod.seen_at or "?"
    source = pod.source
    if source == "watch":
        return f"the pod is gone; its last state was kept from a watch (DELETED event at {seen})"
    if source == "recorder":
        return f"the pod is gone; its last state is from the in-cluster recorder (seen {seen})"
    return f"the pod is gone; its last state is from the local history store (seen {seen})"


def _line(text: str, prefix: str) -> str:
    for line in text.splitlines():
        if line.strip().startswith(prefix):
            return line.strip()[len(prefix) :].strip()
    return ""


def _api_line(text: str, prefix: str) -> str:
    """What the API told Spark on the line ``prefix`` starts ("" when it told nothing).

    Spark 3.0-3.1 wrote "N/A" where the API gave none (later releases leave the line empty).
    """
    said = _line(text, prefix)
    return "" if said in ("N/A", "null") else said


def _termination_reason(text: str, exit_code: int) -> str:
    """The termination reason of Spark's own container among those Spark's text describes.

    ExecutorPodsLifecycleManager.containersDescription describes every container of the pod,
    each from its "container name:" line, in the order of the pod's status: the kubelet sorts
    it by name (status_manager.go normalizeStatus), so a helper or sidecar often comes first.
    Spark's container is the executor's default name; under another template name, the one
    that ended with the exit code Spark reports.
    """
    blocks: list[dict[str, str]] = []
    for line in text.splitlines():
        key, _, value = line.strip().partition(": ")
        if key == "container name":
            blocks.append({})
        if blocks:
            blocks[-1][key] = value.strip()
    if not blocks:  # a text without container names: its one reason line, if any
        return _line(text, "termination reason:")
    mine = [b for b in blocks if b.get("container name") == EXECUTOR_CONTAINER] or [
        b for b in blocks if b.get("exit code") == str(exit_code)
    ]
    return mine[0].get("termination reason", "") if mine else ""


KILLED_BY_DRIVER = "Executor killed by driver"


def reason_from_spark(
    summary: Mapping[str, object], origin: str = "Spark's driver", expired: str = ""
) -> Reason:
    """Spark's removeReason, classified by the same rules as a pod (its text quotes the pod).

    ``origin``: who told it, the running driver or a History Server replaying its event log.
    ``expired``: the driver's log line saying it expired this executor's heartbeats.
    """
    text = str(summary.get("removeReason") or "")
    # Spark 3.x/4.x start the text of an exited executor with a newline
    # (ExecutorPodsLifecycleManager.exitReasonMessage: a ``s"""`` literal whose first line is
    # empty, then blank lines where the API gave no reason or message): its first words are
    # on the first line that has any.
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    first = first or "(no reason given)"
    removed = spark_time(summary.get("removeTime"))
    evidence = (f"from {origin} (allexecutors), removed at {removed}: {first}",)
    if first.startswith(KILLED_BY_DRIVER) and expired:
        # On Kubernetes an expiry is recorded as the driver's kill (kube/sparkapi.py): Spark
        # counts neither its tasks (ExecutorKilled) nor the executor; the cause is unknown.
        return Reason(
            category="unknown",
            code="HeartbeatTimeout",
            exit_code=None,
            counts_as_failure=False,
            message="the driver heard no heartbeat from it in time (a long GC pause, or a network "
            'or node problem) and killed it; Spark records that as "Executor killed by driver."',
            evidence=(*evidence, f"the driver's log: {expired}"),
        )
    if first.startswith(KILLED_BY_DRIVER):
        return Reason(
            category="driver",
            code="DeletedByDriver",
            exit_code=None,
            counts_as_failure=False,
            message="the driver asked for it (dynamic allocation gave it back, or a kill request)",
            evidence=evidence,
        )
    if first.startswith("Executor heartbeat timed out"):
        # HeartbeatReceiver.expireDeadHosts: the driver heard nothing for
        # spark.network.timeout, reports ExecutorProcessLost (its tasks count) and kills and
        # replaces the executor (killAndReplaceExecutor): the pod is then deleted, so the
        # allocator never counts it. A long GC pause (the app) or a network or node problem.
        return Reason(
            category="unknown",
            code="HeartbeatTimeout",
            exit_code=None,
            counts_as_failure=True,
            message="the driver heard no heartbeat from it in time (a long GC pause, or a network "
            "or node problem), removed it and asked for a replacement",
            evidence=evidence,
        )
    if first.startswith(("Executor decommission", "Finished decommissioning")):
        # The driver's own decisions: ExecutorRollPlugin ("Rolling via …"), dynamic allocation
        # ("spark scale down") and the health tracker's kill of an excluded executor with
        # spark.excludeOnFailure.killExcludedExecutors and decommissioning on (HealthTracker
        # .killExecutor: "Killing excluded executor id N since … (actually decommissioning)",
        # "… on excluded host …"); the others come from the cluster (a node drain).
        driver = any(words in first for words in DRIVER_DECOMMISSIONS)
        return Reason(
            category="driver" if driver else "cluster",
            code="Decommissioned",
            exit_code=None,
            counts_as_failure=False,
            message=first,
            evidence=evidence,
        )
    if "was deleted by a user or the framework" in first:
        return Reason(
            category="unknown",
            code="Deleted",
            exit_code=None,
            counts_as_failure=False,
            message="the pod was deleted (by a user, a controller, an eviction or a preemption); Spark "
            "saw only the deletion",
            evidence=evidence,
        )
    if "was not found in the cluster" in first:
        return Reason(
            category="unknown",
            code="MissingPod",
            exit_code=-1,
            counts_as_failure=False,
            message=first,
            evidence=evidence,
        )
    match = _EXIT.search(first)
    if match is None:
        return Reason(
            category="unknown",
            code="Unknown",
            exit_code=None,
            counts_as_failure=False,
            message=first,
            evidence=evidence,
        )
    code = int(match.group(1))
    terminated = Terminated(exit_code=code, reason=_termination_reason(text, code))
    status = PodStatus(
        phase="Succeeded" if code == 0 else "Failed",
        reason=_api_line(text, "The API gave the following brief reason:"),
        message=_api_line(text, "The API gave the following message:"),
        container_statuses=[
            ContainerStatus(name=EXECUTOR_CONTAINER, state=ContainerState(terminated=terminated))
        ],
    )
    found = classify(
        PodContext(Pod(spec=PodSpec(restart_policy="Never"), status=status), "executor", None, [])
    )
    if found is None:
        return Reason(
            category="unknown",
            code="Unknown",
            exit_code=code,
            counts_as_failure=False,
            message=first,
            evidence=evidence,
        )
    return dataclasses.replace(found, evidence=evidence)


def _sibling_prefix(attempt: Attempt) -> str:
    """``<prefix>-exec-`` as a sibling's pod name shows Spark used it, else ""."""
    for e in attempt.executors:
        if e.pod and e.pod.endswith(f"-exec-{e.id}"):
            return e.pod[: -len(e.id)]
    return ""


def _gone_name(attempt: Attempt, exec_id: str, events_of: EventsOf | None) -> str:
    """The pod name Spark would have used (``<prefix>-exec-<id>``), from a sibling's name.

    With no sibling's pod left (dynamic allocation gave every executor back), the name the
    driver's own name says (``exec_prefix_of_driver``), shown only where Events about a pod of that
    name confirm it: spark.kubernetes.executor.podNamePrefix may have named them otherwise.
    """
    prefix = _sibling_prefix(attempt)
    if prefix:
        return prefix + exec_id
    guessed = exec_prefix_of_driver(attempt.driver_pod or "") + exec_id
    if guessed != exec_id and events_of is not None and events_of(guessed):
        return guessed
    return ""


def exec_prefix_of_driver(driver_pod: str) -> str:
    """``<prefix>-exec-`` of the executors of a driver named as Spark names it, else "".

    Spark names the driver ``<resourceNamePrefix>-driver`` unless spark.kubernetes.driver.pod
    .name is set (BasicDriverFeatureStep) and each executor ``<executorPodNamePrefix>-exec-<id>``
    (BasicExecutorFeatureStep), the same prefix when spark-submit made both (the real-Spark
    tier's pods: ``waits-32d3e3a252f3edb8-driver`` and ``waits-32d3e3a252f3edb8-exec-3``).
    A name guessed wrong names no pod: its Events are none, and nothing is explained by it.
    """
    stem = driver_pod.removesuffix("-driver")
    return f"{stem}-exec-" if stem and stem != driver_pod else ""


MAX_EXECUTOR_ID = 1_000_000  # beyond any real application: a label saying more is not an id


def exec_number(text: str) -> int | None:
    """An executor id Spark could have given (1, 2, 3…), or None."""
    if not text.isdecimal() or len(text) > 7:
        return None
    number = int(text)
    return number if 0 < number <= MAX_EXECUTOR_ID else None


def _unknown_losses(ids: Collection[str]) -> int:
    """How many of the ids Spark gave up to the highest no source explains (the gaps)."""
    numbers = exec_numbers(ids)
    return (max(numbers) - len(numbers)) if numbers else 0


def exec_numbers(ids: Collection[str]) -> set[int]:
    """The ids among ``ids`` that Spark could have given, as numbers (``exec_number``).

    Read for every executor of every attempt: when all are short decimal numbers in range (the
    usual case), C loops (``map``) check them, not a Python call per executor.
    """
    if all(map(str.isdecimal, ids)) and max(map(len, ids), default=0) <= 7:
        numbers = set(map(int, ids))
        numbers.discard(0)
        if max(numbers, default=0) <= MAX_EXECUTOR_ID:
            return numbers
    return {n for n in map(exec_number, ids) if n}


EventsOf = Callable[[str], Sequence[RawObject]]


def _told_by_events(spark: Reason, name: str, events_of: EventsOf | None) -> Reason:
    """Spark saw only a deletion; the pod's own Events may still say who deleted it.

    The scheduler's ``Preempted`` Event on the victim outlives the pod (an hour, by default):
    with it, "Deleted (unknown)" is a preemption.
    """
    if spark.code != "Deleted" or not name or events_of is None:
        return spark
    preempted = [e for e in events_of(name) if raw.text(e, "reason") == "Preempted"]
    if not preempted:
        return spark
    return Reason(
        category="cluster",
        code="Preempted",
        exit_code=None,
        counts_as_failure=False,
        message="preempted by the scheduler for a higher-priority pod (from its Event; the pod "
        "is gone)",
        evidence=(*spark.evidence, *(event_evidence(e) for e in preempted[-1:])),
    )


def with_spark_view(
    attempt: Attempt,
    view: Mapping[str, object] | None,
    events_of: EventsOf | None = None,
    pod_ips: Mapping[str, str] | None = None,
) -> Attempt:
    """Add what Spark's driver knows to an attempt; count executor ids no source explains.

    ``events_of``: the Events about a pod, by name (for executors whose pods are gone).
    ``pod_ips``: pod uid → pod IP of the executors whose pods do not carry their Spark id
    (a StatefulSet's or Deployment's, labelled EXECID): Spark names those by host (the pod IP),
    and a pod whose container restarted held several of Spark's executors, one after another.
    """
    summaries = [s for s in raw.items(view, "executors") if str(s.get("id", "driver")) != "driver"]
    if not summaries:  # the usual case: only the pods' own ids to count (they are sorted)
        ids = {e.id for e in attempt.executors}
        unknown = _unknown_losses(ids)
        if unknown:
            never_ran = _never_ran(attempt, ids, events_of)
            if never_ran:
                explained = in_id_order([*attempt.executors, *never_ran])
                unknown = _unknown_losses({e.id for e in explained})
                return dataclasses.replace(attempt, executors=explained, unknown_losses=unknown)
        if unknown == attempt.unknown_losses:
            return attempt
        return dataclasses.replace(attempt, unknown_losses=unknown)
    executors = list(attempt.executors)
    by_id = {e.id: i for i, e in enumerate(executors)}
    by_host = _by_host(executors, pod_ips or {}, summaries)
    executors = _with_spark_ids(executors, pod_ips or {}, summaries)
    for summary in summaries:
        exec_id = str(summary.get("id"))
        if summary.get("isActive", True):
            continue
        spark = reason_from_spark(
            summary,
            raw.text(view, "origin") or "Spark's driver",
            raw.text(view, "heartbeats", exec_id),
        )
        hosted = by_host.get(_host(summary))
        if hosted is not None and exec_id not in by_id:
            index, last = hosted
            mine = executors[index]
            if exec_id == last and mine.reason is not None:  # the pod's last JVM: its end
                note = f"{spark.evidence[0]} (Spark's executor {exec_id}, on this pod's IP)"
                executors[index] = dataclasses.replace(
                    mine,
                    reason=dataclasses.replace(mine.reason, evidence=(*mine.reason.evidence, note)),
                )
            continue  # an earlier JVM of the same pod: its container restarted in place
        if exec_id in by_id:
            mine = executors[by_id[exec_id]]
            if mine.reason is not None:
                note = spark.evidence[0]
                if spark.code == "DeletedByDriver" and mine.reason.code != "DeletedByDriver":
                    note += (
                        f" — Spark's word wins: the driver asked for it, whatever the pod's "
                        f"{mine.reason.code} says"
                    )
                reason = dataclasses.replace(mine.reason, evidence=(*mine.reason.evidence, note))
                if spark.code == "DeletedByDriver" and mine.reason.code in NEVER_RAN:
                    # Spark keeps the first reason it saw: the driver's kill came before any
                    # failure, so the pod's waiting state is why it never ran, not a loss.
                    reason = dataclasses.replace(
                        spark,
                        message=f"{spark.message}; it had not started: {mine.reason.message}",
                        evidence=(*mine.reason.evidence, *spark.evidence),
                    )
                if spark.code == "HeartbeatTimeout" and mine.reason.code == "DeletedByDriver":
                    # The driver deleted it because it had stopped answering: Spark's cause.
                    reason = dataclasses.replace(
                        spark, evidence=(*mine.reason.evidence, *spark.evidence)
                    )
                executors[by_id[exec_id]] = dataclasses.replace(mine, reason=reason)
            continue
        name = _gone_name(attempt, exec_id, events_of)
        executors.append(
            Executor(
                exec_id,
                name,
                "",
                None,
                "Unknown",
                "Gone",
                0,
                _told_by_events(spark, name, events_of),
                _text_or_none(spark_time(summary.get("addTime"))),
                _text_or_none(spark_time(summary.get("removeTime"))),
                source="spark",
            )
        )
    ids = {e.id for e in executors} | {str(s.get("id", "")) for s in summaries}
    if _unknown_losses(ids):
        never_ran = _never_ran(attempt, ids, events_of)
        executors.extend(never_ran)
        ids |= {e.id for e in never_ran}
    unknown = _unknown_losses(ids)
    return dataclasses.replace(attempt, executors=in_id_order(executors), unknown_losses=unknown)


# Spark's ids are given in order (ExecutorPodsAllocator's EXECUTOR_ID_COUNTER), so a gap is a pod
# that existed. Its Events outlive it (kube-apiserver's --event-ttl, an hour by default): the
# kubelet's "Started" says a container ran; without it, "Scheduled", "FailedScheduling",
# "FailedMount" or "Failed"/"BackOff" (pkg/kubelet/events/event.go) say it waited and never ran.
_SCHEDULED_ON = re.compile(r" to (\S+)$")
MAX_GAPS_READ = 100_000  # a label claiming a far higher id than Spark gave is not read gap by gap


def _never_ran(
    attempt: Attempt, ids: Collection[str], events_of: EventsOf | None
) -> list[Executor]:
    """The gaps in Spark's ids whose gone pods' own Events say they never ran: no loss.

    Nothing ran, so nothing was lost: Spark's allocator deletes the pending executors it no
    longer wants ("Deleting N excess pod requests": ExecutorPodsAllocator.onNewSnapshots, once
    a pod is older than spark.dynamicAllocation.executorIdleTimeout) and counts no deleted pod,
    the same verdict as a kept copy of such a pod (removals.given_back). They are in none of
    Spark's lists: an executor is listed once it has registered.
    """
    prefix = _sibling_prefix(attempt) or exec_prefix_of_driver(attempt.driver_pod or "")
    numbers = exec_numbers(ids)
    if events_of is None or not prefix or max(numbers, default=0) - len(numbers) > MAX_GAPS_READ:
        return []
    found = []
    for number in range(1, max(numbers, default=0)):
        exec_id = str(number)
        name = prefix + exec_id
        events = events_of(name) if number not in numbers else ()
        reason = _verdict_by_events(events)
        if reason is None:
            continue
        scheduled = [raw.text(e, "message") for e in events if raw.text(e, "reason") == "Scheduled"]
        node = next((m.group(1) for t in scheduled if (m := _SCHEDULED_ON.search(t))), None)
        first = min((raw.text(e, "firstTimestamp") for e in events), default="") or None
        found.append(
            Executor(exec_id, name, "", node, "Unknown", "Gone", 0, reason, first, source="events")
        )
    return found


def _verdict_by_events(events: Sequence[RawObject]) -> Reason | None:
    """A gone executor pod's verdict from its Events alone, when they show it never ran."""
    reasons = {raw.text(e, "reason") for e in events}
    if not events or "Started" in reasons:
        return None
    told = [e for e in events if raw.text(e, "reason") != "Scheduled"]
    waiting = "ContainerCreating"
    for event in told:
        message = raw.text(event, "message")
        if raw.text(event, "reason") in ("Failed", "BackOff") and "image" in message.lower():
            waiting = "ImagePullBackOff"
        elif raw.text(event, "reason") == "Failed" and message.startswith("Error: "):
            waiting = "CreateContainerConfigError"
    unscheduled = "FailedScheduling" in reasons and "Scheduled" not in reasons
    pod = Pod(
        status=PodStatus(
            phase="Pending",
            conditions=[PodCondition(type="PodScheduled", status="False", reason="Unschedulable")]
            * unscheduled,
        )
    )
    container = ContainerStatus(state=ContainerState(waiting=Waiting(reason=waiting)))
    return given_back(
        never_started(PodContext(pod, "executor", events=told), container),
        (
            "the pod is gone; its Events outlive it and show that no container started",
            *(event_evidence(e) for e in told[-2:]),
        ),
    )


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _host(summary: Mapping[str, object]) -> str:
    return str(summary.get("hostPort") or "").rpartition(":")[0]


def _with_spark_ids(
    executors: list[Executor], pod_ips: Mapping[str, str], summaries: Sequence[Mapping[str, object]]
) -> list[Executor]:
    """Each unlabelled pod with the Spark ids its JVMs had, found by its IP (``spark_ids``)."""
    if not pod_ips:
        return executors
    index = {pod_ips[e.uid]: i for i, e in enumerate(executors) if pod_ips.get(e.uid)}
    hosted: dict[int, list[str]] = {}
    for summary in summaries:
        host, exec_id = _host(summary), str(summary.get("id"))
        if host in index and exec_id.isdecimal():
            hosted.setdefault(index[host], []).append(exec_id)
    out = list(executors)
    for i, ids in hosted.items():
        out[i] = dataclasses.replace(out[i], spark_ids=tuple(sorted(set(ids), key=int)))
    return out


def _by_host(
    executors: Sequence[Executor],
    pod_ips: Mapping[str, str],
    summaries: Sequence[Mapping[str, object]],
) -> dict[str, tuple[int, str]]:
    """Pod IP → (the executor's index, the highest Spark id on that IP) for unlabelled pods."""
    if not pod_ips:
        return {}
    index = {pod_ips[e.uid]: i for i, e in enumerate(executors) if pod_ips.get(e.uid)}
    found: dict[str, tuple[int, str]] = {}
    for summary in summaries:
        host, exec_id = _host(summary), str(summary.get("id"))
        if host in index and exec_id.isdecimal():
            last = found.get(host, (0, ""))[1]
            if not last or int(exec_id) > int(last):
                found[host] = (index[host], exec_id)
    return found


def merge_kept(
    snapshot: Snapshot,
    pods: Sequence[tuple[RawObject, str]],
    events: Sequence[RawObject],
    source: str = "history",
) -> Snapshot:
    """The snapshot plus kept pods (with when they were seen) and Events the cluster no longer has.

    A pod still in the cluster is taken from the cluster: the kept copy is older.
    """
    live_pods = {p.metadata.uid for p in snapshot.pods}
    live_events = {raw.uid(e) for e in snapshot.events}
    # Most kept pods are still in the cluster: told by their uid, they are not typed at all.
    extra_pods = [
        kept_copy(slim.pod(p), source, seen)
        for p, seen in pods
        if (uid := raw.uid(p)) and uid not in live_pods
    ]
    extra_events = [e for e in events if raw.uid(e) and raw.uid(e) not in live_events]
    if not extra_pods and not extra_events:
        return snapshot
    return dataclasses.replace(
        snapshot,
        pods=[*snapshot.pods, *extra_pods],
        events=[*snapshot.events, *extra_events],
    )
