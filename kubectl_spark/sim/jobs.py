"""The Job controller, for the non-indexed, single-pod Jobs a Spark driver runs in.

It honours backoffLimit (with the exponential replacement delay), podReplacementPolicy
(TerminatingOrFailed replaces a pod as soon as it is deleting; Failed waits for a terminal
phase), podFailurePolicy (Ignore / FailJob / Count on exit codes and pod conditions), suspend
(like Kubernetes, it deletes the active pods, and they do not count as failures), the
job-tracking finalizer and the status counters and conditions.
"""

from __future__ import annotations

import copy
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from kubectl_spark.knowledge.times import parse_time, rfc3339

from . import objects
from .client import SimApiError, jobs, pod, pods

if TYPE_CHECKING:
    from .world import World

TRACKING = "batch.kubernetes.io/job-tracking"


class JobController:
    def __init__(self, world: World) -> None:
        self.world = world
        self.counted: dict[str, set[str]] = {}  # job uid → pod uids already counted
        self.ignored: dict[str, set[str]] = {}
        self.last_failure: dict[str, datetime] = {}

    def tick(self) -> None:
        client = self.world.client
        all_jobs = client.list("/apis/batch/v1/jobs")
        if not all_jobs:
            return
        all_pods = client.list("/api/v1/pods", labelSelector="batch.kubernetes.io/controller-uid")
        for job in all_jobs:
            uid = job["metadata"]["uid"]
            owned = [
                p
                for p in all_pods
                if any(
                    r.get("uid") == uid and r.get("controller")
                    for r in p["metadata"].get("ownerReferences") or []
                )
            ]
            try:
                self._sync(job, owned)
            except SimApiError as err:
                if err.status not in (404, 409):
                    raise

    def _match_failure_policy(self, job: dict[str, Any], item: dict[str, Any]) -> str | None:
        policy = job["spec"].get("podFailurePolicy")
        if not policy:
            return None
        for rule in policy.get("rules") or []:
            on_codes = rule.get("onExitCodes")
            if on_codes:
                codes = set(on_codes.get("values") or [])
                for s in (item.get("status") or {}).get("containerStatuses") or []:
                    if on_codes.get("containerName") and s.get("name") != on_codes["containerName"]:
                        continue
                    term = (s.get("state") or {}).get("terminated") or {}
                    code = term.get("exitCode")
                    if code in (None, 0):
                        continue
                    hit = (
                        code in codes
                        if on_codes.get("operator", "In") == "In"
                        else code not in codes
                    )
                    if hit:
                        return str(rule.get("action"))
            for cond_rule in rule.get("onPodConditions") or []:
                cond = objects.condition(item, str(cond_rule.get("type")))
                if cond and cond.get("status") == cond_rule.get("status", "True"):
                    return str(rule.get("action"))
        return None

    def _sync(self, job: dict[str, Any], owned: list[dict[str, Any]]) -> None:
        client = self.world.client
        now = self.world.clock.now()
        stamp = rfc3339(now)
        meta = job["metadata"]
        uid = meta["uid"]
        ns = meta["namespace"]
        spec = job["spec"]
        status = copy.deepcopy(job.get("status") or {})
        conditions = status.get("conditions") or []
        finished = any(
            c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
            for c in conditions
        )
        counted = self.counted.setdefault(uid, set())
        ignored = self.ignored.setdefault(uid, set())
        replace_when_terminating = (
            spec.get("podReplacementPolicy", "TerminatingOrFailed") == "TerminatingOrFailed"
        )
        failed = int(status.get("failed") or 0)
        succeeded = int(status.get("succeeded") or 0)
        fail_job_message = ""
        if not finished:
            conditions = self._suspend_or_resume(job, owned, conditions, ignored, stamp)
        more_failed, more_succeeded, fail_job_message = self._account(
            job, owned, counted, ignored, replace_when_terminating=replace_when_terminating
        )
        failed += more_failed
        succeeded += more_succeeded
        self._release_finalizers(ns, owned, counted | ignored)
        active = [p for p in owned if not objects.is_terminal(p) and not objects.deleting(p)]
        terminating = [p for p in owned if objects.deleting(p) and not objects.is_terminal(p)]
        ready = [p for p in active if (objects.condition(p, "Ready") or {}).get("status") == "True"]
        backoff_limit = int(spec.get("backoffLimit", 6))
        completions = int(spec.get("completions") or 1)
        if not finished:
            if fail_job_message:
                conditions = self._finish(
                    job, conditions, "Failed", "PodFailurePolicy", fail_job_message, stamp, active
                )
                finished = True
            elif failed > backoff_limit:
                conditions = self._finish(
                    job,
                    conditions,
                    "Failed",
                    "BackoffLimitExceeded",
                    "Job has reached the specified backoff limit",
                    stamp,
                    active,
                )
                finished = True
            elif succeeded >= completions:
                conditions = objects.with_condition(
                    conditions,
                    {
                        "type": "SuccessCriteriaMet",
                        "status": "True",
                        "reason": "CompletionsReached",
                        "message": "Reached expected number of succeeded pods",
                        "lastProbeTime": stamp,
                        "lastTransitionTime": stamp,
                    },
                )
                conditions = objects.with_condition(
                    conditions,
                    {
                        "type": "Complete",
                        "status": "True",
                        "reason": "CompletionsReached",
                        "message": "Reached expected number of succeeded pods",
                        "lastProbeTime": stamp,
                        "lastTransitionTime": stamp,
                    },
                )
                status["completionTime"] = stamp
                finished = True
        want_new = (
            not finished
            and not spec.get("suspend")
            and len(active) + (0 if replace_when_terminating else len(terminating))
            < int(spec.get("parallelism", 1))
        )
        if want_new:
            last = self.last_failure.get(uid)
            delay = 10 * 2 ** max(failed - 1, 0) if failed else 0
            if last is None or now >= last + timedelta(seconds=min(delay, 360)):
                created = self._create_pod(job)
                if created is not None:
                    active.append(created)
                    self.world.events.event(
                        job,
                        "SuccessfulCreate",
                        f"Created pod: {created['metadata']['name']}",
                        component="job-controller",
                    )
        status.update(
            {
                "active": len(active) or None,
                "failed": failed or None,
                "succeeded": succeeded or None,
                "terminating": len(terminating),
                "ready": len(ready),
                "conditions": conditions or None,
                "uncountedTerminatedPods": {},
            }
        )
        status.setdefault("startTime", stamp)
        status = {k: v for k, v in status.items() if v is not None}
        if status != job.get("status"):
            client.patch(
                f"{jobs(ns)}/{meta['name']}/status",
                {
                    "status": {
                        **{k: None for k in (job.get("status") or {}) if k not in status},
                        **status,
                    }
                },
            )

    def _finish(
        self,
        job: dict[str, Any],
        conditions: list[dict[str, Any]],
        kind: str,
        reason: str,
        message: str,
        stamp: str,
        active: list[dict[str, Any]],
    ) -> list[dict[str, Any]]:
        conditions = objects.with_condition(
            conditions,
            {
                "type": "FailureTarget",
                "status": "True",
                "reason": reason,
                "message": message,
                "lastProbeTime": stamp,
                "lastTransitionTime": stamp,
            },
        )
        conditions = objects.with_condition(
            conditions,
            {
                "type": kind,
                "status": "True",
                "reason": reason,
                "message": message,
                "lastProbeTime": stamp,
                "lastTransitionTime": stamp,
            },
        )
        for item in active:
            self.world.client.delete(
                pod(job["metadata"]["namespace"], item["metadata"]["name"]),
                uid=item["metadata"]["uid"],
            )
        self.world.events.event(job, reason, message, type_="Warning", component="job-controller")
        return conditions

    def _account(
        self,
        job: dict[str, Any],
        owned: list[dict[str, Any]],
        counted: set[str],
        ignored: set[str],
        *,
        replace_when_terminating: bool,
    ) -> tuple[int, int, str]:
        """(failed, succeeded, a FailJob rule's message) of the pods not yet counted.

        A terminating pod counts where the Job replaces terminating pods.
        """
        ns, uid = job["metadata"]["namespace"], job["metadata"]["uid"]
        now = self.world.clock.now()
        failed = succeeded = 0
        fail_job_message = ""
        for item in owned:
            puid = item["metadata"]["uid"]
            terminal = objects.is_terminal(item)
            gone_or_terminating = objects.deleting(item) and not terminal
            if puid in counted or puid in ignored:
                continue
            if terminal or (gone_or_terminating and replace_when_terminating):
                if objects.phase(item) == "Succeeded":
                    succeeded += 1
                    counted.add(puid)
                    continue
                action = self._match_failure_policy(job, item) if terminal else None
                if action == "Ignore":
                    ignored.add(puid)
                    continue
                if action == "FailJob":
                    code = next(
                        (
                            ((s.get("state") or {}).get("terminated") or {}).get("exitCode")
                            for s in (item.get("status") or {}).get("containerStatuses") or []
                        ),
                        None,
                    )
                    fail_job_message = (
                        f"Container {item['spec']['containers'][0]['name']} for pod {ns}/{item['metadata']['name']} "
                        f"failed with exit code {code} matching FailJob rule at index 0"
                    )
                failed += 1
                counted.add(puid)
                self.last_failure[uid] = now
        return failed, succeeded, fail_job_message

    def _release_finalizers(
        self, ns: str, owned: list[dict[str, Any]], accounted: set[str]
    ) -> None:
        # The job-tracking finalizer comes off once a finished pod is accounted for. A pod that
        # is deleting but not terminal is accounted for (as failed) only where the Job replaces
        # terminating pods: with podReplacementPolicy Failed (or a podFailurePolicy) the real
        # controller keeps the finalizer until the pod is terminal, so a grace-0 delete leaves it
        # Terminating (pkg/controller/job/job_controller.go: isPodFailed, canRemoveFinalizer).
        for item in owned:
            if TRACKING in (item["metadata"].get("finalizers") or []) and (
                item["metadata"]["uid"] in accounted
            ):
                finalizers = [f for f in item["metadata"]["finalizers"] if f != TRACKING]
                self.world.client.patch(
                    pod(ns, item["metadata"]["name"]),
                    {"metadata": {"finalizers": finalizers or None}},
                )

    def _suspend_or_resume(
        self,
        job: dict[str, Any],
        owned: list[dict[str, Any]],
        conditions: list[dict[str, Any]],
        ignored: set[str],
        stamp: str,
    ) -> list[dict[str, Any]]:
        """A suspended Job's active pods are deleted; a resumed one gets its condition back."""
        suspended = bool(job["spec"].get("suspend"))
        told = objects.condition({"status": {"conditions": conditions}}, "Suspended") or {}
        if suspended:
            for item in owned:
                if objects.is_terminal(item) or objects.deleting(item):
                    continue
                ignored.add(item["metadata"]["uid"])  # stopped, not failed
                self.world.client.delete(
                    pod(job["metadata"]["namespace"], item["metadata"]["name"]),
                    uid=item["metadata"]["uid"],
                )
        if suspended == (told.get("status") == "True"):
            return conditions
        reason, message = (
            ("JobSuspended", "Job suspended") if suspended else ("JobResumed", "Job resumed")
        )
        self.world.events.event(
            job, "Suspended" if suspended else "Resumed", message, component="job-controller"
        )
        return objects.with_condition(
            conditions,
            {
                "type": "Suspended",
                "status": str(suspended),
                "reason": reason,
                "message": message,
                "lastProbeTime": stamp,
                "lastTransitionTime": stamp,
            },
        )

    def _create_pod(self, job: dict[str, Any]) -> dict[str, Any] | None:
        template = copy.deepcopy(job["spec"]["template"])
        meta = template.get("metadata") or {}
        meta.pop("name", None)
        meta["generateName"] = f"{job['metadata']['name']}-"
        meta["ownerReferences"] = [objects.owner_ref(job)]
        meta["finalizers"] = [TRACKING]
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": template["spec"]}
        created: dict[str, Any] = self.world.client.create(pods(job["metadata"]["namespace"]), body)
        return created


def started_at(job: dict[str, Any]) -> datetime | None:
    value = (job.get("status") or {}).get("startTime")
    return parse_time(value) if value else None
