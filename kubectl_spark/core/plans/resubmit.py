"""``resubmit``: a new attempt of an application, made from the last one's objects."""

import copy
import dataclasses
import hashlib
import re
from collections.abc import Sequence
from typing import Any

from kubectl_spark.core import raw
from kubectl_spark.core.model import App
from kubectl_spark.core.raw import RawObject
from kubectl_spark.knowledge.labels import APP_ID, FENCE_LABEL, RESUBMITTED_FROM

from .base import (
    FENCE_ID,
    PREFIX_CONF,
    Operation,
    Plan,
    alive,
    client_mode_refusal,
    event_on,
    job_may_start_attempts,
    stamp_of,
)
from .resubmit_apache import apache_resubmit
from .resubmit_operator import operator_resubmit

_RUNTIME_META = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "managedFields",
    "ownerReferences",
    "finalizers",
    "selfLink",
    "generateName",
)
_JOB_LABELS = (
    "controller-uid",
    "job-name",
    "batch.kubernetes.io/controller-uid",
    "batch.kubernetes.io/job-name",
)


def _clean_meta(meta: dict[str, Any]) -> dict[str, Any]:
    return {k: copy.deepcopy(v) for k, v in meta.items() if k not in _RUNTIME_META}


def with_conf(args: Sequence[object], key: str, value: str) -> list[object]:
    """Driver container args with ``--conf key=value`` (any earlier value of ``key`` replaced)."""
    out: list[object] = []
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if arg == "--conf" and i + 1 < len(args) and str(args[i + 1]).startswith(key + "="):
            skip = True
            continue
        out.append(arg)
    position = 1 if out and out[0] == "driver" else 0
    return [*out[:position], "--conf", f"{key}={value}", *out[position:]]


def with_prefix(args: Sequence[object], prefix: str) -> list[object]:
    """Driver container args with ``--conf spark.kubernetes.executor.podNamePrefix=<prefix>``."""
    return with_conf(args, PREFIX_CONF, prefix)


# Each pod of a resubmitted Job gets its own identity from its name, through the downward API:
# the kubelet expands $(POD_NAME) in args. A fixed value in the template would be shared by the
# Job's later automatic retries: the name collisions and the shared app id would come back.
PER_POD = "$(POD_NAME)"
PER_POD_CONF = ("spark.app.id", PREFIX_CONF, "spark.kubernetes.driver.pod.name")


def _per_pod_identity(pod_spec: dict[str, Any]) -> dict[str, Any]:
    spec = copy.deepcopy(pod_spec)
    for container in spec.get("containers") or []:
        if not isinstance(container, dict) or container.get("name") != "spark-kubernetes-driver":
            continue
        args = list(container.get("args") or [])
        for key in reversed(PER_POD_CONF):
            args = with_conf(args, key, PER_POD)
        container["args"] = args
        env = [e for e in container.get("env") or [] if isinstance(e, dict)]
        by_name = {"metadata.name": ("POD_NAME", "SPARK_APPLICATION_ID")}
        names = {n for names in by_name.values() for n in names}
        env = [e for e in env if e.get("name") not in names]
        env.insert(
            0, {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
        )
        if any(e.get("name") == "SPARK_APPLICATION_ID" for e in container.get("env") or []):
            env.append(
                {
                    "name": "SPARK_APPLICATION_ID",
                    "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
                }
            )
        container["env"] = env
    return spec


def _with_new_prefix(pod_spec: dict[str, Any], prefix: str) -> dict[str, Any]:
    spec = copy.deepcopy(pod_spec)
    for container in spec.get("containers") or []:
        if isinstance(container, dict) and container.get("name") == "spark-kubernetes-driver":
            container["args"] = with_prefix(list(container.get("args") or []), prefix)
    return spec


def new_app_id(old: str, suffix: str) -> str:
    """A fresh spark.app.id in Spark's form (``spark-`` and 32 hex digits), from the resubmit."""
    return "spark-" + hashlib.sha256(f"{old}/{suffix}".encode()).hexdigest()[:32]


# What Spark's driver steps write into the driver's properties that names one driver: a copy
# keeping them looks for the old pod (BasicDriverFeatureStep: spark.kubernetes.driver.pod.name,
# spark.app.id) and advertises the old Service (DriverServiceFeatureStep: spark.driver.host).
def _own_properties(text: str, *, app_id: str, pod: str, host: str) -> str:
    """A properties file (``key=value`` lines) with the new driver's own identity."""
    wanted = {"spark.app.id": app_id, "spark.kubernetes.driver.pod.name": pod}
    if host:
        wanted["spark.driver.host"] = host
    lines = text.splitlines()
    if not any(line.strip().startswith("spark.") for line in lines):
        return text  # not Spark's properties
    out = []
    for line in lines:
        key = re.split(r"\s*[=:]\s*", line.strip(), maxsplit=1)[0]
        if key in wanted:
            out.append(f"{key}={wanted.pop(key)}")
        else:
            out.append(line)
    out += [f"{key}={value}" for key, value in wanted.items() if key != "spark.driver.host"]
    return "\n".join(out) + ("\n" if text.endswith("\n") or not text else "")


def _own_identity(spec: dict[str, Any], app_id: str, cm_copies: dict[str, str]) -> dict[str, Any]:
    """The copied pod spec with the new app id in its environment and the ConfigMap copies."""
    for volume in spec.get("volumes") or []:
        cm = volume.get("configMap") if isinstance(volume, dict) else None
        if isinstance(cm, dict) and cm.get("name") in cm_copies:
            cm["name"] = cm_copies[cm["name"]]
    for container in spec.get("containers") or []:
        for env in container.get("env") or [] if isinstance(container, dict) else []:
            if isinstance(env, dict) and env.get("name") == "SPARK_APPLICATION_ID":
                env["value"] = app_id
    return spec


def _by_operator(
    base: Plan, app: App, sparkapp: RawObject | None, apacheapp: RawObject | None,
    *, suffix: str, now: str, actor: str, stamp: dict[str, str],
) -> Plan | None:  # fmt: skip
    """An operator's application is resubmitted by that operator's means (None: not one)."""
    if app.source == "sparkapplication":
        if sparkapp is None:
            return dataclasses.replace(
                base, refusal=f"SparkApplication {app.name} no longer exists: nothing to re-run"
            )
        return operator_resubmit(base, app, sparkapp, now=now, actor=actor, stamp=stamp)
    if app.source == "apache-operator":
        if apacheapp is None:
            return dataclasses.replace(
                base,
                refusal=f"no SparkApplication (spark.apache.org) {app.owner or app.name} is left "
                "to copy",
            )
        return apache_resubmit(
            base, app, apacheapp, suffix=suffix, now=now, actor=actor, stamp=stamp
        )
    return None


def resubmit_plan(
    app: App,
    *,
    driver: RawObject | None,
    job: RawObject | None,
    sparkapp: RawObject | None,
    configmaps: Sequence[RawObject],
    apacheapp: RawObject | None = None,
    services: Sequence[RawObject],
    force: bool,
    suffix: str,
    now: str,
    actor: str,
    kept_at: str = "",
) -> Plan:
    """``kept_at``: when force-kill kept the (now gone) driver pod copied here, if it is."""
    base = Plan("resubmit", app.namespace, app.name, None)
    client_mode = client_mode_refusal(app, driver) if app.source == "pod" else ""
    if client_mode:
        return dataclasses.replace(base, refusal=client_mode)
    live = [a for a in app.attempts if alive(a)]
    if live and not force:
        return dataclasses.replace(
            base,
            refusal=f"attempt {live[-1].number} of {app.name} is {live[-1].state} and not fenced: "
            "fence or force-kill it first, or pass --force",
        )
    stamp = stamp_of(actor, now, "resubmit")
    suffix = suffix.lower()
    prefix = f"{app.name}-{suffix}"[:40].strip("-")
    by_operator = _by_operator(
        base, app, sparkapp, apacheapp, suffix=suffix, now=now, actor=actor, stamp=stamp
    )
    if by_operator is not None:
        return by_operator
    if app.source == "job":
        if job is None:
            return dataclasses.replace(
                base, refusal=f"the driver Job of {app.name} no longer exists: nothing to copy"
            )
        warnings: tuple[str, ...] = ()
        if job_may_start_attempts(job):
            last = next((a.number for a in reversed(app.attempts) if a.uid), None)
            why = (
                f"the Job {raw.name(job)} is neither finished nor suspended: it starts another "
                f"attempt {'when attempt ' + str(last) + ' ends' if last else 'itself'}, beside the resubmitted one"
            )
            if not force:
                advice = (
                    f"`kubectl spark force-kill {app.name}/{last} --no-replace` suspends it first"
                    if last
                    else f'suspend it first (kubectl patch job {raw.name(job)} -p \'{{"spec":{{"suspend":true}}}}\')'
                )
                return dataclasses.replace(base, refusal=f"{why}; {advice}, or pass --force")
            warnings = (why,)
        spec = copy.deepcopy(raw.mapping(job, "spec"))
        for key in ("selector", "manualSelector"):
            spec.pop(key, None)
        template = dict(raw.mapping(spec, "template"))
        spec["template"] = template
        labels = {
            k: v
            for k, v in raw.mapping(template, "metadata", "labels").items()
            if k not in _JOB_LABELS and k != APP_ID  # a label cannot be per pod; the conf is
        }
        template["metadata"] = {**raw.mapping(template, "metadata"), "labels": labels}
        template["spec"] = _per_pod_identity(raw.mapping(template, "spec"))
        spec.pop("suspend", None)
        name = f"{re.sub(r'-r[a-z0-9]{5,}$', '', raw.name(job))}-r{suffix}"[:63].rstrip("-")
        body = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": name,
                "namespace": app.namespace,
                "labels": {**raw.labels(job), RESUBMITTED_FROM: raw.name(job)},
                "annotations": stamp,
            },
            "spec": spec,
        }
        op = Operation(
            "create",
            "batch/v1",
            "jobs",
            app.namespace,
            name,
            f"a new driver Job from {raw.name(job)}'s template; each of its pods takes its "
            "spark.app.id, executor name prefix and driver pod name from its own name "
            "($(POD_NAME), the downward API), so its later retries collide with nothing",
            body,
        )
        target = (
            ("Pod", "v1", raw.name(driver), raw.uid(driver))
            if driver is not None
            else ("Job", "batch/v1", raw.name(job), raw.uid(job))
        )
        event = event_on(
            app.namespace,
            *target,
            "Resubmitted",
            f"{app.name} resubmitted by {actor} as Job {name}",
            now,
            actor,
        )
        return dataclasses.replace(base, operations=(op, event), created=(body,), warnings=warnings)
    if driver is None:
        return dataclasses.replace(base, refusal=f"no driver pod of {app.name} is left to copy")
    resubmission = suffix
    name = f"{re.sub(r'-r[a-z0-9]{5,}$', '', raw.name(driver))}-r{suffix}"[:253]
    app_id = new_app_id(app.app_id, suffix)
    cm_copies = {raw.name(cm): f"{raw.name(cm)}-r{suffix}"[:253] for cm in configmaps}
    svc_copies = {raw.name(svc): f"{raw.name(svc)}-r{suffix}"[:63] for svc in services}
    labels = {
        **raw.labels(driver),
        RESUBMITTED_FROM: raw.name(driver),
        "kubectl-spark.io/resubmission": resubmission,
        APP_ID: app_id,
    }
    for key in (FENCE_LABEL, FENCE_ID):
        labels.pop(key, None)
    spec = _own_identity(_with_new_prefix(raw.mapping(driver, "spec"), prefix), app_id, cm_copies)
    spec.pop("nodeName", None)
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            **_clean_meta(raw.mapping(driver, "metadata")),
            "name": name,
            "labels": labels,
            "annotations": {**raw.annotation_map(driver), **stamp},
        },
        "spec": spec,
    }
    meta = body["metadata"]
    assert isinstance(meta, dict)
    meta.pop("namespace", None)
    created = [body]
    ops = [
        Operation(
            "create",
            "v1",
            "pods",
            app.namespace,
            name,
            f"a new driver pod from {raw.name(driver)}, executor name prefix {prefix}",
            body,
        )
    ]
    host = f"{next(iter(svc_copies.values()))}.{app.namespace}.svc" if svc_copies else ""
    for cm in configmaps:
        copy_name = cm_copies[raw.name(cm)]
        cm_body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": copy_name, "labels": raw.labels(cm), "annotations": stamp},
            "data": {
                key: _own_properties(value, app_id=app_id, pod=name, host=host)
                if isinstance(value, str)
                else value
                for key, value in raw.mapping(cm, "data").items()
            },
        }
        created.append(cm_body)
        ops.append(
            Operation(
                "create",
                "v1",
                "configmaps",
                app.namespace,
                copy_name,
                f"a copy of {raw.name(cm)} for the new driver",
                cm_body,
            )
        )
    for svc in services:
        copy_name = svc_copies[raw.name(svc)]
        spec_svc = {
            k: v
            for k, v in raw.mapping(svc, "spec").items()
            if k not in ("clusterIP", "clusterIPs")
        }
        spec_svc["clusterIP"] = "None"
        spec_svc["selector"] = {
            **raw.mapping(svc, "spec", "selector"),
            "kubectl-spark.io/resubmission": resubmission,
        }
        svc_body = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": copy_name, "labels": raw.labels(svc), "annotations": stamp},
            "spec": spec_svc,
        }
        created.append(svc_body)
        ops.append(
            Operation(
                "create",
                "v1",
                "services",
                app.namespace,
                copy_name,
                f"a copy of headless Service {raw.name(svc)} that selects only the new driver",
                svc_body,
            )
        )
    ops.append(
        event_on(
            app.namespace,
            "Pod",
            "v1",
            raw.name(driver),
            raw.uid(driver),
            "Resubmitted",
            f"{app.name} resubmitted by {actor} as driver pod {name}",
            now,
            actor,
        )
    )
    return dataclasses.replace(
        base,
        operations=tuple(ops),
        created=tuple(created),
        notes=(
            (
                f"the new driver has its own app id {app_id}: with the old one it would count (and "
                "at its end delete) the old attempt's executors, which Spark selects by app id"
            ),
            (
                "it mounts the copies of the ConfigMaps, whose spark.app.id, "
                "spark.kubernetes.driver.pod.name and spark.driver.host name the new driver"
            ),
            "the copies of the ConfigMap and Service have no owner until you delete the old driver's",
            *(
                (
                    (
                        f"the driver pod {raw.name(driver)} is gone: copied from what "
                        f"force-kill kept in the local history store at {kept_at}"
                    ),
                )
                if kept_at
                else ()
            ),
        ),
    )
