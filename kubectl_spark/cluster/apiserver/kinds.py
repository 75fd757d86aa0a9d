"""What kube-apiserver's registry strategies and admission plugins do per kind.

Only what a client can observe and what the simulator relies on: defaults (pods get the
DefaultTolerationSeconds tolerations, Jobs their selector and labels), validation that a real
server would refuse (names, labels, required fields, immutable pod spec), supported field
selectors, graceful-deletion periods, and the core/v1 ↔ events.k8s.io/v1 Event conversion.
"""

from __future__ import annotations

import copy
import ipaddress
import re
import secrets
from collections.abc import Mapping
from typing import Any

from .resources import ResourceType
from .selectors import FieldGetter, path_getter

Causes = list[tuple[str, str, str]]

_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)

GENERIC_FIELDS: dict[str, FieldGetter] = {
    "metadata.name": path_getter("metadata", "name"),
    "metadata.namespace": path_getter("metadata", "namespace"),
}


def _bool_getter(*path: str) -> FieldGetter:
    inner = path_getter(*path)

    def get(obj: Mapping[str, Any]) -> str | None:
        return inner(obj) or "false"

    return get


POD_FIELDS: dict[str, FieldGetter] = {
    **GENERIC_FIELDS,
    "spec.nodeName": path_getter("spec", "nodeName"),
    "spec.restartPolicy": path_getter("spec", "restartPolicy"),
    "spec.schedulerName": path_getter("spec", "schedulerName"),
    "spec.serviceAccountName": path_getter("spec", "serviceAccountName"),
    "spec.hostNetwork": _bool_getter("spec", "hostNetwork"),
    "status.phase": path_getter("status", "phase"),
    "status.podIP": path_getter("status", "podIP"),
    "status.nominatedNodeName": path_getter("status", "nominatedNodeName"),
}

EVENT_FIELDS: dict[str, FieldGetter] = {
    **GENERIC_FIELDS,
    **{
        f"involvedObject.{f}": path_getter("involvedObject", f)
        for f in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
    },
    "reason": path_getter("reason"),
    "reportingComponent": path_getter("reportingComponent"),
    "source": path_getter("source", "component"),
    "type": path_getter("type"),
}

FIELDS_BY_PLURAL: dict[str, dict[str, FieldGetter]] = {
    "pods": POD_FIELDS,
    "events": EVENT_FIELDS,
    "nodes": {**GENERIC_FIELDS, "spec.unschedulable": _bool_getter("spec", "unschedulable")},
    "namespaces": {**GENERIC_FIELDS, "status.phase": path_getter("status", "phase")},
    "jobs": {**GENERIC_FIELDS, "status.successful": path_getter("status", "succeeded")},
}


def field_getters(rt: ResourceType) -> dict[str, FieldGetter]:
    return FIELDS_BY_PLURAL.get(rt.plural, GENERIC_FIELDS)


# ----------------------------------------------------------------------------------- names
LABEL_NAMED = {"namespaces", "services"}


def validate_name(rt: ResourceType, name: str) -> Causes:
    if rt.plural in LABEL_NAMED:
        if len(name) > 63 or not _LABEL.match(name):
            return [("FieldValueInvalid", "metadata.name", f'Invalid value: "{name}": {LABEL_MSG}')]
        return []
    if len(name) > 253 or not _SUBDOMAIN.match(name):
        return [("FieldValueInvalid", "metadata.name", f'Invalid value: "{name}": {SUBDOMAIN_MSG}')]
    return []


# -------------------------------------------------------------------------------- defaults
DEFAULT_TOLERATIONS = (
    {
        "key": "node.kubernetes.io/not-ready",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
    {
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
)


def _default_container(container: dict[str, Any]) -> None:
    image = str(container.get("image") or "")
    tagged = ":" in image.rsplit("/", 1)[-1] or "@" in image
    latest = image.endswith(":latest") or not tagged
    container.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    container.setdefault("resources", {})
    for port in container.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")


def default_pod_spec(spec: dict[str, Any]) -> None:
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    spec.setdefault("priority", 0)
    if spec.get("serviceAccountName") is None:
        spec["serviceAccountName"] = spec.get("serviceAccount") or "default"
    spec.setdefault("serviceAccount", spec["serviceAccountName"])
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or []:
            if isinstance(container, dict):
                _default_container(container)


def _admit_default_tolerations(spec: dict[str, Any]) -> None:
    """The DefaultTolerationSeconds admission plugin: 300 s for not-ready and unreachable."""
    tolerations = spec.setdefault("tolerations", [])
    if not isinstance(tolerations, list):
        return
    for default in DEFAULT_TOLERATIONS:
        if not any(
            isinstance(t, dict)
            and (
                t.get("key") == default["key"]
                or (not t.get("key") and t.get("operator") == "Exists")
            )
            and t.get("effect") in (None, "", "NoExecute")
            for t in tolerations
        ):
            tolerations.append(dict(default))


SERVICE_ACCOUNT_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
_NAME_LETTERS = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery util/rand's alphabet


def _admit_service_account_token(spec: dict[str, Any]) -> None:
    """The ServiceAccount admission plugin: the account's token, its CA and namespace, mounted.

    plugin/pkg/admission/serviceaccount/admission.go (``mountServiceAccountToken``): unless the
    pod says ``automountServiceAccountToken: false`` or already mounts something there, a
    projected volume ``kube-api-access-<5 letters>`` (a bound token of 3607 s, the
    ``kube-root-ca.crt`` ConfigMap's ``ca.crt``, the namespace) at the service account's path in
    every container. Spark's driver and fabric8 read the API server's CA and the token there.
    """
    if spec.get("automountServiceAccountToken") is False:
        return
    containers = [
        c
        for key in ("initContainers", "containers")
        for c in spec.get(key) or []
        if isinstance(c, dict)
    ]
    if any(
        isinstance(m, dict) and m.get("mountPath") == SERVICE_ACCOUNT_MOUNT
        for c in containers
        for m in c.get("volumeMounts") or []
    ):
        return
    name = "kube-api-access-" + "".join(secrets.choice(_NAME_LETTERS) for _ in range(5))
    volumes = spec.setdefault("volumes", [])
    if not isinstance(volumes, list):
        return
    volumes.append(
        {
            "name": name,
            "projected": {
                "defaultMode": 420,
                "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {
                        "configMap": {
                            "name": "kube-root-ca.crt",
                            "items": [{"key": "ca.crt", "path": "ca.crt"}],
                        }
                    },
                    {
                        "downwardAPI": {
                            "items": [
                                {
                                    "path": "namespace",
                                    "fieldRef": {
                                        "apiVersion": "v1",
                                        "fieldPath": "metadata.namespace",
                                    },
                                }
                            ]
                        }
                    },
                ],
            },
        }
    )
    for container in containers:
        mounts = container.setdefault("volumeMounts", [])
        if isinstance(mounts, list):
            mounts.append({"name": name, "mountPath": SERVICE_ACCOUNT_MOUNT, "readOnly": True})


def _qos_class(spec: Mapping[str, Any]) -> str:
    requests_any = False
    guaranteed = True
    for container in spec.get("containers") or []:
        resources = container.get("resources") or {} if isinstance(container, dict) else {}
        requests = resources.get("requests") or {}
        limits = resources.get("limits") or {}
        if requests or limits:
            requests_any = True
        for res in ("cpu", "memory"):
            if res not in limits or (res in requests and requests[res] != limits[res]):
                guaranteed = False
    if not requests_any:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def apply_defaults(rt: ResourceType, obj: dict[str, Any], uid: str) -> None:
    """Fill defaults on create, as the registry strategy and default admission would."""
    spec = obj.get("spec")
    if rt.plural == "pods" and isinstance(spec, dict):
        default_pod_spec(spec)
        _admit_default_tolerations(spec)
        _admit_service_account_token(spec)
        status = obj.setdefault("status", {})
        status.setdefault("phase", "Pending")
        status.setdefault("qosClass", _qos_class(spec))
    elif rt.plural == "jobs" and isinstance(spec, dict):
        _default_job(obj, spec, uid)
    elif rt.plural == "namespaces":
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
        obj.setdefault("status", {}).setdefault("phase", "Active")
        labels = obj["metadata"].setdefault("labels", {})
        labels["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
    elif rt.plural == "services" and isinstance(spec, dict):
        spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        for port in spec.get("ports") or []:
            if isinstance(port, dict):
                port.setdefault("protocol", "TCP")
                port.setdefault("targetPort", port.get("port"))
        obj.setdefault("status", {"loadBalancer": {}})
    elif rt.plural == "persistentvolumeclaims" and isinstance(spec, dict):
        spec.setdefault("volumeMode", "Filesystem")
        obj.setdefault("status", {"phase": "Pending"})
    elif rt.plural == "persistentvolumes" and isinstance(spec, dict):
        spec.setdefault("volumeMode", "Filesystem")
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
        obj.setdefault("status", {"phase": "Pending"})
    elif rt.plural == "networkpolicies" and isinstance(spec, dict) and "policyTypes" not in spec:
        spec["policyTypes"] = ["Ingress"] + (["Egress"] if spec.get("egress") else [])


def _default_job(obj: dict[str, Any], spec: dict[str, Any], uid: str) -> None:
    name = obj["metadata"]["name"]
    spec.setdefault("parallelism", 1)
    spec.setdefault("completions", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    if "podReplacementPolicy" not in spec:
        spec["podReplacementPolicy"] = (
            "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed"
        )
    template = spec.setdefault("template", {})
    tmeta = template.setdefault("metadata", {})
    labels = tmeta.setdefault("labels", {})
    if not spec.get("manualSelector"):
        spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
        labels.update(
            {
                "batch.kubernetes.io/controller-uid": uid,
                "batch.kubernetes.io/job-name": name,
                "controller-uid": uid,
                "job-name": name,
            }
        )
    tspec = template.get("spec")
    if isinstance(tspec, dict):
        default_pod_spec(tspec)
    obj.setdefault("status", {})


# ------------------------------------------------------------------------------ validation
def _containers_causes(spec: Mapping[str, Any], prefix: str) -> Causes:
    causes: Causes = []
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        return [("FieldValueRequired", f"{prefix}.containers", "Required value")]
    seen: set[str] = set()
    for i, container in enumerate(containers):
        if not isinstance(container, dict):
            causes.append(
                (
                    "FieldValueInvalid",
                    f"{prefix}.containers[{i}]",
                    "Invalid value: must be an object",
                )
            )
            continue
        name = container.get("name")
        if not name:
            causes.append(
                ("FieldValueRequired", f"{prefix}.containers[{i}].name", "Required value")
            )
        elif name in seen:
            causes.append(
                (
                    "FieldValueDuplicate",
                    f"{prefix}.containers[{i}].name",
                    f'Duplicate value: "{name}"',
                )
            )
        else:
            seen.add(str(name))
        if not container.get("image"):
            causes.append(
                ("FieldValueRequired", f"{prefix}.containers[{i}].image", "Required value")
            )
    return causes


def _endpoint_ip(text: Any, where: str) -> Causes:
    """An Endpoints address as kube-apiserver's ``ValidateEndpointIP`` checks it.

    One the service proxy and kube-proxy could route to: never loopback, link-local or
    unspecified (pkg/apis/core/validation/validation.go).
    """
    try:
        ip = ipaddress.ip_address(str(text))
    except ValueError:
        return [
            ("FieldValueInvalid", where, f'Invalid value: "{text}": must be a valid IP address')
        ]
    rules = (
        (ip.is_unspecified, f"may not be unspecified ({text})"),
        (ip.is_loopback, "may not be in the loopback range (127.0.0.0/8, ::1/128)"),
        (ip.is_link_local and not ip.is_multicast,
         "may not be in the link-local range (169.254.0.0/16, fe80::/10)"),
        (ip in ipaddress.ip_network("224.0.0.0/24") if ip.version == 4
         else ip in ipaddress.ip_network("ff02::/16"),
         "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"),
    )  # fmt: skip
    return [
        ("FieldValueInvalid", where, f'Invalid value: "{text}": {m}') for bad, m in rules if bad
    ]


def _endpoints_causes(obj: Mapping[str, Any]) -> Causes:
    causes: Causes = []
    for i, subset in enumerate(obj.get("subsets") or []):
        if not isinstance(subset, Mapping):
            continue
        if not subset.get("addresses") and not subset.get("notReadyAddresses"):
            causes.append(
                ("FieldValueRequired", f"subsets[{i}]",
                 "Required value: must specify `addresses` or `notReadyAddresses`")
            )  # fmt: skip
        for group in ("addresses", "notReadyAddresses"):
            for j, address in enumerate(subset.get(group) or []):
                if isinstance(address, Mapping):
                    causes += _endpoint_ip(address.get("ip"), f"subsets[{i}].{group}[{j}].ip")
    return causes


def validate_create(rt: ResourceType, obj: Mapping[str, Any]) -> Causes:
    spec = obj.get("spec")
    if rt.plural == "endpoints":
        return _endpoints_causes(obj)
    if rt.plural == "pods":
        if not isinstance(spec, Mapping):
            return [("FieldValueRequired", "spec", "Required value")]
        causes = _containers_causes(spec, "spec")
        if spec.get("restartPolicy") not in ("Always", "OnFailure", "Never"):
            causes.append(
                (
                    "FieldValueNotSupported",
                    "spec.restartPolicy",
                    f'Unsupported value: "{spec.get("restartPolicy")}": supported values: "Always", "OnFailure", "Never"',
                )
            )
        return causes
    if rt.plural == "jobs":
        if not isinstance(spec, Mapping):
            return [("FieldValueRequired", "spec", "Required value")]
        template = spec.get("template") or {}
        tspec = template.get("spec") if isinstance(template, Mapping) else None
        if not isinstance(tspec, Mapping):
            return [("FieldValueRequired", "spec.template.spec", "Required value")]
        causes = _containers_causes(tspec, "spec.template.spec")
        if tspec.get("restartPolicy") not in ("OnFailure", "Never"):
            causes.append(
                (
                    "FieldValueRequired",
                    "spec.template.spec.restartPolicy",
                    'Required value: valid values: "OnFailure", "Never"',
                )
            )
        return causes
    return []


# Pod spec fields that may change after creation (pkg/apis/core/validation ValidatePodUpdate).
_MUTABLE_POD_SPEC = {
    "activeDeadlineSeconds",
    "tolerations",
    "terminationGracePeriodSeconds",
    "schedulingGates",
}


def validate_update(rt: ResourceType, old: Mapping[str, Any], new: Mapping[str, Any]) -> Causes:
    if rt.plural != "pods":
        return validate_create(rt, new) if rt.plural in ("jobs", "endpoints") else []
    old_spec = copy.deepcopy(dict(old.get("spec") or {}))
    new_spec = copy.deepcopy(dict(new.get("spec") or {}))
    for spec in (old_spec, new_spec):
        for key in _MUTABLE_POD_SPEC:
            spec.pop(key, None)
        for container in spec.get("containers") or []:
            if isinstance(container, dict):
                container.pop("image", None)
    if old_spec != new_spec:
        return [
            (
                "FieldValueForbidden",
                "spec",
                (
                    "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
                    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` "
                    "(only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
                    "(allow it to be set to 1 if it was previously negative)"
                ),
            )
        ]
    return []


def grace_period_for_delete(rt: ResourceType, obj: Mapping[str, Any], requested: int | None) -> int:
    """pkg/registry/core/pod/strategy.go CheckGracefulDelete; other kinds delete at once."""
    if rt.plural != "pods":
        return 0
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    if requested is None:
        grace = spec.get("terminationGracePeriodSeconds")
        grace = 30 if grace is None else int(grace)
    else:
        grace = max(int(requested), 0) if requested >= 0 else 1
    if not spec.get("nodeName") or status.get("phase") in ("Succeeded", "Failed"):
        return 0
    return grace


def default_propagation(rt: ResourceType) -> str:
    # batch/v1 Jobs keep the legacy default of orphaning their pods (DefaultGarbageCollectionPolicy).
    return "Orphan" if rt.plural == "jobs" else "Background"


# ---------------------------------------------------------------- events.k8s.io conversion
_EV_RENAMES = (
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("reportingComponent", "reportingController"),
)


def to_storage(rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """Convert an object of ``rt`` to the stored form (events.k8s.io Events → core/v1).

    A custom resource at another served version is stored as is under the storage version
    (a CRD's conversion strategy None); a body naming a third version is left to be refused.
    """
    if rt.stored_as:
        if obj.get("apiVersion") in (None, rt.api_version):
            obj["apiVersion"] = rt.stored_as
        return obj
    if rt.group != "events.k8s.io":
        return obj
    out = {k: v for k, v in obj.items() if k not in {new for _, new in _EV_RENAMES}}
    for core, new in _EV_RENAMES:
        if new in obj:
            out[core] = obj[new]
    out["apiVersion"] = "v1"
    out["kind"] = "Event"
    return out


def from_storage(rt: ResourceType, obj: Mapping[str, Any]) -> dict[str, Any]:
    if rt.stored_as:
        return {**obj, "apiVersion": rt.api_version}
    if rt.group != "events.k8s.io":
        return dict(obj)
    out = {k: v for k, v in obj.items() if k not in {core for core, _ in _EV_RENAMES}}
    for core, new in _EV_RENAMES:
        if core in obj:
            out[new] = obj[core]
    out["apiVersion"] = "events.k8s.io/v1"
    out["kind"] = "Event"
    return out
