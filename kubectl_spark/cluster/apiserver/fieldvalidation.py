"""Server-side field validation (``?fieldValidation=Strict|Warn|Ignore``) for what people write.

The emulator's OpenAPI documents tell kubectl that the server checks fields, so kubectl sends
``fieldValidation=Strict`` and checks nothing itself; a typo must then be refused here, as
kube-apiserver refuses it. Without schemas, the emulator knows the fields of the objects a
Spark user writes by hand — object metadata, a Pod's spec and containers, a Job's spec and pod
template — and the top level of every kind; deeper fields (probes, volumes, affinity) and the
spark-operator's spec pass unchecked. Warn (the server's default) answers with a ``Warning``
header per unknown field, as kube-apiserver does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .errors import ApiError, bad_request

OBJECT_META = {
    "annotations", "creationTimestamp", "deletionGracePeriodSeconds", "deletionTimestamp",
    "finalizers", "generateName", "generation", "labels", "managedFields", "name", "namespace",
    "ownerReferences", "resourceVersion", "selfLink", "uid",
}  # fmt: skip
POD_SPEC = {
    "activeDeadlineSeconds", "affinity", "automountServiceAccountToken", "containers",
    "dnsConfig", "dnsPolicy", "enableServiceLinks", "ephemeralContainers", "hostAliases",
    "hostIPC", "hostNetwork", "hostPID", "hostUsers", "hostname", "imagePullSecrets",
    "initContainers", "nodeName", "nodeSelector", "os", "overhead", "preemptionPolicy",
    "priority", "priorityClassName", "readinessGates", "resourceClaims", "resources",
    "restartPolicy", "runtimeClassName", "schedulerName", "schedulingGates", "securityContext",
    "serviceAccount", "serviceAccountName", "setHostnameAsFQDN", "shareProcessNamespace",
    "subdomain", "terminationGracePeriodSeconds", "tolerations", "topologySpreadConstraints",
    "volumes",
}  # fmt: skip
CONTAINER = {
    "args", "command", "env", "envFrom", "image", "imagePullPolicy", "lifecycle",
    "livenessProbe", "name", "ports", "readinessProbe", "resizePolicy", "resources",
    "restartPolicy", "securityContext", "startupProbe", "stdin", "stdinOnce",
    "terminationMessagePath", "terminationMessagePolicy", "tty", "volumeDevices", "volumeMounts",
    "workingDir",
}  # fmt: skip
JOB_SPEC = {
    "activeDeadlineSeconds", "backoffLimit", "backoffLimitPerIndex", "completionMode",
    "completions", "managedBy", "manualSelector", "maxFailedIndexes", "parallelism",
    "podFailurePolicy", "podReplacementPolicy", "selector", "successPolicy", "suspend",
    "template", "ttlSecondsAfterFinished",
}  # fmt: skip
TOP = {"apiVersion", "kind", "metadata", "spec", "status"}
# Kinds whose top level holds more than spec and status, by (apiVersion, kind).
TOP_EXTRA = {
    ("v1", "Event"): {
        "action", "count", "eventTime", "firstTimestamp", "involvedObject", "lastTimestamp",
        "message", "reason", "related", "reportingComponent", "reportingInstance", "series",
        "source", "type",
    },
    ("events.k8s.io/v1", "Event"): {
        "action", "deprecatedCount", "deprecatedFirstTimestamp", "deprecatedLastTimestamp",
        "deprecatedSource", "eventTime", "note", "reason", "regarding", "related",
        "reportingController", "reportingInstance", "series", "type",
    },
    ("v1", "ConfigMap"): {"binaryData", "data", "immutable"},
    ("v1", "Secret"): {"data", "immutable", "stringData", "type"},
    ("v1", "Binding"): {"target"},
    ("v1", "Endpoints"): {"subsets"},
    ("policy/v1", "Eviction"): {"deleteOptions"},
}  # fmt: skip
MODES = ("Ignore", "Warn", "Strict")


Unknown = tuple[str, dict[str, Any], str]  # (path as kube names it, the dict holding it, its key)


def _unknown(obj: Any, known: set[str], where: str) -> Iterator[Unknown]:
    if isinstance(obj, dict):
        for key in obj:
            if key not in known:
                yield f"{where}{key}", obj, key


def _pod_spec(spec: Any, where: str) -> Iterator[Unknown]:
    yield from _unknown(spec, POD_SPEC, where)
    if not isinstance(spec, dict):
        return
    for group in ("containers", "initContainers"):
        for i, container in enumerate(spec.get(group) or []):
            yield from _unknown(container, CONTAINER, f"{where}{group}[{i}].")


def _found(kind: str, obj: Any, api_version: str) -> list[Unknown]:
    if not isinstance(obj, dict):
        return []
    found = list(_unknown(obj, TOP | TOP_EXTRA.get((api_version, kind), set()), ""))
    found += _unknown(obj.get("metadata"), OBJECT_META, "metadata.")
    spec = obj.get("spec")
    if kind == "Pod":
        found += _pod_spec(spec, "spec.")
    elif kind == "Job" and isinstance(spec, dict):
        found += _unknown(spec, JOB_SPEC, "spec.")
        template = spec.get("template")
        if isinstance(template, dict):
            found += _unknown(template, {"metadata", "spec"}, "spec.template.")
            found += _unknown(template.get("metadata"), OBJECT_META, "spec.template.metadata.")
            found += _pod_spec(template.get("spec"), "spec.template.spec.")
    return found


def unknown_fields(kind: str, obj: Any, api_version: str = "v1") -> list[str]:
    """The fields of ``obj`` its kind does not have, as kube-apiserver names them."""
    return [path for path, _, _ in _found(kind, obj, api_version)]


def check(mode: str | None, kind: str, api_version: str, obj: Any) -> list[str]:
    """Raise for Strict; otherwise drop the unknown fields and say so for Warn (the default).

    A typed decode has nowhere to keep an unknown field, so kube-apiserver stores the object
    without it; Warn returns the ``Warning`` header values, Ignore none.
    """
    mode = mode or "Warn"
    if mode not in MODES:
        raise bad_request(
            f'fieldValidation must be one of "Ignore", "Warn", or "Strict", not "{mode}"'
        )
    found = _found(kind, obj, api_version)
    unknown = [path for path, _, _ in found]
    if mode != "Strict":
        for _, holder, key in reversed(found):  # innermost first: outer ones may hold them
            holder.pop(key, None)
    if mode == "Ignore" or not unknown:
        return []
    if mode == "Strict":
        listed = ", ".join(f'unknown field "{f}"' for f in unknown)
        raise ApiError(
            400,
            "BadRequest",
            f'{kind} in version "{api_version.rsplit("/", maxsplit=1)[-1]}" cannot be handled as a {kind}: '
            f"strict decoding error: {listed}",
        )
    return [f'299 - "unknown field \\"{f}\\""' for f in unknown]
