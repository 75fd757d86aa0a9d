"""One container's log, read whole or followed, for the TUI's log view (``l``, ``p``).

The same request as ``kubectl spark logs`` (and ``kubectl logs``): ``follow`` and
``timestamps`` are the API's own query parameters. A followed log is read again from its start
(kubectl's ``-f`` does the same), so nothing written between the first read and the follow is
lost or shown twice. ``stop`` shuts the socket: a follow blocked on a quiet container ends at
once, not at its next line.

A container that restarts in place (a Deployment's executor, a crash loop) ends the API's
stream with its run; the view follows its next run, as k9s does, with a line that says so.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubectl_spark.app.session import Api

CHUNK = 65536
# How long a followed container that stopped is waited for to run again, and how often its pod
# is read meanwhile: a crash loop's back-off reaches 5 minutes (the kubelet's MaxContainerBackOff);
# past a minute the view says the run ended and stops following.
RESTART_WAIT = 60.0
RESTART_POLL = 0.5


@dataclass
class LogReader:
    connect: Callable[[], Api]
    namespace: str
    pod: str
    container: str
    previous: bool = False
    answers: bool = True  # whether the pod's node answers (an unreachable one is asked once)
    _response: Any = field(default=None, init=False)
    _stopped: threading.Event = field(default_factory=threading.Event, init=False)

    @property
    def followable(self) -> bool:
        return not self.previous  # a previous container's log does not grow

    def _open(self, api: Api, *, timestamps: bool, follow: bool) -> Any:
        query: list[tuple[str, Any]] = [("container", self.container)]
        if self.previous:
            query.append(("previous", "true"))
        if timestamps:
            query.append(("timestamps", "true"))
        if follow:
            query.append(("follow", "true"))
        return api.request(
            "GET",
            f"/api/v1/namespaces/{self.namespace}/pods/{self.pod}/log",
            query=query,
            stream=True,
            what=f"logs of {self.pod}" + ("" if self.answers else " (its node is unreachable)"),
            retry=self.answers,
        )

    def read(self, *, timestamps: bool = False) -> str:
        with self.connect() as api:
            response = self._open(api, timestamps=timestamps, follow=False)
            return b"".join(response.stream(CHUNK)).decode("utf-8", "replace")

    def follow(self, on_line: Callable[[str], None], *, timestamps: bool = False) -> None:
        """Every line from the start, then each new one, until ``stop``; across restarts."""
        self._stopped.clear()
        restarts = self._restarts()
        while True:
            self._follow_run(on_line, timestamps=timestamps)
            if self._stopped.is_set() or restarts is None:
                return
            again = self._restarted(restarts)
            if again is None:
                if not self._stopped.is_set():
                    on_line(f"── {self.container} stopped: its run ended ──")
                return
            restarts = again
            on_line(f"── {self.container} restarted (restart {again}): its next run ──")

    def _status(self, api: Api) -> dict[str, Any] | None:
        """The container's status in its pod now; None: no next run can come.

        That is a pod or container gone, or a pod that failed or succeeded (it runs nothing
        again).
        """
        pod = api.request(
            "GET", f"/api/v1/namespaces/{self.namespace}/pods/{self.pod}", what="get pod"
        )
        status = pod.get("status") or {}
        if status.get("phase") in ("Failed", "Succeeded"):
            return None
        statuses = status.get("containerStatuses") or []
        return next((c for c in statuses if c.get("name") == self.container), None)

    def _restarts(self) -> int | None:
        """How often the container restarted so far; None: no next run to follow."""
        try:
            with self.connect() as api:
                status = self._status(api)
        except Exception:  # noqa: BLE001 - no restart to follow then, the log is read all the same
            return None
        return int(status.get("restartCount") or 0) if status is not None else None

    def _restarted(self, before: int) -> int | None:
        """The restart count once the container runs again after ``before``; None: it did not."""
        deadline = time.monotonic() + RESTART_WAIT
        try:
            with self.connect() as api:  # one connection for the whole wait
                while not self._stopped.wait(RESTART_POLL):
                    status = self._status(api)
                    if status is None:
                        return None
                    count = int(status.get("restartCount") or 0)
                    if count > before and (status.get("state") or {}).get("running") is not None:
                        return count
                    if time.monotonic() > deadline:
                        return None
        except Exception:  # noqa: BLE001 - the pod is gone or unreadable: the run ended
            return None
        return None

    def _follow_run(self, on_line: Callable[[str], None], *, timestamps: bool) -> None:
        """One run's log: from its start, until it ends or ``stop``."""
        pending = b""
        with self.connect() as api:
            response = self._response = self._open(api, timestamps=timestamps, follow=True)
            try:
                for chunk in response.stream(CHUNK):
                    if self._stopped.is_set():
                        return
                    *lines, pending = (pending + chunk).split(b"\n")
                    for line in lines:
                        on_line(line.decode("utf-8", "replace"))
            except Exception:
                if self._stopped.is_set():
                    return  # our own shutdown
                raise
            finally:
                self._response = None
        if pending and not self._stopped.is_set():
            on_line(pending.decode("utf-8", "replace"))

    def stop(self) -> None:
        self._stopped.set()
        response = self._response
        if response is not None:
            with contextlib.suppress(Exception):  # already closed: nothing left to stop
                response.shutdown()
