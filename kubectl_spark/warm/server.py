"""The warm server: imports the reading commands once, then forks one child per command.

Each request is served by two forks. The first (the *monitor*) reads the request, forks the
*worker* and waits for it, then sends the client its exit status: a worker that crashes or is
killed still gets its client an answer (128 + the signal, as a shell says it). The worker
takes the client's stdin, stdout and stderr, environment, working directory, umask and argv,
rebuilds ``sys.std*`` as a cold start would have built them, sends its pid (the client
forwards Ctrl-C and SIGTERM to it), and runs ``cli.main.main``. Nothing of a command runs in
the server itself, so no command's state outlives it; what does is what imports leave, which
is why the variables read at import are part of the server's identity (``place``).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import io
import marshal
import os
import signal
import socket
import struct
import sys
import time
from pathlib import Path
from typing import Any

from kubectl_spark.memory import end_without_freeing
from kubectl_spark.warm import IDLE_SECONDS, place
from kubectl_spark.warm.client import PROTOCOL

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
    "kubectl_spark.history.store",
    "kubernetes.config.kube_config",
    "kubernetes.client.api_client",
    "kubernetes.client.rest",
    "typer._click.decorators",
)
MAX_REQUEST = 4 << 20


def serve() -> int:
    """Listen until idle; 0 when another server already answers at the same place."""
    ident = place.identity()
    path = place.socket_path(ident)
    if not place.private(place.directory()):
        return 1
    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if _answers(path):
        return 0
    Path(path).unlink(missing_ok=True)
    previous = os.umask(0o077)
    try:
        place.reach(listener, path, bind=True)
    finally:
        os.umask(previous)
    listener.listen(64)
    inode = Path(path).stat().st_ino
    _write_pid(path)
    me = os.getpid()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # monitors are reaped by the kernel
    signal.signal(signal.SIGTERM, _stop)
    gc.collect()
    gc.freeze()  # the children share these pages: the collector must not touch them
    listener.settimeout(IDLE_SECONDS)
    try:
        while True:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                return 0
            if not _same_user(conn):
                conn.close()
                continue
            if os.fork() == 0:
                listener.close()
                _monitor(conn, ident)  # never returns
            conn.close()
    finally:
        if os.getpid() == me:
            _remove(path, inode)


def _stop(_sig: int, _frame: object) -> None:
    raise SystemExit(0)


def _answers(path: str) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        place.reach(probe, path)
    except OSError:
        return False
    finally:
        probe.close()
    return True


def _write_pid(path: str) -> None:
    with contextlib.suppress(OSError):
        Path(f"{path}.pid").write_text(f"{os.getpid()}\n")


def _remove(path: str, inode: int) -> None:
    """Remove the socket only while it is still ours (a newer server may have taken it)."""
    with contextlib.suppress(OSError):
        if Path(path).stat().st_ino == inode:
            Path(path).unlink()
            Path(f"{path}.pid").unlink()


def _same_user(conn: socket.socket) -> bool:
    peercred = getattr(socket, "SO_PEERCRED", None)
    if peercred is None:
        return True  # not Linux: the directory is private to this user (place.private)
    _pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, peercred, 12))
    return bool(uid == os.getuid())


def _receive(conn: socket.socket) -> tuple[tuple[Any, ...], list[int]]:
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
    # marshal: from this user's own client (peer credentials, a private directory); it builds
    # only str, int, list, dict and tuple (no code objects: the server checks the shape).
    return marshal.loads(body), list(fds)  # noqa: S302


def _monitor(conn: socket.socket, ident: str) -> None:
    """Run one request in a worker and send the client its exit status; then exit."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # this process waits for its worker
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        body, fds = _receive(conn)
        if len(fds) != 3 or len(body) != 8 or body[0] != PROTOCOL or body[1] != ident:
            conn.sendall((0).to_bytes(4, "big", signed=True))  # the client runs it itself
            os._exit(0)
        worker = os.fork()
        if worker == 0:
            _work(conn, body, fds)  # never returns
        for fd in fds:
            os.close(fd)
        _pid, status = os.waitpid(worker, 0)
        code = os.waitstatus_to_exitcode(status)
        conn.sendall((128 - code if code < 0 else code).to_bytes(4, "big", signed=True))
    except BaseException:  # noqa: BLE001 - a monitor never returns into the server's loop
        os._exit(1)
    os._exit(0)


def _work(conn: socket.socket, body: tuple[Any, ...], fds: list[int]) -> None:
    code = 1
    try:
        _proto, _ident, argv, env, cwd, umask, streams, client = body
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(cwd)
        os.umask(umask)
        os.environ.clear()
        os.environ.update(env)
        time.tzset()
        sys.argv = list(argv)
        _rebuild_stdio(streams, bool(env.get("PYTHONUNBUFFERED")))
        try:
            conn.sendall(os.getpid().to_bytes(4, "big", signed=True))
        except OSError:
            os._exit(1)  # the client gave up waiting and runs the command itself: not twice
        conn.close()
        import kubectl_spark.warm
        from kubectl_spark.cli.main import main

        kubectl_spark.warm.served_for = client
        code = main(list(argv[1:]))
    except BaseException:  # noqa: BLE001 - the worker's end is os._exit, whatever happened
        code = 1
    finally:
        end_without_freeing(code)


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
