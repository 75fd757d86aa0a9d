"""Services in the cluster the plugin reads through the API server's service proxy.

Two of them: an in-cluster recorder (``kubectl spark recorder``) and a Spark History Server. A
person names one (``--recorder NAMESPACE/NAME``, ``--history-server NAMESPACE/NAME``) or lets the
plugin find it by its labels: the recorder's manifests' (``core/recorder_manifests.py``), and
``app.kubernetes.io/name=spark-history-server``, the name History Server charts give by default.
One list finds both (``in (…)``), in every namespace, else (that list forbidden) in the current
one; a command asks it at most once (``Discovery``). Reaching a Service this way needs only the
person's own credentials (RBAC ``get`` on ``services/proxy``) and no port-forward.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubectl_spark import errors
from kubectl_spark.core.recorder_manifests import LABELS as RECORDER_LABELS

from . import trace

HISTORY_SERVER_LABELS = {"app.kubernetes.io/name": "spark-history-server"}
NAME_LABEL = "app.kubernetes.io/name"
SELECTOR = f"{NAME_LABEL} in ({RECORDER_LABELS[NAME_LABEL]},{HISTORY_SERVER_LABELS[NAME_LABEL]})"
TIMEOUT = 10.0  # the Services list: the API server's own answer
# A Service's answer through the proxy: a recorder or History Server that does not answer (a
# NetworkPolicy, a pod on a lost node) must not hold every command for long.
PROXIED_TIMEOUT = 5.0
AUTO, NONE = "auto", "none"


@dataclass(frozen=True)
class ServiceRef:
    namespace: str
    name: str
    port: str  # the Service port's name, or its number

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"

    def path(self, rest: str) -> str:
        """The service proxy's path to ``rest`` (no leading slash) on this Service's port."""
        return f"/api/v1/namespaces/{self.namespace}/services/{self.name}:{self.port}/proxy/{rest}"


def named(text: str, port: str) -> ServiceRef:
    """A ``NAMESPACE/NAME`` the flags checked (``cli.globals``), on ``port``."""
    namespace, _, name = text.partition("/")
    return ServiceRef(namespace, name, port)


class Discovery:
    """The labelled Services, listed once for everything a command asks."""

    def __init__(self, api: Any) -> None:
        self.api = api
        self._items: list[dict[str, Any]] | None = None

    def find(self, labels: dict[str, str], what: str) -> list[dict[str, Any]]:
        """The Services carrying ``labels``, sorted by namespace and name."""
        if self._items is None:
            self._items = self._list("/api/v1/services")
            if self._items is None and self.api.namespace:
                self._items = self._list(f"/api/v1/namespaces/{self.api.namespace}/services")
            self._items = self._items or []
        found = [
            s
            for s in self._items
            if all(
                ((s.get("metadata") or {}).get("labels") or {}).get(k) == v
                for k, v in labels.items()
            )
        ]
        if not found:
            say(self.api, f"no {what} Service found (labels {_selector(labels)})")
        return sorted(found, key=lambda s: (s["metadata"]["namespace"], s["metadata"]["name"]))

    def _list(self, path: str) -> list[dict[str, Any]] | None:
        """The Services a list finds; None when the list is forbidden."""
        try:
            answer = self.api.request(
                "GET",
                path,
                query=[("labelSelector", SELECTOR)],
                what="look for an in-cluster recorder or Spark History Server",
                timeout=TIMEOUT,
            )
        except errors.Forbidden:
            say(self.api, f"cannot list Services ({path}): forbidden")
            return None
        return [
            item
            for item in (answer or {}).get("items") or []
            if isinstance(item, dict)
            and isinstance(item.get("metadata"), dict)
            and item["metadata"].get("name")
            and item["metadata"].get("namespace")
        ]


def _selector(labels: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in labels.items())


def first(api: Any, found: list[ServiceRef], flag: str, what: str) -> ServiceRef | None:
    """The first of those found, saying so when there were several to choose from."""
    if len(found) > 1:
        api.note(
            f"{len(found)} {what}s found ({', '.join(map(str, found))}): reading {found[0]}; "
            f"choose one with {flag} NAMESPACE/NAME"
        )
    return found[0] if found else None


def say(api: Any, text: str) -> None:
    if api.verbosity >= trace.REQUESTS:
        trace.line("incluster.py", text)
