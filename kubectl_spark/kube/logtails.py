"""The last lines of a Spark container that stopped, kept before its pod (and its log) is gone.

Spark deletes a lost executor's pod within about a second of its end, and its log with it:
the lines that say why a JVM died (an ``OutOfMemoryError``, the exception that made it exit)
are the evidence no pod status carries. ``kubectl spark record`` sees the stop in its watch,
asks the kubelet (through the API) for the container's last lines at once, and keeps them in the
history store under the kind ``logs``; ``kubectl spark logs`` shows them once the pod is gone.

A container is kept once per run (pod uid, container, restart count): a terminated Spark
container with a non-zero exit (its current log), or one that restarted in place after such an
exit (its previous log). A pod already gone, or a log the kubelet no longer has, is skipped.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

from kubectl_spark import errors
from kubectl_spark.core import raw
from kubectl_spark.core.pod import Pod, Terminated
from kubectl_spark.core.reasons import spark_container
from kubectl_spark.localstore import LocalStore, Scope

KIND = "logs"
TAIL_LINES = 100
LIMIT_BYTES = 64 * 1024
TIMEOUT = 5.0
PER_BATCH = 20


def _wanted(pod: Pod) -> tuple[str, int, bool, Terminated] | None:
    """(container, restart count, previous?, its termination) if its last lines are evidence."""
    container = spark_container(pod)
    name = container.name
    if not name:
        return None
    restarts = container.restart_count or 0
    current = container.terminated()
    if current is not None:
        return (name, restarts, False, current) if current.exit_code else None
    last = container.last_terminated()
    if last is not None and last.exit_code:
        return name, restarts, True, last
    return None


def _key(uid: str, container: str, restarts: int, previous: bool) -> str:
    """The store's key of one run's lines: the pod uid first (``kept_tail`` looks it up so)."""
    return "/".join((uid, container, str(restarts), str(previous)))


class LogKeeper:
    """Asks for, and keeps, the last lines of each Spark container that stopped with an error."""

    def __init__(self, api: Any, store: LocalStore, scope: Scope) -> None:
        self.api = api
        self.store = store
        self.scope = scope
        self.kept = 0
        self.forbidden = False  # the API refused the logs (RBAC): said once, then not asked again
        self._asked: set[tuple[str, str, int, bool]] = set()
        self._waiting: deque[tuple[Pod, tuple[str, int, bool, Terminated]]] = deque()

    @property
    def pending(self) -> int:
        """Stopped containers still waiting for their lines to be asked for."""
        return len(self._waiting)

    def keep(self, pods: Iterable[tuple[Pod, bool]], *, listed: bool = False) -> None:
        """``pods``: (pod, gone?) as the recorder writes them; a gone pod's log cannot be read.

        ``listed``: the pods of a full list, whose stops are old news; they wait behind the
        stops a watch just told, and at most ``PER_BATCH`` logs are asked for per call, so that
        a cluster full of failed pods does not hold up the recording.
        """
        if self.forbidden:
            return
        for pod, gone in pods:
            wanted = None if gone else _wanted(pod)
            uid = pod.metadata.uid
            if wanted is None or not uid:
                continue
            key = (uid, wanted[0], wanted[1], wanted[2])
            if key in self._asked:
                continue
            self._asked.add(key)
            if self.store.has(self.scope, KIND, pod.metadata.namespace, _key(*key)):
                continue  # kept by an earlier run (of record, or of a TUI)
            if listed:
                self._waiting.append((pod, wanted))
            else:
                self._waiting.appendleft((pod, wanted))
        found = []
        for _ in range(min(PER_BATCH, len(self._waiting))):
            pod, (container, restarts, previous, ended) = self._waiting.popleft()
            uid = pod.metadata.uid
            text = self._tail(pod, container, previous)
            if text is None:
                continue
            found.append(
                (
                    {
                        "metadata": {
                            "uid": _key(uid, container, restarts, previous),
                            "namespace": pod.metadata.namespace,
                            "resourceVersion": pod.metadata.resource_version,
                        },
                        "pod": {"name": pod.metadata.name, "uid": uid},
                        "container": container,
                        "restartCount": restarts,
                        "previous": previous,
                        "exitCode": ended.exit_code,
                        "finishedAt": ended.finished_at or None,
                        "tailLines": TAIL_LINES,
                        "text": text,
                    },
                    False,
                )
            )
        if found:
            self.kept += self.store.record(self.scope, KIND, found)

    def _tail(self, pod: Pod, container: str, previous: bool) -> str | None:
        query: list[tuple[str, object]] = [
            ("container", container),
            ("tailLines", TAIL_LINES),
            ("limitBytes", LIMIT_BYTES),
        ]
        if previous:
            query.append(("previous", "true"))
        name = pod.metadata.name
        path = f"/api/v1/namespaces/{pod.metadata.namespace}/pods/{name}/log"
        try:
            response = self.api.request(
                "GET",
                path,
                query=query,
                stream=True,
                what=f"keep the last lines of {name}",
                timeout=TIMEOUT,
                retry=False,
            )
        except errors.Forbidden:
            self.forbidden = True  # RBAC: no get on pods/log; asking again will not help
            self._waiting.clear()
            return None
        except errors.KubectlSparkError:
            return None  # gone already, or its node unreachable: nothing to keep, nothing to fail
        try:
            return b"".join(response.stream(65536)).decode("utf-8", "replace")
        finally:
            response.release_conn()


def _run(kept: dict[str, Any]) -> tuple[int, int]:
    """Which run of its container kept lines are of, for ordering.

    A container's current log at restart count r is its run r + 1; its previous log at r, the
    run r. The same run can be kept both ways (stopped, then restarted): the later copy wins.
    """
    restarts = raw.number(kept, "restartCount") or 0
    return (restarts if kept.get("previous") is True else restarts + 1, restarts)


def kept_tail(
    store: LocalStore, scope: Scope, namespace: str, uid: str, *, previous: bool = False
) -> dict[str, Any] | None:
    """The last kept lines of the pod ``uid`` (its latest run), or None.

    With ``previous``, those of the run before the latest, as ``logs -p`` asks of a live one.
    """
    kept = [
        doc
        for doc in store.load_under(scope, KIND, namespace, uid)
        if raw.text(doc, "pod", "uid") == uid and isinstance(doc.get("text"), str)
    ]
    latest = max(kept, key=_run, default=None)
    if latest is None or not previous:
        return latest
    return max((d for d in kept if _run(d)[0] < _run(latest)[0]), key=_run, default=None)
