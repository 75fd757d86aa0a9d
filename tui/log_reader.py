"""One container's log, read whole or followed, for the TUI's log view (``l``, ``p``).

The same request as ``kubectl spark logs`` (and ``kubectl logs``): ``follow`` and
``timestamps`` are the API's own query parameters. A followed log is read again from its start
(kubectl's ``-f`` does the same), so nothing written between the first read and the follow is
lost or shown twice. ``stop`` shuts the socket: a follow blocked on a quiet container ends at
once, not at its next line.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubectl_spark.kube.client import Api

CHUNK = 65536


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
        """Every line from the start, then each new one, until ``stop`` or the log ends."""
        self._stopped.clear()
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
