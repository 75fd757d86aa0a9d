"""``kubectl spark warm status|stop``: see and end this user's warm servers.

Why: a server is a background process people did not start by hand; they must be able to see
it and end it (after an upgrade, before a benchmark, when in doubt) without hunting pids. A
server is only ever signalled after the same checks a client makes before it trusts one
(``place.open_folder``, the peer's credentials): a pid file alone could name any process.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
from dataclasses import dataclass

from kubectl_spark.warm import place

STOP_SECONDS = 5.0


@dataclass(frozen=True)
class Server:
    """One socket in the folder.

    With the process answering there, if any, and whether it serves this install (the
    identity this command computes).
    """

    socket: str
    pid: int | None  # the peer's pid, as the kernel gives it; None when nothing answers
    current: bool
    started: float | None  # when it wrote its pid file (epoch seconds)

    def to_json(self) -> dict[str, object]:
        return {
            "socket": self.socket,
            "pid": self.pid,
            "answering": self.pid is not None,
            "currentInstall": self.current,
            "startedAt": None
            if self.started is None
            else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
        }


def servers() -> list[Server]:
    """Every server socket in this user's folder; none when the folder is missing or unsafe."""
    try:
        folder = place.open_folder(place.directory())
    except place.Untrusted:
        return []
    try:
        current = place.socket_name(place.identity())
        found = []
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".sock"):
                continue
            try:
                started: float | None = os.stat(f"{name}.pid", dir_fd=folder).st_mtime
            except OSError:
                started = None
            found.append(
                Server(
                    socket=os.path.join(place.directory(), name),
                    pid=_answering_pid(folder, name),
                    current=name == current,
                    started=started,
                )
            )
        return found
    finally:
        os.close(folder)


def _answering_pid(folder: int, name: str) -> int | None:
    """The pid of the process listening on ``name``, when it is this user's and wrote it."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        place.within(folder, name, probe.connect)
        creds = place.peer(probe)
    except OSError:
        return None
    finally:
        probe.close()
    expected = place.read_pid(folder, name)
    if creds is None:
        return expected
    pid, uid = creds
    return pid if uid == os.getuid() and pid == expected else None


def stop() -> list[Server]:
    """End every answering server (SIGTERM, SIGKILL after a grace period); remove dead sockets."""
    found = servers()
    for server in found:
        if server.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(server.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_SECONDS
    for server in found:
        while server.pid is not None and running(server.pid) and time.monotonic() < deadline:
            time.sleep(0.02)
    for server in found:
        # As the kubelet ends a container after its grace period: a server stuck past it
        # (a hung import, a debugger) is killed, so "stopped" is true when this returns.
        if server.pid is not None and running(server.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(server.pid, signal.SIGKILL)
            while running(server.pid) and time.monotonic() < deadline + STOP_SECONDS:
                time.sleep(0.02)
        # What nobody answers any more goes: a server killed, or one that ended before it
        # could remove its socket (a socket a newer server answers on stays).
        if server.pid is None or not _answers(server.socket):
            for path in (server.socket, f"{server.socket}.pid"):
                with contextlib.suppress(OSError):
                    os.unlink(path)
    return found


def _answers(path: str) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        place.reach(probe, path)  # a path longer than a socket address too: not taken for dead
    except OSError:
        return False
    finally:
        probe.close()
    return True


def running(pid: int) -> bool:
    """Running, not ended.

    A zombie (an ended server whose new parent, perhaps a container's init, has not reaped it
    yet) has ended; so has one reaped between the two reads below (its /proc entry gone).
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except FileNotFoundError:
        return False
    except (OSError, IndexError):
        return True
