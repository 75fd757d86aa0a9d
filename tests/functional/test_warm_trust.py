"""The warm process trusts only its own server, and runs cold what it would run differently.

Issue 49, point 4: the client hands its environment and terminal to the process at the end of
a socket, so it must be this user's server (the folder's path, the peer's credentials), and
a command a server would not run as a cold start would (a preloaded library, another
namespace, a working directory the server cannot enter) runs here, ``-v=6`` saying why. Some
cases need root (a second uid, namespaces): the suite runs as root in CI; elsewhere they skip.
"""

from __future__ import annotations

import contextlib
import json
import marshal
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubectl_spark.warm import client, place, server
from tests.warm_server import BIN, Warm, alive, hanging, read_message, warm_server

NOBODY = 65534
ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="a second uid and namespaces need root")
COLD = "runs here: "
WARM = "served by the warm process"


@pytest.fixture
def warm_on(tmp_path: Path, kubeconfig: Path) -> Iterator[Warm]:
    yield from warm_server(tmp_path, kubeconfig)


def _empty_items(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["items"] == []


def python_for(user: int | None) -> str:
    """An interpreter ``user`` may run (this one may sit in root's home); stdlib only."""
    if user is None:
        return sys.executable
    for candidate in (sys.executable, "/usr/bin/python3", "/usr/local/bin/python3"):
        try:
            subprocess.run([candidate, "-c", "pass"], user=user, check=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            continue
        return candidate
    pytest.skip(f"no Python that uid {user} may run")


class Fake:
    """A listener at ``folder/name`` that reports whatever a client sends it.

    Bound here (the folder is this user's), listening in a child that may run as another
    uid: the kernel gives a listener's peers the credentials of the process that called
    ``listen``. What it got comes back on its stdout (a pipe: no file it may not write).
    """

    def __init__(self, folder: Path, name: str, *, user: int | None) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        place.reach(sock, str(folder / name), bind=True)
        self.proc = subprocess.Popen(
            [python_for(user), "-c", FAKE, str(sock.fileno())],
            pass_fds=[sock.fileno()],
            stdout=subprocess.PIPE,
            user=user,
        )
        sock.close()
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline() == b"listening\n"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def got(self) -> str:
        """Stop it; what it was sent (nothing, or the test failed)."""
        self.proc.kill()
        out, _ = self.proc.communicate(timeout=10)
        return out.decode()


FAKE = textwrap.dedent(
    """
    import socket, sys
    s = socket.socket(fileno=int(sys.argv[1]))
    s.listen(8)
    print("listening", flush=True)
    while True:
        conn, _ = s.accept()
        conn.settimeout(2)
        try:
            data = conn.recv(65536)
        except OSError:
            data = b""
        if data:
            print("GOT", len(data), flush=True)
        conn.close()
    """
)


@needs_root
def test_a_listener_of_another_uid_is_never_handed_a_command(warm_on: Warm) -> None:
    folder = warm_on.servers
    folder.mkdir(mode=0o700)
    name = place.socket_name(_identity(warm_on))
    fake = Fake(folder, name, user=NOBODY)
    try:
        (folder / f"{name}.pid").write_text(f"{fake.pid}\n")  # even its pid is the right one
        done = warm_on.spark("ls", "-A", "-o", "json", "-v=6")
        _empty_items(done)
        assert f"{COLD}the warm process is not trusted: it runs as uid {NOBODY}" in done.stderr
        assert WARM not in done.stderr
    finally:
        got = fake.got()
    assert got == ""


def test_a_listener_that_did_not_write_the_pid_is_not_trusted(warm_on: Warm) -> None:
    folder = warm_on.servers
    folder.mkdir(mode=0o700)
    name = place.socket_name(_identity(warm_on))
    fake = Fake(folder, name, user=None)
    try:
        (folder / f"{name}.pid").write_text("1\n")  # another process's pid
        done = warm_on.spark("ls", "-A", "-o", "json", "-v=6")
        _empty_items(done)
        assert f"it is process {fake.pid}, not the server that wrote its pid (1)" in done.stderr
    finally:
        got = fake.got()
    assert got == ""


def _identity(warm: Warm) -> str:
    """The identity the console script computes with the warm test's environment."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from kubectl_spark.warm import place; print(place.identity(), end='')",
        ],
        env=warm.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


SWAPPER = """
import os, sys, time
parent, real, own = sys.argv[1:4]
link = os.path.join(parent, "kubectl-spark-warm")
tmp = os.path.join(parent, ".swap")
end = time.monotonic() + float(sys.argv[4])
while time.monotonic() < end:
    for target in (real, own):
        try:
            os.remove(tmp)
        except FileNotFoundError:
            pass
        os.symlink(target, tmp)
        os.replace(tmp, link)
"""


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A folder another uid can reach (pytest's own are private to root)."""
    top = Path(tempfile.mkdtemp(prefix="warm-trust-"))
    top.chmod(0o755)
    try:
        yield top
    finally:
        shutil.rmtree(top, ignore_errors=True)


@needs_root
def test_a_second_uid_controlling_the_folder_s_parent_never_gets_a_command(
    shared_tmp: Path, kubeconfig: Path
) -> None:
    """The attack of issue 49: another user owns the runtime folder's parent and swaps the
    folder (a symlink) between this user's real one and its own, where its server listens.
    The client checks every directory on the way and runs cold: never the fake's."""
    parent = shared_tmp / "run"
    parent.mkdir(mode=0o755)
    os.chown(parent, NOBODY, NOBODY)
    real = shared_tmp / "real"
    real.mkdir(mode=0o700)
    own = shared_tmp / "own"
    own.mkdir(mode=0o777)
    warm = Warm(parent, kubeconfig)
    name = place.socket_name(_identity(warm))
    fake = Fake(own, name, user=NOBODY)
    (own / f"{name}.pid").write_text(f"{fake.pid}\n")
    os.chown(own, NOBODY, NOBODY)
    swapper = subprocess.Popen(
        [python_for(NOBODY), "-c", SWAPPER, str(parent), str(real), str(own), "60"], user=NOBODY
    )
    try:
        for _ in range(20):
            done = warm.spark("ls", "-A", "-o", "json", "-v=6")
            _empty_items(done)
            assert WARM not in done.stderr
            assert f"{COLD}no warm process used: {parent} is owned by another user" in done.stderr
        assert swapper.poll() is None, "the swapper stopped: the race was not run"
    finally:
        swapper.kill()
        swapper.wait()
        got = fake.got()
    assert got == ""
    assert not any(real.iterdir())  # and no server was started on that path either


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("LD_LIBRARY_PATH", "/nonexistent"),
        ("LD_PRELOAD", "LIBC"),
        ("PYTHONPATH", "/nonexistent"),
        ("PYTHONWARNINGS", "error"),
    ],
)
def test_an_environment_the_server_would_not_reproduce_runs_cold(
    warm_on: Warm, variable: str, value: str
) -> None:
    warm_on.started()
    if value == "LIBC":
        value = _libc()
    done = warm_on.spark("ls", "-A", "-o", "json", "-v=6", env={variable: value})
    _empty_items(done)
    assert f"{COLD}{variable} is set" in done.stderr, done.stderr
    assert WARM not in done.stderr
    assert warm_on.served_warm("ls", "-A")  # and without it, warm again


def _libc() -> str:
    maps = Path("/proc/self/maps").read_text()
    found = re.search(r"(/\S*libc\.so\.6)", maps) or re.search(r"(/\S*libc[.-]\S*\.so\S*)", maps)
    if not found:
        pytest.skip("no libc path found to preload")
    return found.group(1)


@needs_root
@pytest.mark.parametrize("kind", ["net", "mnt"])
def test_another_namespace_runs_cold(warm_on: Warm, kind: str) -> None:
    """``unshare -n`` would be answered from the server's network, ``unshare -m`` from its
    mounts: both run cold (the first then fails as a cold start does: no loopback)."""
    if not shutil.which("unshare"):
        pytest.skip("no unshare")
    warm_on.started()
    flag = {"net": "-n", "mnt": "-m"}[kind]
    done = subprocess.run(
        ["unshare", flag, str(BIN), "ls", "-A", "-o", "json", "-v=6"],
        env=warm_on.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if "unshare failed" in done.stderr or "Operation not permitted" in done.stderr:
        pytest.skip(f"unshare {flag} is not allowed here: {done.stderr.strip()}")
    assert (
        f"{COLD}the warm process is not trusted: it runs in another {kind} namespace" in done.stderr
    )
    assert WARM not in done.stderr
    if kind == "mnt":
        _empty_items(done)


def _request_with(ident: str, **changes: object) -> bytes:
    body = list(marshal.loads(client.request(ident)[4:]))
    fields = {"cwd": 4}
    for key, value in changes.items():
        body[fields[key]] = value
    data = marshal.dumps(tuple(body))
    return len(data).to_bytes(4, "big") + data


def test_a_working_directory_the_server_cannot_enter_is_refused(warm_on: Warm) -> None:
    """Refused before anything runs, with its reason: the client runs the command itself."""
    warm_on.started()
    path = next(warm_on.servers.glob("*.sock"))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    place.reach(sock, str(path))
    with sock:
        data = _request_with(_identity(warm_on), cwd="/nonexistent/where/the/client/is")
        sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, bytes(12))])
        assert read_message(sock) == (client.REFUSED, client.CWD_UNREACHABLE)
    assert "working directory" in client.REFUSALS[client.CWD_UNREACHABLE]


def test_idle_connections_are_capped_and_time_out(warm_on: Warm) -> None:
    """A flood of connections that send nothing holds at most MAX_CONNECTIONS monitors, each
    for the hand-over time; beyond the cap the server refuses (the client runs cold)."""
    warm_on.started()
    path = next(warm_on.servers.glob("*.sock"))
    idle = []
    for _ in range(server.MAX_CONNECTIONS):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        place.reach(sock, str(path))
        idle.append(sock)
    try:
        time.sleep(0.5)  # each accepted and forked
        extra = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        place.reach(extra, str(path))
        with extra:
            assert read_message(extra) == (client.REFUSED, client.BUSY)
        deadline = time.monotonic() + 30  # the idle ones end after HAND_OVER_SECONDS
        while not warm_on.served_warm("ls", "-A"):
            assert time.monotonic() < deadline, "idle connections held the server"
            time.sleep(0.5)
    finally:
        for sock in idle:
            sock.close()


def test_sigkill_of_the_client_ends_its_worker(warm_on: Warm, tmp_path: Path) -> None:
    warm_on.started()
    with hanging(warm_on, tmp_path) as (proc, worker):
        assert alive(worker)
        proc.kill()
        deadline = time.monotonic() + 10
        while alive(worker):
            assert time.monotonic() < deadline, "the worker outlived its SIGKILLed client"
            time.sleep(0.05)


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_ctrl_z_stops_the_worker_and_fg_continues_it(warm_on: Warm, tmp_path: Path) -> None:
    warm_on.started()
    with hanging(warm_on, tmp_path) as (proc, worker):
        proc.send_signal(signal.SIGTSTP)
        deadline = time.monotonic() + 10
        while _state(worker) != "T" or _state(proc.pid) != "T":
            assert time.monotonic() < deadline, (_state(worker), _state(proc.pid))
            time.sleep(0.05)
        proc.send_signal(signal.SIGCONT)
        while _state(worker) == "T" or _state(proc.pid) == "T":
            assert time.monotonic() < deadline, (_state(worker), _state(proc.pid))
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 130


def test_the_warm_setting_is_on_or_off_and_nothing_else(warm_on: Warm) -> None:
    done = warm_on.spark("ls", "-A", env={"KUBECTL_SPARK_WARM": "bogus"})
    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == "error: KUBECTL_SPARK_WARM must be on or off, not 'bogus'"
    assert done.stdout == ""


def test_warm_status_and_stop(warm_on: Warm) -> None:
    none = warm_on.spark("warm", "status")
    assert none.returncode == 0 and none.stdout == "" and "No warm server running" in none.stderr
    warm_on.started()
    (pid,) = warm_on.pids()
    status = warm_on.spark("warm", "status")
    assert status.returncode == 0, status.stderr
    header, row = status.stdout.splitlines()
    assert header.split() == ["PID", "INSTALL", "STARTED", "SOCKET"]
    assert row.split()[:2] == [str(pid), "this"]
    listed = json.loads(warm_on.spark("warm", "status", "-o", "json").stdout)
    assert [i["pid"] for i in listed["items"]] == [pid]
    title = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    assert title.startswith("kubectl-spark warm server"), title  # what ps shows
    stopped = warm_on.spark("warm", "stop")
    assert stopped.returncode == 0 and stopped.stdout == "stopped 1 warm server(s)\n"
    assert not alive(pid)
    assert "No warm server running" in warm_on.spark("warm", "status").stderr


def test_warm_stop_kills_a_server_that_does_not_end_in_its_grace_period(warm_on: Warm) -> None:
    warm_on.started()
    (pid,) = warm_on.pids()
    os.kill(pid, signal.SIGSTOP)  # SIGTERM stays pending: it cannot end by itself
    try:
        stopped = warm_on.spark("warm", "stop")
        assert stopped.returncode == 0 and stopped.stdout == "stopped 1 warm server(s)\n"
        assert not alive(pid)
        # killed, it could not remove its socket: stop does, as nothing answers there
        assert "No warm server running" in warm_on.spark("warm", "status").stderr
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_the_identity_changes_with_an_edit_that_keeps_the_mtime(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("x = 1\n")
    stamp = module.stat().st_mtime
    before = place._newest(str(tmp_path))
    time.sleep(0.01)
    module.write_text("x = 2\n")
    os.utime(module, (stamp, stamp))  # cp -p, rsync -t: the old mtime back
    assert place._newest(str(tmp_path)) != before


def test_a_relative_runtime_directory_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", "relative/run")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    assert place.directory() == str(Path.home() / ".cache" / "kubectl-spark-warm")
    monkeypatch.setenv("XDG_CACHE_HOME", "/abs/cache")
    assert place.directory() == "/abs/cache/kubectl-spark-warm"


def test_the_parent_path_is_checked_step_by_step(tmp_path: Path) -> None:
    open_to_all = tmp_path / "open"
    open_to_all.mkdir()
    Path(open_to_all).chmod(0o777)
    with pytest.raises(place.Untrusted, match="writable by other users"):
        place.open_folder(str(open_to_all / "kubectl-spark-warm"), create=True)
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    Path(sticky).chmod(0o1777)  # as /tmp: others cannot rename what is ours
    os.close(place.open_folder(str(sticky / "kubectl-spark-warm"), create=True))
    made = (sticky / "kubectl-spark-warm").stat()
    assert (made.st_uid, made.st_mode & 0o777) == (os.getuid(), 0o700)
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o755)
    with pytest.raises(place.Untrusted, match="not this user's alone"):
        place.open_folder(str(loose))


def test_a_frozen_binary_s_own_library_path_is_not_the_person_s(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """PyInstaller's bootloader (the krew archive) sets LD_LIBRARY_PATH itself and keeps the
    person's in LD_LIBRARY_PATH_ORIG: only the person's runs cold."""
    for key in list(os.environ):
        if key.startswith(("LD_", "PYTHON")):
            monkeypatch.delenv(key)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setenv("LD_LIBRARY_PATH", "/tmp/_MEI123456")
    assert client._differs() is None
    monkeypatch.setenv("LD_LIBRARY_PATH_ORIG", "/opt/vendor/lib")
    assert client._differs() == (
        "LD_LIBRARY_PATH is set (the dynamic loader reads it when a process starts)"
    )


def test_a_fresh_home_gets_its_cache_folder(tmp_path: Path) -> None:
    """No ~/.cache yet (a new user, krew's first run): made private, then the folder in it."""
    folder = tmp_path / "home" / ".cache" / "kubectl-spark-warm"
    (tmp_path / "home").mkdir(mode=0o755)
    with pytest.raises(place.Untrusted, match="cannot open"):
        place.open_folder(str(folder))
    os.close(place.open_folder(str(folder), create=True))
    assert (folder.parent.stat().st_mode & 0o777) == 0o700
