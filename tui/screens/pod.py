"""The raw view of one pod: ``kubectl describe pod`` with its Events and its node's describe.

Reached by drilling down (enter on a pod's line in the tree, or ``d`` there); its title is the
breadcrumb back to the application. The pod, its Events and its node are read again when it
opens, in a worker of its own: the live view keeps only the fields the core reads.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from textual import work
from textual.binding import Binding

from kubectl_spark.app.rawdescribe import describe_node, describe_pod

from .text import TextScreen


class PodScreen(TextScreen):
    """From here, ``l`` goes on down to the pod's log (escape then comes back to the tree)."""

    BINDINGS = [Binding("l", "logs", "Logs")]

    def __init__(
        self,
        connect: Callable[[], Any],
        namespace: str,
        pod: str,
        *,
        crumbs: str,
        now: Callable[[], datetime],
        logs: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(f"{crumbs} ▸ describe pod  (esc: back)", f"reading pod {namespace}/{pod}…")
        self.connect, self.namespace, self.pod, self.now = connect, namespace, pod, now
        self.logs = logs

    def action_logs(self) -> None:
        if self.logs is not None:
            self.app.pop_screen()
            self.app.call_after_refresh(self.logs)  # the tree has its focus back by then

    def on_mount(self) -> None:
        super().on_mount()
        self._read()

    @work(thread=True, exclusive=True, group="describe")
    def _read(self) -> None:
        namespace, name = self.namespace, self.pod
        try:
            with self.connect() as api:
                pod = api.request(
                    "GET", f"/api/v1/namespaces/{namespace}/pods/{name}", what=f"get pod {name}"
                )
                uid = (pod.get("metadata") or {}).get("uid", "")
                events, _ = api.list(
                    f"/api/v1/namespaces/{namespace}/events",
                    field_selector=f"involvedObject.uid={uid}",
                    what=f"list the Events of pod {name}",
                )
                node_name = (pod.get("spec") or {}).get("nodeName")
                node_text = ""
                if node_name:
                    try:
                        node = api.request("GET", f"/api/v1/nodes/{node_name}", what="get node")
                        node_text = describe_node(node, self.now())
                    except Exception as exc:  # noqa: BLE001 - the pod is shown all the same
                        node_text = f"(node {node_name}: {getattr(exc, 'message', exc)})\n"
        except Exception as exc:  # noqa: BLE001 - shown to the user
            self.app.call_from_thread(self._failed, exc)
            return
        text = describe_pod(pod, events, self.now())
        if node_text:
            text += f"\nNode {node_name}:\n" + "".join(
                f"  {line}\n" for line in node_text.splitlines()
            )
        self.app.call_from_thread(self._refilled, text)
