"""``kubectl spark doctor APP``: which of SPARK-23980's hazards a running application has.

Read from its driver Job (or, for a bare driver pod or a SparkApplication, what applies), its
driver pod's arguments and claims, and what the analysis already saw (alerts). Each hazard is
the counterpart of one thing ``kubectl spark job`` builds in (see :mod:`core.safe_job`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubectl_spark.core import raw
from kubectl_spark.core.jsonvalue import JsonObject
from kubectl_spark.core.model import App
from kubectl_spark.core.raw import RawObject
from kubectl_spark.knowledge.labels import APP_ID

from .safe_job import LEASE_ANNOTATION

RISK, OK, NOT_APPLICABLE, UNKNOWN = "risk", "ok", "n/a", "unknown"


@dataclass(frozen=True)
class Hazard:
    code: str
    state: str  # risk, ok, n/a or unknown
    why: str
    fix: str = ""

    def to_json(self) -> JsonObject:
        return {"code": self.code, "state": self.state, "why": self.why, "fix": self.fix}


def _conf(args: Sequence[Any], key: str) -> str | None:
    """A ``--conf key=value`` among a driver container's args (None: not given)."""
    for i, arg in enumerate(args):
        text = str(arg)
        if text == "--conf" and i + 1 < len(args) and str(args[i + 1]).startswith(key + "="):
            return str(args[i + 1]).split("=", 1)[1]
        if text.startswith(f"--conf={key}="):
            return text.split("=", 2)[2]
    return None


def _driver_args(template_spec: Mapping[str, Any]) -> list[Any]:
    containers = raw.items(template_spec, "containers")
    chosen = next(
        (c for c in containers if raw.text(c, "name") == "spark-kubernetes-driver"),
        containers[0] if containers else {},
    )
    return [*raw.texts(chosen, "command"), *raw.texts(chosen, "args")]


def _per_pod(value: str | None) -> bool:
    return value is not None and re.search(r"\$\((POD_NAME|POD_UID)\)", value) is not None


def diagnose(
    app: App,
    *,
    job: RawObject | None,
    driver: RawObject | None,
    pvcs: Sequence[object] = (),
) -> list[Hazard]:
    alerts = {a.type for a in app.alerts}
    labels: Mapping[str, object]
    if job is not None:
        spec = raw.mapping(job, "spec")
        template = raw.mapping(spec, "template", "spec")
        labels = raw.mapping(spec, "template", "metadata", "labels")
    else:
        spec, template, labels = {}, raw.mapping(driver, "spec"), raw.labels(driver)
    args = _driver_args(template)
    return [
        _replacement(app, spec),
        _disruptions(app, spec),
        _prefix(alerts, args),
        _app_id(alerts, args, labels, app),
        _volume_fence(template, pvcs, app),
        _lease(job),
    ]


def _replacement(app: App, spec: Mapping[str, Any]) -> Hazard:
    code = "ReplacementWhileRunning"
    if app.source != "job":
        return Hazard(code, NOT_APPLICABLE, f"a {app.source} is not restarted by a Job")
    if spec.get("podReplacementPolicy") == "Failed":
        return Hazard(
            code,
            OK,
            "podReplacementPolicy: Failed: a new attempt waits until the old pod is Failed",
        )
    return Hazard(
        code,
        RISK,
        "the Job starts a new attempt as soon as the old driver pod is terminating (deleted, "
        "or its node lost), while that driver may still run: two drivers at once",
        "set spec.podReplacementPolicy: Failed (Kubernetes 1.29+)",
    )


def _disruptions(app: App, spec: Mapping[str, Any]) -> Hazard:
    code = "DisruptionsCountAsFailures"
    if app.source != "job":
        return Hazard(code, NOT_APPLICABLE, f"a {app.source} has no backoffLimit")
    rules = raw.items(spec, "podFailurePolicy", "rules")
    ignores = any(
        raw.text(r, "action") == "Ignore"
        and any(raw.text(c, "type") == "DisruptionTarget" for c in raw.items(r, "onPodConditions"))
        for r in rules
    )
    if ignores:
        return Hazard(code, OK, "its podFailurePolicy ignores disruptions (DisruptionTarget)")
    return Hazard(
        code,
        RISK,
        "evictions, preemptions and drains count toward backoffLimit: the cluster's faults can "
        "fail the application",
        "add a podFailurePolicy rule {action: Ignore, onPodConditions: [{type: DisruptionTarget}]}",
    )


def _prefix(alerts: set[str], args: Sequence[Any]) -> Hazard:
    code = "SharedExecutorPrefix"
    value = _conf(args, "spark.kubernetes.executor.podNamePrefix")
    if "NameCollision" in alerts:
        return Hazard(
            code,
            RISK,
            "attempts already collide on executor pod names (NameCollision)",
            "give each attempt its own prefix: --conf spark.kubernetes.executor.podNamePrefix=$(POD_NAME)",
        )
    if value is not None and not _per_pod(value):
        return Hazard(
            code,
            RISK,
            f"every attempt names its executors {value}-exec-N: a later attempt's creates fail "
            "(409) while an earlier one's executors remain",
            "use $(POD_NAME) (downward API) for spark.kubernetes.executor.podNamePrefix",
        )
    why = "per pod ($(POD_NAME))" if value is not None else "not fixed: Spark picks one per run"
    return Hazard(code, OK, f"the executor prefix is {why}")


def _app_id(alerts: set[str], args: Sequence[Any], labels: Mapping[str, Any], app: App) -> Hazard:
    code = "SharedAppId"
    value = _conf(args, "spark.app.id")
    if "SharedAppId" in alerts:
        return Hazard(
            code,
            RISK,
            "attempts share one app id: each counts, and at its end deletes, the other's executors",
            "set --conf spark.app.id=$(POD_NAME) in the driver's args",
        )
    if _per_pod(value):
        return Hazard(code, OK, "spark.app.id is per pod ($(POD_NAME))")
    if app.source == "job" and (value is not None or APP_ID in labels):
        return Hazard(
            code,
            RISK,
            "the Job's template fixes the app id: every attempt shares it",
            "set --conf spark.app.id=$(POD_NAME) and drop the spark-app-selector label from the template",
        )
    return Hazard(code, OK, "no attempts share an app id")


def _volume_fence(template: Mapping[str, object], pvcs: Sequence[object], app: App) -> Hazard:
    code = "NoVolumeFence"
    claims = {
        raw.text(v, "persistentVolumeClaim", "claimName")
        for v in raw.items(template, "volumes")
        if raw.text(v, "persistentVolumeClaim", "claimName")
    }
    rwop = [
        raw.name(p)
        for p in pvcs
        if raw.name(p) in claims
        and raw.namespace(p) == app.namespace
        and "ReadWriteOncePod" in raw.texts(p, "spec", "accessModes")
    ]
    if rwop:
        return Hazard(
            code,
            OK,
            f"the driver mounts ReadWriteOncePod claim {rwop[0]}: one driver pod at a time",
        )
    return Hazard(
        code,
        RISK,
        "nothing keeps a second driver pod from being placed while a zombie runs",
        "mount a ReadWriteOncePod claim in the driver (kubectl spark job makes one)",
    )


def _lease(job: Mapping[str, Any] | None) -> Hazard:
    code = "NoLeaseCheck"
    if job is not None and raw.annotation_map(job).get(LEASE_ANNOTATION):
        return Hazard(
            code,
            UNKNOWN,
            f"the Job names Lease {raw.annotation_map(job)[LEASE_ANNOTATION]}; whether the "
            "driver's wrapper checks it cannot be read from the cluster",
        )
    return Hazard(
        code,
        UNKNOWN,
        "Spark does not check a Lease; a wrapper that does cannot be seen from the cluster",
        "take the application's Lease before spark-submit starts, exit when it is lost",
    )
