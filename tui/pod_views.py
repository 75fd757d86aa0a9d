"""What the TUI shows of one pod or application on a screen of its own: logs (the kept lines of a gone pod included), YAML, describe."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import work

from .screens.text import TextScreen

if TYPE_CHECKING:
    from .app import SparkTUI


def _pod(self: SparkTUI) -> tuple[str, str, str, bool] | None:
    """(namespace, pod, container, whether its node answers) of a selected pod that exists."""
    app, attempt, executor = self.selection()
    if app is None or attempt is None:
        return None
    if executor:
        found = next((e for e in attempt.executors if e.id == executor), None)
        if found is None or found.source != "cluster":
            return None  # gone: its log went with it
        return (
            app.namespace,
            found.pod,
            "spark-kubernetes-executor",
            self._answers(found.node),
        )
    return (
        (
            app.namespace,
            attempt.driver_pod,
            "spark-kubernetes-driver",
            self._answers(attempt.node),
        )
        if attempt.driver_pod and attempt.uid
        else None
    )


def _answers(self: SparkTUI, node: str | None) -> bool:
    """Whether the kubelet of ``node`` can serve a log (an unreachable one is asked once)."""
    from kubectl_spark.app.act import node_reachable

    return self.snapshot is None or node_reachable(self.snapshot, node)


def action_logs(self: SparkTUI) -> None:
    gone = self._gone_pod()
    if gone is not None:
        self._kept_logs(*gone, previous=False)
        return
    self._logs(self._pod(), previous=False)


def _gone_pod(self: SparkTUI) -> tuple[str, str, str] | None:
    """(namespace, pod, uid) of a selected executor or driver whose pod is gone."""
    from kubectl_spark.core.sparkview import only_kept

    app, attempt, executor = self.selection()
    if app is None or attempt is None:
        return None
    if executor:
        found = next((e for e in attempt.executors if e.id == executor), None)
        if found is None or found.source == "cluster" or not found.uid:
            return None
        return app.namespace, found.pod, found.uid
    pods = self.snapshot.pods if self.snapshot is not None else ()
    if not attempt.uid or not only_kept(pods, attempt.uid):
        return None
    return app.namespace, attempt.driver_pod or "?", attempt.uid


@work(thread=True, exclusive=True, group="view")
def _kept_logs(self: SparkTUI, namespace: str, pod: str, uid: str, *, previous: bool) -> None:
    """What ``kubectl spark record`` kept of a gone pod's log, as ``logs [-p]`` prints it.

    The store is this TUI's own.
    """
    from kubectl_spark.app.logtext import KEEP_HINT, PREVIOUS_GONE
    from kubectl_spark.kube.logtails import run_said

    kept = self.connected().kept_log(namespace, uid, previous=previous)
    if kept is None:
        self.call_from_thread(
            self.notify,
            f"pod {pod} is gone, and its "
            + (PREVIOUS_GONE if previous else f"log with it{KEEP_HINT}"),
            severity="warning",
        )
        return
    title = (
        f"last lines of {namespace}/{pod}, kept by kubectl spark record: the pod is gone "
        f"({run_said(kept, earlier=previous)})  (esc: back)"
    )
    self.call_from_thread(
        self.push_screen, TextScreen(title, str(kept.get("text") or "") or "(empty)", log=True)
    )


def action_previous_logs(self: SparkTUI) -> None:
    gone = self._gone_pod()
    if gone is not None:
        self._kept_logs(*gone, previous=True)
        return
    self._logs(self._pod(), previous=True)


@work(thread=True, exclusive=True, group="view")
def _logs(self: SparkTUI, pod: tuple[str, str, str, bool] | None, *, previous: bool) -> None:
    """Workers get the selection from the UI thread; they never read widgets."""
    if pod is None:
        self.call_from_thread(self.notify, "select a pod that still exists", severity="warning")
        return
    namespace, name, container, answers = pod
    try:
        with self.connected().connect() as api:
            query = [("container", container)] + ([("previous", "true")] if previous else [])
            response = api.request(
                "GET",
                f"/api/v1/namespaces/{namespace}/pods/{name}/log",
                query=query,
                stream=True,
                what=f"logs of {name}" + ("" if answers else " (its node is unreachable)"),
                retry=answers,
            )
            body = b"".join(response.stream(65536)).decode("utf-8", "replace")
    except Exception as exc:  # noqa: BLE001 - shown to the user
        self.call_from_thread(
            self.notify, getattr(exc, "message", str(exc)), severity="error", timeout=8
        )
        return
    title = f"{'previous ' if previous else ''}logs of {namespace}/{name}  (esc: back)"
    self.call_from_thread(self.push_screen, TextScreen(title, body or "(empty)", log=True))


def action_describe(self: SparkTUI) -> None:
    from kubectl_spark.app.describe import text
    from kubectl_spark.app.events import app_events

    app = self.current_app()
    if app is None or self.snapshot is None:
        return
    now = self.clock()
    self.push_screen(
        TextScreen(
            f"describe {app.namespace}/{app.name}  (esc: back)",
            text(app, now, app_events(self.snapshot, app, now)),
        )
    )


def action_yaml(self: SparkTUI) -> None:
    self._yaml(self._pod())


@work(thread=True, exclusive=True, group="view")
def _yaml(self: SparkTUI, pod: tuple[str, str, str, bool] | None) -> None:
    """The whole pod, read again: the live view keeps only the fields the core reads."""
    import yaml

    if pod is None:
        return
    namespace, name, _, _ = pod
    try:
        with self.connected().connect() as api:
            found = api.request(
                "GET", f"/api/v1/namespaces/{namespace}/pods/{name}", what=f"get pod {name}"
            )
    except Exception as exc:  # noqa: BLE001 - shown to the user
        self.call_from_thread(
            self.notify, getattr(exc, "message", str(exc)), severity="error", timeout=8
        )
        return
    self.call_from_thread(
        self.push_screen,
        TextScreen(
            f"YAML of pod {namespace}/{name}  (esc: back)",
            yaml.safe_dump(found, sort_keys=False),
        ),
    )
