"""An in-cluster recorder, read through the API server's service proxy.

``kubectl spark recorder`` deploys one (``core/recorder_manifests.py``); it serves what it kept
on its Service's ``http`` port (``app/recorder_http.py``). The plugin asks the API server for
``/api/v1/namespaces/<ns>/services/<name>:http/proxy/v1/...``: the person's own credentials
(RBAC ``get`` on ``services/proxy`` in the recorder's namespace), no port-forward, no address
to know. Which recorder: ``--recorder NAMESPACE/NAME`` (or ``$KUBECTL_SPARK_RECORDER``), else
the Service labelled as the manifests label it, looked for in every namespace and, when that
list is forbidden, in the current one; ``--recorder none`` asks nothing.

What fails here never fails a command: a recorder that cannot be found is not used (``-v=6``
says why), and one that is found but does not answer is a warning.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubectl_spark import errors
from kubectl_spark.core.recorder_manifests import LABELS, PORT_NAME

from . import trace

SELECTOR = ",".join(f"{k}={v}" for k, v in LABELS.items())
TIMEOUT = 10.0
AUTO, NONE = "auto", "none"


@dataclass(frozen=True)
class RecorderRef:
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"

    def path(self, rest: str) -> str:
        return f"/api/v1/namespaces/{self.namespace}/services/{self.name}:{PORT_NAME}/proxy/{rest}"


def parse(text: str) -> str | RecorderRef:
    """``--recorder``'s value, checked by ``cli.globals.check_recorder``: auto, none, NS/NAME."""
    if text in (AUTO, NONE, ""):
        return text or AUTO
    namespace, _, name = text.partition("/")
    return RecorderRef(namespace, name)


def find(api: Any, wanted: str | RecorderRef) -> RecorderRef | None:
    """The recorder to ask, or None (none deployed, none readable, or ``none`` asked)."""
    if isinstance(wanted, RecorderRef):
        return wanted
    if wanted == NONE:
        return None
    found = _labelled(api, "/api/v1/services")
    if found is None and api.namespace:
        found = _labelled(api, f"/api/v1/namespaces/{api.namespace}/services")
    if not found:
        _say(api, "no recorder Service found (kubectl spark recorder deploys one)")
        return None
    refs = sorted(found, key=str)
    if len(refs) > 1:
        api.note(
            f"{len(refs)} recorders found ({', '.join(map(str, refs))}): reading {refs[0]}; "
            "choose one with --recorder NAMESPACE/NAME"
        )
    return refs[0]


def _labelled(api: Any, path: str) -> list[RecorderRef] | None:
    """The recorder Services a list finds; None when the list is forbidden."""
    try:
        answer = api.request(
            "GET",
            path,
            query=[("labelSelector", SELECTOR)],
            what="look for an in-cluster recorder",
            timeout=TIMEOUT,
        )
    except errors.Forbidden:
        _say(api, f"cannot list Services ({path}): forbidden")
        return None
    return [
        RecorderRef(str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        for item in (answer or {}).get("items") or []
        if isinstance(meta := item.get("metadata"), dict)
    ]


def _say(api: Any, text: str) -> None:
    if api.verbosity >= trace.REQUESTS:
        trace.line("recorder_api.py", text)


def kept(
    api: Any, ref: RecorderRef, kind: str, namespace: str | None
) -> list[tuple[dict[str, Any], str, str | None]]:
    """(object, seen at, deleted at) of one kind the recorder kept, as the local store's ``load``.

    Raises ``KubectlSparkError`` when the recorder does not answer (the caller warns).
    """
    query: list[tuple[str, Any]] = [("kind", kind)]
    if namespace:
        query.append(("namespace", namespace))
    answer = api.request(
        "GET",
        ref.path("v1/kept"),
        query=query,
        what=f"read what the recorder {ref} kept",
        timeout=TIMEOUT,
        retry=False,  # a recorder not ready now is a warning, not a wait
    )
    if not isinstance(answer, dict) or answer.get("kind") != "KeptList":
        raise errors.KubectlSparkError(
            f"the recorder {ref} answered something else than a KeptList"
        )
    rows = []
    for item in answer.get("items") or []:
        obj = item.get("object") if isinstance(item, dict) else None
        if isinstance(obj, dict):
            deleted = item.get("deletedAt")
            rows.append((obj, str(item.get("seenAt") or ""), str(deleted) if deleted else None))
    return rows


def log_tail(
    api: Any, ref: RecorderRef, namespace: str, uid: str, *, previous: bool
) -> dict[str, Any] | None:
    """A gone container's last lines the recorder kept (``kube/logtails.kept_tail``'s shape)."""
    query: list[tuple[str, Any]] = [("namespace", namespace), ("uid", uid)]
    if previous:
        query.append(("previous", "true"))
    try:
        answer = api.request(
            "GET",
            ref.path("v1/logs"),
            query=query,
            what=f"read the lines the recorder {ref} kept",
            timeout=TIMEOUT,
            retry=False,
        )
    except errors.NotFound:
        return None
    return answer if isinstance(answer, dict) and isinstance(answer.get("text"), str) else None
