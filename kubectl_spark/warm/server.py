"""The warm server: imports the reading commands once, then forks one child per command.

Each request is served by two forks. The first (the *monitor*) reads the request, checks what
the server could not do as a cold start would (another install, a working directory it cannot
enter) and refuses those, forks the *worker* and waits for it, then sends the client its exit
status: a worker that crashes or is killed still gets its client an answer (128 + the signal,
as a shell says it), and a client that goes away (SIGKILL) takes its worker with it. The
worker takes the client's stdin, stdout and stderr, environment, working directory, umask,
argv and ignored signals, rebuilds ``sys.std*`` as a cold start would have built them, sends
its pid (the client forwards Ctrl-C, SIGTERM and Ctrl-Z to it), and runs the command line the
CLI handed to :func:`serve` (``cli.main.run``).
Nothing of a command runs in the server itself, so no command's state outlives it; what does
is what imports leave, which is why the variables read at import are part of the server's
identity (``place``).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import io
import marshal
import os
import select
import signal
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

from kubectl_spark.memory import end_without_freeing
from kubectl_spark.warm import IDLE_SECONDS, TITLE, place
from kubectl_spark.warm.client import (
    BAD_REQUEST,
    BUSY,
    CWD_UNREACHABLE,
    EXIT,
    HAND_OVER_SECONDS,
    OTHER_INSTALL,
    PID,
    PROTOCOL,
    REFUSED,
)

# A worker's command line: the arguments, and the pid of the client process it answers for
# (said in -v traces). The CLI injects its own (``cli.main.run``) when it starts the server.
Command = Callable[[list[str], int | None], int]

# What the reading commands import on their way (``ls``'s import set, and the few modules
# ``describe``, ``history``, ``events``, ``logs`` and ``doctor`` add). None of them reads the
# environment when imported but the variables in IMPORT_TIME_ENV.
PRELOAD = (
    "kubectl_spark.cli.globals",
    "kubectl_spark.cli.app",
    "kubectl_spark.cli.common",
    "kubectl_spark.cli.colour",
    "kubectl_spark.cli.commands.ls",
    "kubectl_spark.cli.commands.describe",
    "kubectl_spark.cli.commands.history",
    "kubectl_spark.cli.commands.events",
    "kubectl_spark.cli.commands.logs",
    "kubectl_spark.cli.commands.doctor",
    "kubectl_spark.kube.client",
    "kubectl_spark.kube.historyserver",
    "kubectl_spark.kube.recorder_api",
    "kubectl_spark.localstore",
    "kubernetes.config.kube_config",
    "kubernetes.client.api_client",
    "kubernetes.client.rest",
    "typer._click.decorators",
)
MAX_REQUEST = 4 << 20
# Requests served at once: each holds a monitor and a worker. Beyond it the client runs the
# command itself, so a flood of idle connections costs processes up to here, no further.
MAX_CONNECTIONS = 16


def serve(command: Command) -> int:
    """Listen until idle; 0 when another server already answers at the same place.

    ``command`` is the command line each worker runs: injected by the CLI that starts the
    server, so that this module imports nothing of the CLI (no import circle).
    """
    ident = place.identity()
    name = place.socket_name(ident)
    try:
        folder = place.open_folder(place.directory())
    except place.Untrusted:
        return 1
    for module in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(module)
    _set_title()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if _answers(folder, name):
        return 0
    with contextlib.suppress(FileNotFoundError):
        os.unlink(name, dir_fd=folder)
    # Before the socket exists: a SIGTERM (warm stop) as soon as it answers must still end
    # in the ``finally`` below that removes it, not in the default action that leaves it.
    signal.signal(signal.SIGTERM, _stop)
    previous = os.umask(0o077)
    try:
        place.within(folder, name, listener.bind)
    finally:
        os.umask(previous)
    inode = os.stat(name, dir_fd=folder, follow_symlinks=False).st_ino
    try:
        listener.listen(64)
        _write_pid(folder, name)
    except BaseException:
        _remove(folder, name, inode)
        raise
    me = os.getpid()
    gc.collect()
    gc.freeze()  # the children share these pages: the collector must not touch them
    listener.settimeout(IDLE_SECONDS)
    monitors: set[int] = set()
    try:
        while True:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                return 0
            _reap(monitors)
            if not _same_user(conn):
                conn.close()
                continue
            if len(monitors) >= MAX_CONNECTIONS:
                with contextlib.suppress(OSError):
                    conn.sendall(_message(REFUSED, BUSY))
                conn.close()
                continue
            child = os.fork()
            if child == 0:
                listener.close()
                _monitor(conn, ident, command)  # never returns
            monitors.add(child)
            conn.close()
    finally:
        if os.getpid() == me:
            _remove(folder, name, inode)


def _set_title() -> None:
    """``ps`` shows the server as what it is (and ``warm status`` finds it by that name)."""
    try:
        import setproctitle
    except ImportError:
        return
    setproctitle.setproctitle(f"{TITLE} ({place.PACKAGE})")


def _reap(monitors: set[int]) -> None:
    for pid in list(monitors):
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG)[0] == 0:
                continue
        monitors.discard(pid)


def _stop(_sig: int, _frame: object) -> None:
    raise SystemExit(0)


def _answers(folder: int, name: str) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        place.within(folder, name, probe.connect)
    except OSError:
        return False
    finally:
        probe.close()
    return True


def _write_pid(folder: int, name: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(
            f"{name}.pid",
            os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW,
            0o600,
            dir_fd=folder,
        )
        with os.fdopen(fd, "w") as out:
            out.write(f"{os.getpid()}\n")


def _remove(folder: int, name: str, inode: int) -> None:
    """Remove the socket only while it is still ours (a newer server may have taken it)."""
    with contextlib.suppress(OSError):
        if os.stat(name, dir_fd=folder, follow_symlinks=False).st_ino == inode:
            os.unlink(name, dir_fd=folder)
            os.unlink(f"{name}.pid", dir_fd=folder)


def _same_user(conn: socket.socket) -> bool:
    creds = place.peer(conn)
    return creds is None or creds[1] == os.getuid()  # None: not Linux, the folder is private


def _message(kind: int, value: int) -> bytes:
    return kind.to_bytes(4, "big") + value.to_bytes(4, "big", signed=True)


def _receive(conn: socket.socket) -> tuple[tuple[Any, ...], list[int]]:
    conn.settimeout(HAND_OVER_SECONDS)  # an idle connection holds a monitor this long, no more
    data, fds, _flags, _addr = socket.recv_fds(conn, 65536, 3)
    while len(data) < 4:
        more = conn.recv(65536)
        if not more:
            raise ConnectionError("short request")
        data += more
    size = int.from_bytes(data[:4], "big")
    if size > MAX_REQUEST:
        raise ConnectionError("request too large")
    body = data[4:]
    while len(body) < size:
        more = conn.recv(65536)
        if not more:
            raise ConnectionError("short request")
        body += more
    conn.settimeout(None)
    # marshal: from this user's own client (peer credentials, a private directory); it builds
    # only str, int, list, dict and tuple (no code objects: the server checks the shape).
    return marshal.loads(body), list(fds)  # noqa: S302


def _refusal(body: tuple[Any, ...], fds: list[int], ident: str) -> int | None:
    """Why the server will not run this request as a cold start would, if it will not."""
    if len(fds) != 3 or len(body) != 9 or body[0] != PROTOCOL:
        return BAD_REQUEST
    if body[1] != ident:
        return OTHER_INSTALL
    try:
        os.chdir(body[4])  # this monitor's own directory: the worker inherits it
    except (OSError, TypeError, ValueError):
        return CWD_UNREACHABLE
    return None


def _monitor(conn: socket.socket, ident: str, command: Command) -> None:
    """Run one request in a worker and send the client its exit status; then exit."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        body, fds = _receive(conn)
        refused = _refusal(body, fds, ident)
        if refused is not None:
            conn.sendall(_message(REFUSED, refused))  # the client runs it itself
            os._exit(0)
        worker = os.fork()
        if worker == 0:
            _work(conn, body, fds, command)  # never returns
        for fd in fds:
            os.close(fd)
        code = _wait(worker, conn)
        if code is not None:
            conn.sendall(_message(EXIT, 128 - code if code < 0 else code))
    except BaseException:  # noqa: BLE001 - a monitor never returns into the server's loop
        os._exit(1)
    os._exit(0)


def _wait(worker: int, conn: socket.socket) -> int | None:
    """The worker's exit code; None when the client went away first (the worker is killed).

    The client sends nothing after its request: the connection turning readable means it is
    gone (SIGKILL, say), and a cold command would have died with it.
    """
    watch = select.poll()
    watch.register(conn.fileno(), select.POLLIN | select.POLLHUP)
    pidfd = None
    with contextlib.suppress(AttributeError, OSError):
        pidfd = os.pidfd_open(worker)
        watch.register(pidfd, select.POLLIN)
    try:
        while True:
            ready = {fd for fd, _events in watch.poll(None if pidfd is not None else 50)}
            done, status = os.waitpid(worker, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
            if conn.fileno() in ready:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(worker, signal.SIGKILL)
                os.waitpid(worker, 0)
                return None
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _work(conn: socket.socket, body: tuple[Any, ...], fds: list[int], command: Command) -> None:
    code = 1
    try:
        _proto, _ident, argv, env, _cwd, umask, streams, client, ignored = body
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.umask(umask)
        os.environ.clear()
        os.environ.update(env)
        time.tzset()
        sys.argv = list(argv)
        _signals_as_a_cold_start(set(ignored))
        _rebuild_stdio(streams, bool(env.get("PYTHONUNBUFFERED")))
        try:
            conn.sendall(_message(PID, os.getpid()))
        except OSError:
            os._exit(1)  # the client gave up waiting and runs the command itself: not twice
        conn.close()
        code = command(list(argv[1:]), client)
    except BaseException:  # noqa: BLE001 - the worker's end is os._exit, whatever happened
        code = 1
    finally:
        end_without_freeing(code)


def _signals_as_a_cold_start(ignored: set[int]) -> None:
    """The client's signal dispositions, as Python would have set them at a cold start.

    A server started from a background job inherits SIGINT ignored; its workers must not: the
    client's Ctrl-C is forwarded to them. What the client itself ignores stays ignored.
    """
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        if number in ignored:
            signal.signal(number, signal.SIG_IGN)
        elif number == signal.SIGINT:
            signal.signal(number, signal.default_int_handler)
        else:
            signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGTSTP, signal.SIG_DFL)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)


def _rebuild_stdio(streams: Any, unbuffered: bool) -> None:
    """``sys.std*`` as Python builds them at start, on the client's file descriptors."""
    (in_enc, in_err), (out_enc, out_err), (err_enc, err_err) = streams
    # sys.__std*__ too: shutil.get_terminal_size and click read the terminal through them.
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(  # type: ignore[misc]
        io.BufferedReader(io.FileIO(0, "r", closefd=False)), in_enc, in_err
    )
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(  # type: ignore[misc]
        io.BufferedWriter(io.FileIO(1, "w", closefd=False)),
        out_enc,
        out_err,
        line_buffering=os.isatty(1),
        write_through=unbuffered,
    )
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(  # type: ignore[misc]
        io.BufferedWriter(io.FileIO(2, "w", closefd=False)),
        err_enc,
        err_err,
        line_buffering=True,
        write_through=unbuffered,
    )
