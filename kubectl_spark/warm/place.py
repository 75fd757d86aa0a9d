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
import stat
import sys
import zlib

from kubectl_spark.warm import IMPORT_TIME_ENV

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _newest(top: str) -> tuple[int, float]:
    """How many files the package has, and the newest change among them.

    The change time too, not only the modification time: an edit that keeps the old mtime
    (``cp -p``, ``rsync -t``, ``touch -r``) still sets the ctime, which no user can set back.
    """
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
                    st = entry.stat()
                    newest = max(newest, st.st_mtime, st.st_ctime)
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
    """A directory only this user can enter: the runtime directory, else the user's cache.

    A relative ``XDG_*`` value is ignored, as the XDG Base Directory specification says: it
    would put a folder in every working directory.
    """
    base = next(
        (
            value
            for value in (os.environ.get("XDG_RUNTIME_DIR"), os.environ.get("XDG_CACHE_HOME"))
            if value and os.path.isabs(value)
        ),
        os.path.join(os.path.expanduser("~"), ".cache"),
    )
    return os.path.join(base, "kubectl-spark-warm")


def socket_name(ident: str) -> str:
    return f"w-{zlib.crc32(ident.encode()):08x}.sock"


class Untrusted(Exception):
    """Why the folder is not used: the command runs cold, and ``-v=6`` prints this."""


_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)


def open_folder(path: str, *, create: bool = False) -> int:
    """The folder, opened once, after checking every directory on its way from ``/``.

    Each parent must be owned by root or this user and writable by nobody else (or sticky, as
    /tmp is), as OpenSSH's StrictModes asks of a key's path: else another user could swap a
    folder between a check and a connect. The folder itself must be this user's alone. Each
    step is opened relative to the one before, never followed through a symbolic link, and the
    caller then works relative to the returned descriptor: what was checked is what is used.
    """
    me = os.getuid()
    # The parents resolved (a symlinked home), the folder itself never: a link there is refused.
    parent, name = os.path.split(path)
    parent = os.path.realpath(parent)
    fd = os.open("/", _DIRECTORY)
    try:
        _check_parent(os.fstat(fd), "/", me)
        where = "/"
        for part in [p for p in parent.split("/") if p]:
            where = os.path.join(where, part)
            try:
                if create:  # a fresh home has no ~/.cache yet: made as private as the folder
                    try:  # noqa: SIM105 - contextlib is 4 ms of a warm command's start
                        os.mkdir(part, 0o700, dir_fd=fd)
                    except FileExistsError:
                        pass
                step = os.open(part, _DIRECTORY, dir_fd=fd)
            except OSError as exc:
                raise Untrusted(f"cannot open {where}: {exc.strerror}") from exc
            os.close(fd)
            fd = step
            _check_parent(os.fstat(fd), where, me)
        if create:
            try:
                os.mkdir(name, 0o700, dir_fd=fd)
            except FileExistsError:
                pass
            except OSError as exc:
                raise Untrusted(f"cannot create {path}: {exc.strerror}") from exc
        try:
            folder = os.open(name, _DIRECTORY, dir_fd=fd)
        except OSError as exc:
            raise Untrusted(f"no folder {path} ({exc.strerror})") from exc
    finally:
        os.close(fd)
    st = os.fstat(folder)
    if st.st_uid != me or st.st_mode & 0o077:
        os.close(folder)
        raise Untrusted(
            f"{path} is not this user's alone (uid {st.st_uid}, mode {st.st_mode & 0o777:o})"
        )
    return folder


def _check_parent(st: os.stat_result, where: str, me: int) -> None:
    if st.st_uid not in (0, me):
        raise Untrusted(f"{where} is owned by another user (uid {st.st_uid})")
    if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
        raise Untrusted(f"{where} is writable by other users (mode {st.st_mode & 0o777:o})")


def peer(sock: _socket.socket) -> tuple[int, int] | None:
    """The (pid, uid) of the process at the other end of a Unix socket.

    As the kernel gives them (``SO_PEERCRED``: at connect, or at ``listen`` for a server);
    None where there is no such option (not Linux: the folder's checks stand alone).
    """
    option = getattr(_socket, "SO_PEERCRED", None)
    if option is None:
        return None
    creds = sock.getsockopt(_socket.SOL_SOCKET, option, 12)
    pid = int.from_bytes(creds[0:4], sys.byteorder, signed=True)
    return pid, int.from_bytes(creds[4:8], sys.byteorder, signed=False)


def in_folder(folder: int, name: str) -> str:
    """A path to ``name`` inside the open ``folder`` that no rename or symlink can redirect.

    Linux: through ``/proc/self/fd``, a link to the very directory opened (short enough for a
    socket address however deep the folder is). Elsewhere the caller's ``within`` changes the
    working directory to the descriptor around the call.
    """
    return f"/proc/self/fd/{folder}/{name}"


def through_proc() -> bool:
    return os.path.isdir("/proc/self/fd")


def within(folder: int, name: str, act: object) -> None:
    """Call ``act`` on the name of a file of ``folder``, the folder being where that name is.

    ``act`` is a socket's bind or connect: neither has a form relative to a descriptor.
    """
    if through_proc():
        act(in_folder(folder, name))  # type: ignore[operator]
        return
    here = os.open(".", os.O_RDONLY)
    try:
        os.fchdir(folder)
        act(name)  # type: ignore[operator]
    finally:
        os.fchdir(here)
        os.close(here)


def read_pid(folder: int, name: str) -> int | None:
    """The pid a server wrote beside its socket (``name.pid``), read through the open folder."""
    try:
        fd = os.open(f"{name}.pid", os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0), dir_fd=folder)
    except OSError:
        return None
    try:
        text = os.read(fd, 32)
    finally:
        os.close(fd)
    try:
        return int(text)
    except ValueError:
        return None


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
