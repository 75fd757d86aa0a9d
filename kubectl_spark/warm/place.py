"""Where the warm server listens, and what it must have been started from to answer.

Read by the client at every command, so it imports only built-in modules and stats a few
hundred files (about a millisecond): the identity covers every file of the package (an edit, an
upgrade), the interpreter, the site-packages directories (a dependency installed or removed)
and the variables read once at start (``IMPORT_TIME_ENV``). The socket's name carries a
checksum of it; the server compares the whole text at every request.
"""

from __future__ import annotations

import _socket
import os
import sys
import zlib

from kubectl_spark.warm import IMPORT_TIME_ENV

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _newest(top: str) -> tuple[int, float]:
    """How many files the package has, and the newest modification among them."""
    count, newest = 0, 0.0
    stack = [top]
    while stack:
        try:
            entries = os.scandir(stack.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        stack.append(entry.path)
                elif entry.name.endswith(".py"):
                    count += 1
                    newest = max(newest, entry.stat().st_mtime)
    return count, newest


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def identity() -> str:
    """The text a server must have been started with to answer this process's commands."""
    frozen = bool(getattr(sys, "frozen", False))
    parts = [sys.executable, str(_mtime(sys.executable)), PACKAGE, f"frozen={frozen}"]
    if not frozen:
        count, newest = _newest(PACKAGE)
        parts.append(f"{count}:{newest!r}")
        parts += [f"{p}={_mtime(p)}" for p in sys.path if p.endswith("-packages")]
    parts += [f"{k}={os.environ.get(k)}" for k in IMPORT_TIME_ENV]
    parts += sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith("PYTHON"))
    return "\n".join(parts)


def directory() -> str:
    """A directory only this user can enter: the runtime directory, else the user's cache."""
    base = (
        os.environ.get("XDG_RUNTIME_DIR")
        or os.environ.get("XDG_CACHE_HOME")
        or os.path.join(os.path.expanduser("~"), ".cache")
    )
    return os.path.join(base, "kubectl-spark-warm")


def socket_path(ident: str) -> str:
    return os.path.join(directory(), f"w-{zlib.crc32(ident.encode()):08x}.sock")


def private(path: str) -> bool:
    """The directory is this user's and nobody else's: a socket elsewhere is not trusted."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return st.st_uid == os.getuid() and (st.st_mode & 0o077) == 0


UNIX_PATH_MAX = 100  # sun_path holds 108 bytes on Linux, 104 on macOS


def reach(sock: _socket.socket, path: str, *, bind: bool = False) -> None:
    """Connect (or bind) ``sock`` to ``path``, also when it is longer than a socket address.

    A deep home or runtime directory: then by its name, from its directory.
    """
    act = sock.bind if bind else sock.connect
    if len(os.fsencode(path)) < UNIX_PATH_MAX:
        act(path)
        return
    here = os.open(".", os.O_RDONLY)
    try:
        os.chdir(os.path.dirname(path))
        act(os.path.basename(path))
    finally:
        os.fchdir(here)
        os.close(here)
