"""An in-cluster recorder, read as the aggregated API it serves through the API server.

``kubectl spark recorder`` deploys one (``core/recorder_manifests.py``) and registers it as
``recorder.kubectl-spark.io/v1alpha1`` (an APIService, as metrics-server registers
``metrics.k8s.io``): the plugin asks kube-apiserver for
``/apis/recorder.kubectl-spark.io/v1alpha1/namespaces/<ns>/keptpods``, with the person's own
credentials, whatever kind they are; the API server authenticates them, checks RBAC for the
resource and passes the user on, and the recorder answers only what that user may read in the
cluster (``kube/delegation.py``). Which recorder: ``--recorder NAMESPACE/NAME`` (or
``$KUBECTL_SPARK_RECORDER``), else the Service labelled as the manifests label it
(``kube/incluster.py``); ``--recorder none`` asks nothing.

What fails here never fails a command: a recorder that cannot be found is not used (``-v=6``
says why), and one that is found but does not answer, or refuses, is a warning.
"""

from __future__ import annotations

from typing import Any

from kubectl_spark import errors
from kubectl_spark.core.recorder_manifests import (
    API_PATH,
    KEPT_RESOURCES,
    LABELS,
    LOGS_RESOURCE,
    PORT_NAME,
)

from . import incluster

AUTO, NONE = incluster.AUTO, incluster.NONE
RecorderRef = incluster.ServiceRef


def find(api: Any, wanted: str, discovery: incluster.Discovery | None = None) -> RecorderRef | None:
    """The recorder to ask (``wanted``: auto, none, NAMESPACE/NAME), or None.

    None: none deployed, none readable, or ``none`` asked.
    """
    if wanted == NONE:
        return None
    if wanted not in (AUTO, ""):
        return incluster.named(wanted, PORT_NAME)
    services = (discovery or incluster.Discovery(api)).find(LABELS, "recorder")
    found = [
        RecorderRef(s["metadata"]["namespace"], s["metadata"]["name"], PORT_NAME) for s in services
    ]
    return incluster.first(api, found, "--recorder", "recorder")


# Pages asked of a recorder in one read: 500,000 rows (the store's cap) at the recorder's
# 4 MiB a page are far fewer; a recorder that never ends its list is cut off here.
MAX_PAGES = 2_000


def kept(
    api: Any, ref: RecorderRef, kind: str, namespace: str | None
) -> list[tuple[dict[str, Any], str, str | None]]:
    """(object, seen at, deleted at) of one kind the recorder kept, as the local store's ``load``.

    Read a page at a time (``limit``/``continue``, as a list from the API server), so that no
    answer is larger than the recorder's page (app/recorder_http.py). Raises
    ``KubectlSparkError`` when the recorder does not answer (the caller warns).
    """
    rows: list[tuple[dict[str, Any], str, str | None]] = []
    token = ""
    for _ in range(MAX_PAGES):
        query: list[tuple[str, Any]] = [("continue", token)] if token else []
        where = f"/namespaces/{namespace}" if namespace else ""
        answer = _ask(
            api, f"{where}/{KEPT_RESOURCES[kind]}", query, f"read what the recorder {ref} kept"
        )
        if not isinstance(answer, dict) or answer.get("kind") != "KeptList":
            raise errors.KubectlSparkError(
                f"the recorder {ref} answered something else than a KeptList"
            )
        for item in answer.get("items") or []:
            obj = item.get("object") if isinstance(item, dict) else None
            if isinstance(obj, dict):
                deleted = item.get("deletedAt")
                rows.append((obj, str(item.get("seenAt") or ""), str(deleted) if deleted else None))
        token = str((answer.get("metadata") or {}).get("continue") or "")
        if not token:
            return rows
    raise errors.KubectlSparkError(
        f"the recorder {ref} kept answering more pages of {kind} than any store holds ({MAX_PAGES})"
    )


def log_tail(
    api: Any, ref: RecorderRef, namespace: str, uid: str, *, previous: bool
) -> dict[str, Any] | None:
    """A gone container's last lines the recorder kept (``kube/logtails.kept_tail``'s shape)."""
    query: list[tuple[str, Any]] = [("previous", "true")] if previous else []
    try:
        answer = _ask(
            api,
            f"/namespaces/{namespace}/{LOGS_RESOURCE}/{uid}",
            query,
            f"read the lines the recorder {ref} kept",
        )
    except errors.NotFound:
        return None
    return answer if isinstance(answer, dict) and isinstance(answer.get("text"), str) else None


def _ask(api: Any, path: str, query: list[tuple[str, Any]], what: str) -> Any:
    """One GET of the recorder's API: a recorder not ready now is a warning, not a wait."""
    return api.request(
        "GET",
        f"{API_PATH}{path}",
        query=query,
        what=what,
        timeout=incluster.PROXIED_TIMEOUT,
        retry=False,
    )
