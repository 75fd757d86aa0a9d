"""The client side of the warm process: hand a reading command to the server, or say why not.

Imported at every start before anything else, so it uses built-in modules only (``_socket``
and ``_signal``, not ``socket`` and ``signal``, which import ``enum`` and ``selectors``: ten
milliseconds of a budget of a hundred). ``forward`` returns the command's exit code, or
None when the command is to run here: warm off, not a reading command, no server yet (one is
started after this command, ``start_if_wanted``), or a server that refused before running it.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]
import _socket
import marshal
import os
import sys

from kubectl_spark.warm import (
    EAGER,
    ENV,
    LIVE_FLAGS,
    OTHER_COMMANDS,
    SERVE,
    WARM_COMMANDS,
    place,
)

PROTOCOL = 1
OFF = frozenset({"off", "0", "false", "no"})
FORWARDED_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")
# A fork and a few system calls: a server that has not answered by then is stopped or stuck,
# and the command runs here.
HAND_OVER_SECONDS = 5.0


class _Pending:
    """Whether this command found no server: one is started after it (``start_if_wanted``)."""

    wanted = False


def eligible(args: list[str]) -> bool:
    """A one-shot reading command: nothing live, nothing that changes the cluster.

    Conservative on purpose: a short-flag cluster holding ``w`` or ``f`` (``-Aw``), or a
    value that happens to look like one, runs here: slower, never different.
    """
    command = next((a for a in args if a in WARM_COMMANDS), None)
    if command is None or SERVE in args or args[:1] == ["__complete"]:
        return False  # completion answers in 40 ms without the library: never a server
    for arg in args:
        if arg == "--":
            break
        if arg in OTHER_COMMANDS:
            return False  # an action, say, whatever else the line holds
        if arg.split("=", 1)[0] in LIVE_FLAGS:
            return False
        if arg.startswith("-") and not arg.startswith("--") and ("w" in arg or "f" in arg):
            return False
    return True


def enabled() -> bool:
    return (
        os.environ.get(ENV, "").strip().lower() not in OFF
        and not os.environ.get(EAGER)
        and hasattr(os, "fork")
        and hasattr(_socket, "AF_UNIX")
        and hasattr(_socket, "SCM_RIGHTS")
    )


def forward(args: list[str]) -> int | None:
    if not eligible(args) or not enabled() or not _stdio_open():
        return None
    ident = place.identity()
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        if not place.private(place.directory()):
            _Pending.wanted = True
            return None
        try:
            place.reach(sock, place.socket_path(ident))
        except OSError:
            _Pending.wanted = True
            return None
        return _hand_over(sock, ident)
    finally:
        sock.close()


def _stdio_open() -> bool:
    try:
        for fd in (0, 1, 2):
            os.fstat(fd)
    except OSError:
        return False
    return True


def request(ident: str) -> bytes:
    def stream(f: object) -> tuple[str, str]:
        return (getattr(f, "encoding", None) or "utf-8", getattr(f, "errors", None) or "strict")

    umask = os.umask(0o077)
    os.umask(umask)
    body = (
        PROTOCOL,
        ident,
        list(sys.argv),
        dict(os.environ),
        os.getcwd(),
        umask,
        (stream(sys.stdin), stream(sys.stdout), stream(sys.stderr)),
        os.getpid(),
    )
    data = marshal.dumps(body)
    return len(data).to_bytes(4, "big") + data


def _hand_over(sock: _socket.socket, ident: str) -> int | None:
    fds = b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in (0, 1, 2))
    try:
        data = request(ident)  # a working directory removed under the shell: run here
        sock.settimeout(HAND_OVER_SECONDS)
        sent = sock.sendmsg([data], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
        sock.sendall(data[sent:])
        pid = _read_int(sock)
        sock.settimeout(None)  # the command itself takes what it takes
    except OSError:  # a timeout too: a stopped or stuck server; its worker will not run (server)
        return None
    if not pid:
        return None  # refused before running anything: run here
    previous = {}
    for name in FORWARDED_SIGNALS:
        number = getattr(_signal, name, None)
        if number is not None:
            previous[number] = _signal.signal(number, lambda sig, _f: _send(pid, sig))
    try:
        code = _read_int(sock)
    except OSError:
        code = None
    finally:
        for number, handler in previous.items():
            _signal.signal(number, handler)
    if code is None:
        sys.stderr.write("error: the warm kubectl spark process ended without an exit code\n")
        return 1
    return code


def _send(pid: int, sig: int) -> None:
    try:  # noqa: SIM105 - contextlib is 5 ms of this module's start
        os.kill(pid, sig)
    except OSError:
        pass


def _read_int(sock: _socket.socket) -> int | None:
    data = b""
    while len(data) < 4:
        chunk = sock.recv(4 - len(data))
        if not chunk:
            return None
        data += chunk
    return int.from_bytes(data, "big", signed=True)


def start_if_wanted() -> None:
    """Start a server for the next command, when this one found none; never an error."""
    if not _Pending.wanted:
        return
    try:
        os.makedirs(place.directory(), mode=0o700, exist_ok=True)
        if not place.private(place.directory()):
            return
        import subprocess

        if getattr(sys, "frozen", False):
            command = [sys.executable, SERVE]
        else:
            # -P: the server's working directory ("/") is not put on its path; the package's
            # parent is, where this process found it (a checkout run with -m, say).
            parent = os.path.dirname(place.PACKAGE)
            code = (
                f"import sys; sys.path.insert(0, {parent!r}); "
                "from kubectl_spark.cli.main import main; "
                f"sys.exit(main([{SERVE!r}]))"
            )
            command = [sys.executable, "-P", "-c", code]
        subprocess.Popen(  # noqa: S603 - this interpreter, this package
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            cwd="/",
        )
    except OSError:
        pass
