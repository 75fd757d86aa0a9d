"""Server-side printing: the ``Table`` kubectl asks for with ``Accept: …;as=Table;g=meta.k8s.io``.

``kubectl get`` prints whatever columns the server's table holds; without one it falls back to
NAME and AGE. kube-apiserver builds the table with its own printers (pkg/printers/internalversion,
always with the wide columns, which kubectl shows under ``-o wide``); these are ports of the ones
for the kinds a Spark user looks at — pods (READY, STATUS as kubectl shows it: OOMKilled, Error,
Terminating…, RESTARTS with how long ago), driver Jobs, nodes, namespaces, events, Services
and Endpoints (the recorder's and a History Server's), and the
spark-operator's SparkApplications (its CRD's printer columns) — and the default for the rest
(Name and Age, as for a custom resource without printer columns). AGE is computed against the
emulator's clock, like the server's ``translateTimestampSince``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from kubectl_spark.knowledge.durations import human_duration
from kubectl_spark.knowledge.printpod import print_pod
from kubectl_spark.knowledge.times import parse_time

TABLE_GROUP = "meta.k8s.io"
Column = tuple[str, str, int]  # (name, format, priority)
Row = list[Any]

_NAME: Column = ("Name", "name", 0)
_AGE: Column = ("Age", "", 0)


def requested(accept: str | None) -> str | None:
    """The Table apiVersion the client prefers (``meta.k8s.io/v1``…), or None for plain JSON.

    Media types are taken in the client's order, as kube-apiserver negotiates: kubectl lists the
    Table forms first and plain JSON last.
    """
    for part in (accept or "").split(","):
        media, *params = (p.strip() for p in part.split(";"))
        options = dict(p.split("=", 1) for p in params if "=" in p)
        if media not in ("application/json", "application/*", "*/*"):
            continue
        if options.get("as") == "Table":
            if options.get("g") == TABLE_GROUP and options.get("v") in ("v1", "v1beta1"):
                return f"{TABLE_GROUP}/{options['v']}"
            continue
        return None
    return None


def _since(value: Any, now: datetime) -> str:
    """translateTimestampSince: <unknown> for a missing or unreadable time."""
    if not isinstance(value, str) or not value:
        return "<unknown>"
    try:
        return human_duration((now - parse_time(value)).total_seconds())
    except ValueError:
        return "<unknown>"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


# ------------------------------------------------------------------------------------- pods
POD_COLUMNS: list[Column] = [
    _NAME,
    ("Ready", "", 0),
    ("Status", "", 0),
    ("Restarts", "", 0),
    _AGE,
    ("IP", "", 1),
    ("Node", "", 1),
    ("Nominated Node", "", 1),
    ("Readiness Gates", "", 1),
]


def _pod_row(pod: dict[str, Any], now: datetime) -> Row:
    """The columns kubectl's printPod makes: STATUS and RESTARTS from ``knowledge.printpod``."""
    meta, spec, status = (
        _dict(pod.get("metadata")),
        _dict(pod.get("spec")),
        _dict(pod.get("status")),
    )
    printed = print_pod(pod)
    conditions = _list(status.get("conditions"))
    restarts_text = str(printed.restarts)
    if printed.restarts and printed.last_restart:
        restarts_text = f"{printed.restarts} ({_since(printed.last_restart, now)} ago)"
    ips = _list(status.get("podIPs"))
    ip = str(ips[0].get("ip") or "") if ips else str(status.get("podIP") or "")
    gates = _list(spec.get("readinessGates"))
    if gates:
        true = {c.get("type") for c in conditions if c.get("status") == "True"}
        gates_text = f"{sum(1 for g in gates if g.get('conditionType') in true)}/{len(gates)}"
    else:
        gates_text = "<none>"
    return [
        meta.get("name", ""),
        f"{printed.ready}/{printed.total}",
        printed.status,
        restarts_text,
        _since(meta.get("creationTimestamp"), now),
        ip or "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        gates_text,
    ]


# ------------------------------------------------------------------------------------ nodes
NODE_COLUMNS: list[Column] = [
    _NAME,
    ("Status", "", 0),
    ("Roles", "", 0),
    _AGE,
    ("Version", "", 0),
    ("Internal-IP", "", 1),
    ("External-IP", "", 1),
    ("OS-Image", "", 1),
    ("Kernel-Version", "", 1),
    ("Container-Runtime", "", 1),
]


def _node_row(node: dict[str, Any], now: datetime) -> Row:
    meta, spec, status = (_dict(node.get(k)) for k in ("metadata", "spec", "status"))
    ready = next((c for c in _list(status.get("conditions")) if c.get("type") == "Ready"), None)
    states = [
        "Unknown" if ready is None else "Ready" if ready.get("status") == "True" else "NotReady"
    ]
    if spec.get("unschedulable"):
        states.append("SchedulingDisabled")
    roles = sorted(
        {
            key.split("/", 1)[1]
            for key in _dict(meta.get("labels"))
            if key.startswith("node-role.kubernetes.io/") and key.split("/", 1)[1]
        }
        | {str(v) for k, v in _dict(meta.get("labels")).items() if k == "kubernetes.io/role" and v}
    )
    info = _dict(status.get("nodeInfo"))

    def address(kind: str) -> str:
        found = [a.get("address") for a in _list(status.get("addresses")) if a.get("type") == kind]
        return str(found[0]) if found and found[0] else "<none>"

    return [
        meta.get("name", ""),
        ",".join(states),
        ",".join(roles) or "<none>",
        _since(meta.get("creationTimestamp"), now),
        info.get("kubeletVersion", ""),
        address("InternalIP"),
        address("ExternalIP"),
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


# ------------------------------------------------------------------------------- namespaces
NAMESPACE_COLUMNS: list[Column] = [_NAME, ("Status", "", 0), _AGE]


def _namespace_row(ns: dict[str, Any], now: datetime) -> Row:
    meta = _dict(ns.get("metadata"))
    return [
        meta.get("name", ""),
        _dict(ns.get("status")).get("phase", ""),
        _since(meta.get("creationTimestamp"), now),
    ]


# ----------------------------------------------------------------------------------- events
EVENT_COLUMNS: list[Column] = [
    ("Last Seen", "", 0),
    ("Type", "", 0),
    ("Reason", "", 0),
    ("Object", "", 0),
    ("Subobject", "", 1),
    ("Source", "", 1),
    ("Message", "", 0),
    ("First Seen", "", 1),
    ("Count", "", 1),
    ("Name", "name", 1),
]


def _event_row(event: dict[str, Any], now: datetime) -> Row:
    """printEvent: LAST SEEN falls back to the first time, and a series' last observation wins."""
    involved = _dict(event.get("involvedObject"))
    first = (
        _since(event.get("firstTimestamp"), now)
        if event.get("firstTimestamp")
        else _since(event.get("eventTime"), now)
    )
    last = _since(event.get("lastTimestamp"), now) if event.get("lastTimestamp") else first
    count = event.get("count") or 0
    series = _dict(event.get("series"))
    if series:
        last = _since(series.get("lastObservedTime"), now)
        count = series.get("count") or 0
    elif not count:
        count = 1
    kind = str(involved.get("kind") or "").lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    source = _dict(event.get("source"))
    component = source.get("component") or event.get("reportingComponent") or ""
    host = source.get("host") or event.get("reportingInstance") or ""
    return [
        last,
        event.get("type", ""),
        event.get("reason", ""),
        target,
        involved.get("fieldPath", ""),
        f"{component}, {host}" if component and host else component or host,
        str(event.get("message") or "").strip(),
        first,
        count,
        _dict(event.get("metadata")).get("name", ""),
    ]


# ------------------------------------------------------------------------------------- jobs
JOB_COLUMNS: list[Column] = [
    _NAME,
    ("Status", "", 0),
    ("Completions", "", 0),
    ("Duration", "", 0),
    _AGE,
    ("Containers", "", 1),
    ("Images", "", 1),
    ("Selector", "", 1),
]


def _selector(selector: Any) -> str:
    """metav1.FormatLabelSelector: requirements sorted by key, values sorted; <none> if empty."""
    if not isinstance(selector, dict):
        return "<none>"
    parts: list[tuple[str, str]] = [
        (str(k), f"{k}={v}") for k, v in _dict(selector.get("matchLabels")).items()
    ]
    for expr in _list(selector.get("matchExpressions")):
        key, op = str(expr.get("key", "")), expr.get("operator")
        values = ",".join(sorted(str(v) for v in expr.get("values") or []))
        text = {
            "In": f"{key} in ({values})",
            "NotIn": f"{key} notin ({values})",
            "Exists": key,
            "DoesNotExist": f"!{key}",
        }.get(str(op))
        if text is None:
            return "<error>"
        parts.append((key, text))
    return ",".join(text for _, text in sorted(parts, key=lambda p: p[0])) or "<none>"


def _job_row(job: dict[str, Any], now: datetime) -> Row:
    """printJob: STATUS from the first true condition in kube's order, DURATION start to finish."""
    meta, spec, status = (_dict(job.get(k)) for k in ("metadata", "spec", "status"))
    succeeded = status.get("succeeded") or 0
    completions = spec.get("completions")
    parallelism = spec.get("parallelism") or 0
    if isinstance(completions, int):
        done = f"{succeeded}/{completions}"
    elif isinstance(parallelism, int) and parallelism > 1:
        done = f"{succeeded}/1 of {parallelism}"
    else:
        done = f"{succeeded}/1"
    true = {c.get("type") for c in _list(status.get("conditions")) if c.get("status") == "True"}
    if "Complete" in true:
        state = "Complete"
    elif "Failed" in true:
        state = "Failed"
    elif meta.get("deletionTimestamp"):
        state = "Terminating"
    else:
        state = next(
            (s for s in ("Suspended", "FailureTarget", "SuccessCriteriaMet") if s in true),
            "Running",
        )
    try:
        start = parse_time(str(status["startTime"]))
        end = parse_time(str(status["completionTime"])) if status.get("completionTime") else now
        elapsed = human_duration((end - start).total_seconds())
    except (KeyError, ValueError):
        elapsed = ""
    containers = _list(_dict(_dict(spec.get("template")).get("spec")).get("containers"))
    return [
        meta.get("name", ""),
        state,
        done,
        elapsed,
        _since(meta.get("creationTimestamp"), now),
        ",".join(str(c.get("name", "")) for c in containers),
        ",".join(str(c.get("image", "")) for c in containers),
        _selector(spec.get("selector")),
    ]


# ------------------------------------------------------------------------ sparkapplications
# The spark-operator CRD's additionalPrinterColumns (v1beta2); a missing value is a null cell, as
# from the CRD table convertor (kubectl leaves it blank).
SPARKAPP_COLUMNS: list[Column] = [
    _NAME,
    ("Status", "", 0),
    ("Attempts", "", 0),
    ("Start", "", 0),
    ("Finish", "", 0),
    _AGE,
]


def _sparkapp_row(app: dict[str, Any], now: datetime) -> Row:
    meta, status = _dict(app.get("metadata")), _dict(app.get("status"))

    def text(value: Any) -> str | None:
        return None if value is None or isinstance(value, (dict, list)) else str(value)

    return [
        meta.get("name", ""),
        text(_dict(status.get("applicationState")).get("state")),
        text(status.get("executionAttempts")),
        text(status.get("lastSubmissionAttemptTime")),
        text(status.get("terminationTime")),
        _since(meta.get("creationTimestamp"), now),
    ]


# The Apache operator's CRDs (SparkApplication and SparkCluster of spark.apache.org) print the same
# two columns at both versions, v1 in this order (its chart's crds/*.yaml).
APACHE_COLUMNS: list[Column] = [_NAME, _AGE, ("Current State", "", 0)]


def _apache_row(obj: dict[str, Any], now: datetime) -> Row:
    meta = _dict(obj.get("metadata"))
    state = _dict(_dict(obj.get("status")).get("currentState")).get("currentStateSummary")
    return [
        meta.get("name", ""),
        _since(meta.get("creationTimestamp"), now),
        state if isinstance(state, str) else None,
    ]


# ---------------------------------------------------------------------------------- default
SERVICE_COLUMNS: list[Column] = [
    _NAME, ("Type", "", 0), ("Cluster-IP", "", 0), ("External-IP", "", 0), ("Port(s)", "", 0),
    _AGE, ("Selector", "", 1),
]  # fmt: skip
ENDPOINTS_COLUMNS: list[Column] = [_NAME, ("Endpoints", "", 0), _AGE]


def _service_row(svc: dict[str, Any], now: datetime) -> Row:
    """printService: ports as PORT/PROTOCOL (with the node port), the selector in -o wide."""
    spec = _dict(svc.get("spec"))
    kind = str(spec.get("type") or "")
    ips = [str(i) for i in spec.get("clusterIPs") or [] if i]
    external = [str(i) for i in spec.get("externalIPs") or [] if i]
    if kind in ("ClusterIP", "NodePort"):
        shown = ",".join(external) or "<none>"
    elif kind == "LoadBalancer":
        ingress = _list(_dict(_dict(svc.get("status")).get("loadBalancer")).get("ingress"))
        found = [str(i.get("ip") or i.get("hostname") or "") for i in ingress]
        shown = ",".join([f for f in found if f] + external) or "<pending>"
    elif kind == "ExternalName":
        shown = str(spec.get("externalName") or "")
    else:
        shown = "<unknown>"
    ports = ",".join(
        f"{p.get('port')}:{p['nodePort']}/{p.get('protocol')}"
        if p.get("nodePort")
        else f"{p.get('port')}/{p.get('protocol')}"
        for p in _list(spec.get("ports"))
    )
    selector = ",".join(f"{k}={v}" for k, v in sorted(_dict(spec.get("selector")).items()))
    name = _dict(svc.get("metadata")).get("name", "")
    created = _dict(svc.get("metadata")).get("creationTimestamp")
    return [name, kind, ips[0] if ips else "<none>", shown, ports or "<none>",
            _since(created, now), selector or "<none>"]  # fmt: skip


def _endpoints_row(ep: dict[str, Any], now: datetime) -> Row:
    """As printEndpoints' formatEndpoints: the first three ip:port, then "+ N more..."."""
    listed: list[str] = []
    count = 0
    for subset in _list(ep.get("subsets")):
        addresses = [str(a.get("ip") or "") for a in _list(subset.get("addresses"))]
        ports = _list(subset.get("ports")) or [{}]
        for port in ports:
            count += len(addresses)
            for ip in addresses:
                if len(listed) < 3:
                    host = f"[{ip}]" if ":" in ip else ip
                    listed.append(f"{host}:{port['port']}" if "port" in port else ip)
    text = ",".join(listed) if ep.get("subsets") else "<none>"
    if count > 3:
        text = f"{text} + {count - 3} more..."
    meta = _dict(ep.get("metadata"))
    return [meta.get("name", ""), text, _since(meta.get("creationTimestamp"), now)]


def _default_row(obj: dict[str, Any], now: datetime) -> Row:
    meta = _dict(obj.get("metadata"))
    return [meta.get("name", ""), _since(meta.get("creationTimestamp"), now)]


PRINTERS: dict[str, tuple[list[Column], Callable[[dict[str, Any], datetime], Row]]] = {
    "pods": (POD_COLUMNS, _pod_row),
    "nodes": (NODE_COLUMNS, _node_row),
    "namespaces": (NAMESPACE_COLUMNS, _namespace_row),
    "events": (EVENT_COLUMNS, _event_row),
    "jobs": (JOB_COLUMNS, _job_row),
    "services": (SERVICE_COLUMNS, _service_row),
    "endpoints": (ENDPOINTS_COLUMNS, _endpoints_row),
    "sparkapplications": (SPARKAPP_COLUMNS, _sparkapp_row),
    "sparkapplications.spark.apache.org": (APACHE_COLUMNS, _apache_row),
    "sparkclusters.spark.apache.org": (APACHE_COLUMNS, _apache_row),
}
DEFAULT: tuple[list[Column], Callable[[dict[str, Any], datetime], Row]] = (
    [_NAME, _AGE],
    _default_row,
)


def _row_object(obj: dict[str, Any], include: str, version: str) -> dict[str, Any] | None:
    """includeObject: Metadata (kube's default for tables), Object, or None."""
    if include == "None":
        return None
    if include == "Object":
        return obj
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": version,
        "metadata": _dict(obj.get("metadata")),
    }


def table(
    plural: str,
    objects: Iterable[dict[str, Any]],
    now: datetime,
    *,
    version: str,
    include_object: str | None,
    list_meta: dict[str, Any],
    columns: bool = True,
) -> dict[str, Any]:
    """A Table of ``objects``; ``columns=False`` for watch events after the first.

    ``plural`` is ``<plural>.<group>``: two groups may serve one plural (sparkapplications).
    """
    definitions, row_of = PRINTERS.get(plural) or PRINTERS.get(plural.split(".", 1)[0], DEFAULT)
    include = include_object or "Metadata"
    rows = []
    for obj in objects:
        row: dict[str, Any] = {"cells": row_of(obj, now)}
        shown = _row_object(obj, include, version)
        if shown is not None:
            row["object"] = shown
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": version,
        "metadata": list_meta,
        "columnDefinitions": [
            {"name": n, "type": "string", "format": f, "description": "", "priority": p}
            for n, f, p in definitions
        ]
        if columns
        else [],
        "rows": rows,
    }
