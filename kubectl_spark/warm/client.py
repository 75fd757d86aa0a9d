"""The client side of the warm process: hand a reading command to the server, or say why not.

Imported at every start before anything else, so it uses built-in modules only (``_socket``
and ``_signal``, not ``socket`` and ``signal``, which import ``enum`` and ``selectors``: ten
milliseconds of a budget of a hundred). ``forward`` returns the command's exit code, or
None when the command is to run here: warm off, not a reading command, no server yet (one is
started after this command, ``start_if_wanted``), a server that is not trusted (``place``,
``_peer``), an environment a server would not run the same (``_differs``), or a server that
refused before running it (``REFUSALS``). At ``-v=6`` the reason is printed.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]
import _socket
import marshal
import os
import sys

from kubectl_spark.command_table import LIVE_FLAGS, NAMES, WARM_COMMANDS
from kubectl_spark.errors import UsageError
from kubectl_spark.warm import (
    EAGER,
    ENV,
    LOADER_ENV_PREFIX,
    NAMESPACES,
    REPRODUCED_PYTHON_ENV,
    SERVE,
    SETTINGS,
    place,
)

PROTOCOL = 2
# What the server sends, each an 8-byte message: a kind and a signed value. A worker that died
# before it ran anything sends no PID, only its EXIT: the client runs the command itself.
PID, EXIT, REFUSED = 1, 2, 3
# A REFUSED message's value: why the server will not run the command (the client runs it).
OTHER_INSTALL, CWD_UNREACHABLE, BUSY, BAD_REQUEST = 1, 2, 3, 4
REFUSALS = {
    OTHER_INSTALL: "the warm process runs another install or environment",
    CWD_UNREACHABLE: "the warm process cannot enter this working directory",
    BUSY: "the warm process is busy (its connection cap)",
    BAD_REQUEST: "the warm process could not read the request",
}
FORWARDED_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")
# A fork and a few system calls: a server that has not answered by then is stopped or stuck,
# and the command runs here.
HAND_OVER_SECONDS = 5.0
VERBOSE = 6  # kube.trace.REQUESTS: the level at which -v says why a command ran here


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
        if arg in NAMES and arg not in WARM_COMMANDS:
            return False  # an action, say, whatever else the line holds
        if arg.split("=", 1)[0] in LIVE_FLAGS:
            return False
        if arg.startswith("-") and not arg.startswith("--") and ("w" in arg or "f" in arg):
            return False
    return True


def setting() -> str:
    """``on`` or ``off``; unset is on. Anything else is a usage error, never silently on."""
    value = os.environ.get(ENV, "").strip().lower() or "on"
    if value not in SETTINGS:
        raise UsageError(
            f"{ENV} must be on or off, not {os.environ.get(ENV, '')[:40]!r}",
            hint=f"unset it for the default (on), or {ENV}=off to run every command cold",
        )
    return value


def enabled() -> bool:
    return (
        setting() == "on"
        and not os.environ.get(EAGER)
        and hasattr(os, "fork")
        and hasattr(_socket, "AF_UNIX")
        and hasattr(_socket, "SCM_RIGHTS")
    )


def forward(args: list[str]) -> int | None:
    if args[:1] == ["__complete"] or SERVE in args:
        return None  # never an error: the shell asks, or the server starts
    on = enabled()  # a bad value is refused whatever the command
    if not eligible(args) or not on or not _stdio_open():
        return None
    why = _differs()
    if why:
        _say(args, why)
        return None
    ident = place.identity()
    try:
        folder = place.open_folder(place.directory())
    except place.Untrusted as exc:
        _Pending.wanted = True  # a missing folder is made; an untrusted one is left alone
        _say(args, f"no warm process used: {exc}")
        return None
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        name = place.socket_name(ident)
        try:
            place.within(folder, name, sock.connect)
        except OSError:
            _Pending.wanted = True
            _say(args, "no warm process for this install yet: one starts after this command")
            return None
        why = _peer(sock, folder, name)
        if why:
            _say(args, f"the warm process is not trusted: {why}")
            return None
        return _hand_over(sock, ident, args)
    finally:
        sock.close()
        os.close(folder)


def _differs() -> str | None:
    """Why this command would not run in the server as it runs here, if it would not."""
    for key, value in _own_environment().items():
        if value and key.startswith(LOADER_ENV_PREFIX):
            return f"{key} is set (the dynamic loader reads it when a process starts)"
        if value and key.startswith("PYTHON") and key not in REPRODUCED_PYTHON_ENV:
            return f"{key} is set (Python reads it when it starts)"
    return None


def _own_environment() -> dict[str, str]:
    """The environment as the person set it.

    A PyInstaller binary (the krew archive) runs under a bootloader that sets
    ``LD_LIBRARY_PATH`` to its own folder and keeps the person's value, if any, in
    ``LD_LIBRARY_PATH_ORIG``: that one is theirs.
    """
    env = dict(os.environ)
    if getattr(sys, "frozen", False):
        env.pop("LD_LIBRARY_PATH", None)
        original = env.pop("LD_LIBRARY_PATH_ORIG", None)
        if original:
            env["LD_LIBRARY_PATH"] = original
    return env


def _peer(sock: _socket.socket, folder: int, name: str) -> str | None:
    """Why the process at the other end is not this user's server, if it is not.

    Its credentials as the kernel gives them (``SO_PEERCRED``): this uid, and the pid the
    server wrote beside its socket. Then its namespaces: the same network, mounts, pids and
    users as this process, or the command would be answered from another world.
    """
    creds = place.peer(sock)
    if creds is None:
        return None  # not Linux: the folder's checks stand alone (place.open_folder)
    pid, uid = creds
    if uid != os.getuid():
        return f"it runs as uid {uid}, not {os.getuid()}"
    expected = place.read_pid(folder, name)
    if pid <= 0 or pid != expected:
        return f"it is process {pid}, not the server that wrote its pid ({expected})"
    for kind in NAMESPACES:
        try:
            mine = os.readlink(f"/proc/self/ns/{kind}")
        except OSError:
            continue  # no such namespace here (or no /proc): nothing to differ
        try:
            theirs = os.readlink(f"/proc/{pid}/ns/{kind}")
        except OSError:
            return f"its {kind} namespace cannot be read"
        if mine != theirs:
            return f"it runs in another {kind} namespace ({theirs}, this command {mine})"
    return None


def _say(args: list[str], why: str) -> None:
    """At ``-v=6``: why this command runs here, as a klog-style line (kube/trace.py's shape)."""
    if _verbosity(args) < VERBOSE:
        return
    import time

    now = time.time()
    stamp = time.strftime("%m%d %H:%M:%S", time.localtime(now))
    micros = int((now % 1) * 1_000_000)
    sys.stderr.write(f"I{stamp}.{micros:06d} {os.getpid():>7} warm] runs here: {why}\n")
    sys.stderr.flush()


def _verbosity(args: list[str]) -> int:
    """``-v=6``, ``--v=6``, ``-v6``, ``-v 6``: the level asked for, 0 when unreadable."""
    level = "0"
    for index, arg in enumerate(args):
        if arg == "--":
            break
        if arg in ("-v", "--v"):
            level = args[index + 1] if index + 1 < len(args) else "0"
        elif arg.startswith(("-v=", "--v=")):
            level = arg.split("=", 1)[1]
        elif arg.startswith("-v") and arg[2:].isdigit():
            level = arg[2:]
    return int(level) if level.isdigit() else 0


def _stdio_open() -> bool:
    try:
        for fd in (0, 1, 2):
            os.fstat(fd)
    except OSError:
        return False
    return True


def _ignored_signals() -> list[int]:
    """The signals this process ignores, as it inherited them (a background job's SIGINT)."""
    numbers = [getattr(_signal, n, None) for n in FORWARDED_SIGNALS]
    return [n for n in numbers if n is not None and _signal.getsignal(n) == _signal.SIG_IGN]


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
        _ignored_signals(),
    )
    data = marshal.dumps(body)
    return len(data).to_bytes(4, "big") + data


def _hand_over(sock: _socket.socket, ident: str, args: list[str]) -> int | None:
    fds = b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in (0, 1, 2))
    try:
        data = request(ident)  # a working directory removed under the shell: run here
        sock.settimeout(HAND_OVER_SECONDS)
        sent = sock.sendmsg([data], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
        sock.sendall(data[sent:])
        kind, pid = _read_message(sock)
        sock.settimeout(None)  # the command itself takes what it takes
    except OSError:  # a timeout too: a stopped or stuck server; its worker will not run (server)
        _say(args, "the warm process did not take the command in time")
        return None
    if kind != PID:
        # refused before running anything, or a worker that ended before it started
        _say(
            args,
            REFUSALS.get(pid, "the warm worker ended before it ran")
            if kind == REFUSED
            else "the warm worker ended before it ran",
        )
        return None
    previous = {}
    for name in FORWARDED_SIGNALS:
        number = getattr(_signal, name, None)
        if number is not None and _signal.getsignal(number) != _signal.SIG_IGN:
            previous[number] = _signal.signal(number, lambda sig, _f: _send(pid, sig))
    stop = getattr(_signal, "SIGTSTP", None)
    if stop is not None and _signal.getsignal(stop) == _signal.SIG_DFL:
        previous[stop] = _signal.signal(stop, lambda _sig, _f: _suspend(pid, stop))
    try:
        kind, code = _read_message(sock)
    except OSError:
        kind = 0
    finally:
        for number, handler in previous.items():
            _signal.signal(number, handler)
    if kind != EXIT:
        sys.stderr.write("error: the warm kubectl spark process ended without an exit code\n")
        return 1
    return code


def _suspend(pid: int, stop: int) -> None:
    """Ctrl-Z: stop the worker, then this process; on ``fg``, continue the worker.

    SIGSTOP, not SIGTSTP: the worker's process group has no terminal of its own (an orphaned
    group), where the kernel drops the terminal's stop signals.
    """
    _send(pid, _signal.SIGSTOP)
    handler = _signal.signal(stop, _signal.SIG_DFL)
    try:
        os.kill(os.getpid(), stop)  # stopped here until SIGCONT
    finally:
        _signal.signal(stop, handler)
        _send(pid, _signal.SIGCONT)


def _send(pid: int, sig: int) -> None:
    try:  # noqa: SIM105 - contextlib is 5 ms of this module's start
        os.kill(pid, sig)
    except OSError:
        pass


def _read_message(sock: _socket.socket) -> tuple[int, int]:
    data = b""
    while len(data) < 8:
        chunk = sock.recv(8 - len(data))
        if not chunk:
            return 0, 0
        data += chunk
    return int.from_bytes(data[:4], "big"), int.from_bytes(data[4:], "big", signed=True)


def start_if_wanted() -> None:
    """Start a server for the next command, when this one found none; never an error."""
    if not _Pending.wanted:
        return
    try:
        os.close(place.open_folder(place.directory(), create=True))
    except (place.Untrusted, OSError):
        return  # a folder on an unsafe path: no server
    try:
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
