"""What the TUI shows of one pod or application on a screen of its own: logs (the kept lines of a gone pod included), YAML, describe."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kubectl_spark.core.pod import OwnerReference, Pod

from .log_reader import LogReader
from .screens.text import TextScreen

if TYPE_CHECKING:
    from .app import SparkTUI
    from .sources import Source


class PodViews:
    """Opens the views of the selected pod or application on screens of their own.

    Reads go to worker threads (one view at a time: a newer key press replaces it); only the
    notifications and the screens they open touch the UI, from the UI thread.
    """

    def __init__(self, tui: SparkTUI) -> None:
        self.tui = tui

    def _in_worker(self, read: Callable[..., None], *args: Any, **kwargs: Any) -> None:
        self.tui.run_worker(
            functools.partial(read, *args, **kwargs), thread=True, exclusive=True, group="view"
        )

    def selected_pod(self) -> tuple[str, str, str, bool] | None:
        """(namespace, pod, container, whether its node answers) of a selected pod that exists."""
        app, attempt, executor = self.tui.main.selection()
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

    def _answers(self, node: str | None) -> bool:
        """Whether the kubelet of ``node`` can serve a log (an unreachable one is asked once)."""
        from kubectl_spark.app.act import node_reachable

        return self.tui.snapshot is None or node_reachable(self.tui.snapshot, node)

    def logs(self) -> None:
        gone = self._gone_pod()
        if gone is not None:
            self._in_worker(self._kept_logs, *gone, previous=False)
            return
        self._in_worker(
            self._logs,
            self.selected_pod(),
            self.tui.source_of(self.tui.main.current_app()),
            previous=False,
        )

    def _gone_pod(self) -> tuple[str, str, str] | None:
        """(namespace, pod, uid) of a selected executor or driver whose pod is gone."""
        from kubectl_spark.core.sparkview import only_kept

        app, attempt, executor = self.tui.main.selection()
        if app is None or attempt is None:
            return None
        if executor:
            found = next((e for e in attempt.executors if e.id == executor), None)
            if found is None or found.source == "cluster" or not found.uid:
                return None
            return app.namespace, found.pod, found.uid
        pods = self.tui.snapshot.pods if self.tui.snapshot is not None else ()
        if not attempt.uid or not only_kept(pods, attempt.uid):
            return None
        return app.namespace, attempt.driver_pod or "?", attempt.uid

    def _kept_logs(self, namespace: str, pod: str, uid: str, *, previous: bool) -> None:
        """What ``kubectl spark record`` kept of a gone pod's log, as ``logs [-p]`` prints it.

        The store is this TUI's own, else an in-cluster recorder's (``LiveSource.kept_log``).
        """
        from kubectl_spark.app.logtext import KEEP_HINT, PREVIOUS_GONE

        kept = self.tui.connected().kept_log(namespace, uid, previous=previous)
        if kept is None:
            self.tui.call_from_thread(
                self.tui.notify,
                f"pod {pod} is gone, and its "
                + (PREVIOUS_GONE if previous else f"log with it{KEEP_HINT}"),
                severity="warning",
            )
            return
        title = (
            f"last lines of {namespace}/{pod}, kept by {kept.keeper}: the pod is gone "
            f"({kept.run_said(earlier=previous)})  (esc: back)"
        )
        self.tui.call_from_thread(
            self.tui.push_screen, TextScreen(title, kept.text or "(empty)", log=True)
        )

    def previous_logs(self) -> None:
        gone = self._gone_pod()
        if gone is not None:
            self._in_worker(self._kept_logs, *gone, previous=True)
            return
        self._in_worker(
            self._logs,
            self.selected_pod(),
            self.tui.source_of(self.tui.main.current_app()),
            previous=True,
        )

    def _logs(
        self,
        pod: tuple[str, str, str, bool] | None,
        source: Source,
        *,
        previous: bool,
        chosen: bool = False,
    ) -> None:
        """Workers get the selection (and its cluster's source) from the UI thread.

        A pod with several containers (a sidecar, an init container) asks which one first,
        Spark's own at the top; ``chosen``: it was asked.
        """
        if pod is None:
            self.tui.call_from_thread(
                self.tui.notify, "select a pod that still exists", severity="warning"
            )
            return
        namespace, name, container, answers = pod
        if not chosen:
            names = _containers(source, namespace, name, container)
            if len(names) > 1:
                from .screens.picker import PickerScreen

                def picked(choice: str | None) -> None:
                    if choice:
                        again = (namespace, name, choice, answers)
                        self._in_worker(self._logs, again, source, previous=previous, chosen=True)

                screen = PickerScreen("container", lambda: names)
                self.tui.call_from_thread(self.tui.push_screen, screen, picked)
                return
            container = names[0] if names else container
        reader = LogReader(
            source.connect, namespace, name, container, previous=previous, answers=answers
        )
        try:
            body = reader.read()
        except Exception as exc:  # noqa: BLE001 - shown to the user
            self.tui.call_from_thread(
                self.tui.notify, getattr(exc, "message", str(exc)), severity="error", timeout=8
            )
            return
        which = f", container {container}" if chosen else ""
        title = f"{'previous ' if previous else ''}logs of {namespace}/{name}{which}  (esc: back)"
        self.tui.call_from_thread(
            self.tui.push_screen, TextScreen(title, body or "(empty)", log=True, reader=reader)
        )

    def shell(self) -> None:
        """A shell in the focused pod's Spark container (``tui/shell.py``)."""
        app, attempt, executor = self.tui.main.selection()
        found = next((e for e in attempt.executors if e.id == executor), None) if attempt else None
        running = (
            found.state == "Running"
            if found
            else attempt is not None and attempt.state == "Running"
        )
        pod = self.selected_pod()
        if pod is None or not running:
            self.tui.notify(
                "select a pod whose container runs: a shell needs one", severity="warning"
            )
            return
        self._in_worker(self._shell, pod, self.tui.source_of(app))

    def _shell(self, pod: tuple[str, str, str, bool], source: Source) -> None:
        """Ask whether exec is allowed (off the UI thread), then hand the terminal over."""
        from kubectl_spark.app.act import may_exec

        namespace, name, container, _ = pod
        try:
            with source.connect() as api:
                allowed = may_exec(api, namespace)
        except Exception as exc:  # noqa: BLE001 - shown to the user
            self.tui.call_from_thread(
                self.tui.notify, getattr(exc, "message", str(exc)), severity="error"
            )
            return
        if not allowed:
            said = f"no shell: you may not create pods/exec in namespace {namespace}"
            self.tui.call_from_thread(self.tui.notify, said, severity="error", timeout=10)
            return
        from .shell import exec_args

        args = exec_args(getattr(source, "connection", None), namespace, name, container)
        self.tui.call_from_thread(self._run_shell, args)

    def _run_shell(self, args: list[str]) -> None:
        import shutil
        import subprocess

        from textual.app import SuspendNotSupported

        from kubectl_spark.app.text import escape

        from .shell import shown

        kubectl = shutil.which("kubectl")
        if kubectl is None:
            self.tui.notify(
                escape(f"no kubectl on PATH: run {shown(args)}"), severity="error", timeout=15
            )
            return
        try:
            with self.tui.suspend():
                code = subprocess.call([kubectl, *args])  # noqa: S603 - our own argument list
        except SuspendNotSupported:
            self.tui.notify(
                f"this terminal cannot be handed over: run {shown(args)}",
                severity="warning",
                timeout=15,
            )
            return
        if code:
            self.tui.notify(f"the shell ended with exit code {code}", severity="warning")

    def describe(self) -> None:
        from kubectl_spark.app.describe import text
        from kubectl_spark.app.events import app_events

        app = self.tui.main.current_app()
        if app is None or self.tui.snapshot is None:
            return
        pod = self.selected_pod() if self.tui.main.attempt_tree.has_focus else None
        if pod is not None:  # the key acts on what is focused: the pod of the tree's line
            from .screens.pod import PodScreen

            self.tui.push_screen(
                PodScreen(
                    self.tui.source_of(app).connect,
                    pod[0],
                    pod[1],
                    crumbs=f"{self.tui.main.crumbs()} ▸ pod {pod[1]}",
                    now=self.tui.clock,
                    logs=self.logs,
                )
            )
            return
        now = self.tui.clock()
        self.tui.push_screen(
            TextScreen(
                f"describe {app.namespace}/{app.name}  (esc: back)",
                text(app, now, app_events(self.tui.snapshot, app, now)),
            )
        )

    def yaml(self) -> None:
        self._yaml(self.selected_pod())

    def _yaml(self, pod: tuple[str, str, str, bool] | None) -> None:
        """The whole pod, read again: the live view keeps only the fields the core reads."""
        if pod is None:
            return
        namespace, name, _, _ = pod
        self._in_worker(
            self._fetch_yaml,
            f"/api/v1/namespaces/{namespace}/pods/{name}",
            f"pod {namespace}/{name}",
            self.tui.source_of(self.tui.main.current_app()),
        )

    def owner_yaml(self, namespace: str, uid: str | None) -> None:
        pods = self.tui.snapshot.pods if self.tui.snapshot is not None else ()
        pod = next((p for p in pods if uid and p.metadata.uid == uid), None)
        refs = pod.metadata.owner_references if pod is not None else ()
        ref = (pod.controller() if pod is not None else None) or (refs[0] if refs else None)
        if ref is None:
            self.tui.notify(
                "this driver has no owner: spark-submit created its pod"
                if pod is not None
                else "this attempt has no pod left to read its owner from",
                severity="warning",
            )
            return
        self._in_worker(
            self._fetch_yaml,
            owner_path(namespace, ref),
            f"{ref.kind} {namespace}/{ref.name}",
            self.tui.source_of(self.tui.main.current_app()),
        )

    def _fetch_yaml(self, path: str, what: str, source: Source) -> None:
        import yaml

        try:
            with source.connect() as api:
                found = api.request("GET", path, what=f"get {what}")
        except Exception as exc:  # noqa: BLE001 - shown to the user
            self.tui.call_from_thread(
                self.tui.notify, getattr(exc, "message", str(exc)), severity="error", timeout=8
            )
            return
        self.tui.call_from_thread(
            self.tui.push_screen,
            TextScreen(f"YAML of {what}  (esc: back)", yaml.safe_dump(found, sort_keys=False)),
        )

    def spark_ui(self) -> None:
        """The selected attempt's Spark UI on a local port (``kube/uiforward.py``).

        Opened in a browser when one is at hand, its address shown either way.
        """
        app, attempt, _ = self.tui.main.selection()
        if app is None or attempt is None or not attempt.driver_pod or attempt.state != "Running":
            self.tui.notify("select an attempt whose driver is running", severity="warning")
            return
        key = (app.namespace, attempt.driver_pod)
        forward = self.tui.ui_forwards.get(key)
        if forward is not None:
            self.ui_opened(forward.url)
            return
        self._in_worker(
            self._start_ui_forward, app.namespace, attempt.driver_pod, self.tui.source_of(app)
        )

    def _start_ui_forward(self, namespace: str, pod: str, source: Source) -> None:
        from kubectl_spark.app.driver_ui import forward_ui

        found = next(
            (
                p
                for p in (self.tui.snapshot.pods if self.tui.snapshot else ())
                if _named(p, namespace, pod)
            ),
            None,
        )
        try:
            forward = forward_ui(source.connect, namespace, pod, found)
        except Exception as exc:  # noqa: BLE001 - shown to the user
            self.tui.call_from_thread(
                self.tui.notify, getattr(exc, "message", str(exc)), severity="error", timeout=8
            )
            return
        url = forward.start()
        self.tui.ui_forwards[(namespace, pod)] = forward
        self.tui.call_from_thread(self.ui_opened, url)

    def ui_opened(self, url: str) -> None:
        self.tui.open_url(url)  # Textual's: a browser when there is one (or the web terminal's)
        self.tui.notify(f"Spark UI: {url}", timeout=15)


def _containers(source: Source, namespace: str, pod: str, spark: str) -> list[str]:
    """The pod's containers, Spark's own first, then the others and the init containers.

    A pod template may rename Spark's container: with one container, that one is the log.
    Unreadable, Spark's default name alone (the log request then says what is wrong).
    """
    try:
        with source.connect() as api:
            found = api.request("GET", f"/api/v1/namespaces/{namespace}/pods/{pod}", what="get pod")
    except Exception:  # noqa: BLE001 - the log request says it
        return [spark]
    spec = found.get("spec") or {}
    names = [
        str(c.get("name"))
        for key in ("containers", "initContainers")
        for c in spec.get(key) or []
        if c.get("name")
    ]
    return sorted(names, key=lambda n: n != spark) or [spark]


def owner_path(namespace: str, ref: OwnerReference) -> str:
    """Where an owner reference's object is read.

    The plural is the kind's, as Kubernetes' own kinds and both Spark operators' name them
    (lower case, an ``s``).
    """
    api_version = ref.api_version or "v1"
    base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    return f"{base}/namespaces/{namespace}/{ref.kind.lower()}s/{ref.name}"


def _named(pod: Pod, namespace: str, name: str) -> bool:
    return pod.metadata.namespace == namespace and pod.metadata.name == name
