"""A warm server of the tests' own (its own run folder and kubeconfig), its messages, and a
command that hangs, for the warm process' tests."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from kubectl_spark.warm import ENV, control, place

BIN = Path(sys.executable).parent / "kubectl-spark"


class Warm:
    def __init__(self, run: Path, kubeconfig: Path) -> None:
        self.run = run
        self.env = {k: v for k, v in os.environ.items() if k != ENV}
        self.env |= {"XDG_RUNTIME_DIR": str(run), "KUBECONFIG": str(kubeconfig)}

    @property
    def servers(self) -> Path:
        return self.run / "kubectl-spark-warm"

    def spark(
        self, *args: str, warm: bool = True, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        extra = {} if warm else {ENV: "off"}
        return subprocess.run(
            [str(BIN), *args],
            env={**self.env, **extra, **(env or {})},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def pids(self) -> list[int]:
        return [int(p.read_text()) for p in self.servers.glob("*.pid")]

    def started(self) -> None:
        """The first reading command runs cold and starts a server: wait until it answers."""
        first = self.spark("ls", "-A")
        assert first.returncode == 0, first.stderr
        self.wait_for_server()

    def wait_for_server(self) -> None:
        deadline = time.monotonic() + 30
        while not any(answers(s) for s in self.servers.glob("*.sock")):
            if time.monotonic() > deadline:
                pytest.fail(f"no warm server started; run in the foreground:\n{self._foreground()}")
            time.sleep(0.1)

    def _foreground(self) -> str:
        """What a server started by hand says (it exits at once when it cannot listen)."""
        try:
            done = subprocess.run(
                [sys.executable, "-m", "kubectl_spark.cli.main", "__warm-serve"],
                env=self.env,
                capture_output=True,
                text=True,
                timeout=15,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return f"it runs, yet was not found: {sorted(self.run.rglob('*'))}"
        return f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"

    def served_warm(self, *args: str) -> bool:
        """``-v=6`` names the warm process that served the command."""
        done = self.spark(*args, "-v=6")
        return "served by the warm process" in done.stderr

    def stop(self) -> None:
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            deadline = time.monotonic() + 10
            while alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie of ours is not alive
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        pass
    return control.running(pid)  # nor one that another parent (a container's init) has not reaped


def answers(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        place.reach(probe, str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def read_message(sock: socket.socket) -> tuple[int, int]:
    """One of the server's 8-byte messages: its kind and value (client.PID, EXIT, REFUSED)."""
    data = b""
    while len(data) < 8:
        chunk = sock.recv(8 - len(data))
        assert chunk, "the server closed the connection"
        data += chunk
    return int.from_bytes(data[:4], "big"), int.from_bytes(data[4:], "big", signed=True)


def warm_server(tmp_path: Path, kubeconfig: Path) -> Iterator[Warm]:
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    warm = Warm(run, kubeconfig)
    try:
        yield warm
    finally:
        warm.stop()


def hanging_kubeconfig(path: Path, port: int) -> Path:
    """A kubeconfig naming a server that accepts and never answers TLS: a command that hangs."""
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": "c",
                        "cluster": {
                            "server": f"https://127.0.0.1:{port}",
                            "insecure-skip-tls-verify": True,
                        },
                    }
                ],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    return path


@contextmanager
def hanging(
    warm: Warm, tmp_path: Path, *, cold: bool = False
) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """A slow ``ls -A -v=6`` (its server never answers), and the pid that runs it."""
    silent = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    with silent:
        config = hanging_kubeconfig(tmp_path / "hanging", silent.getsockname()[1])
        proc = subprocess.Popen(
            [str(BIN), "ls", "-A", "-v=6", "--request-timeout", "60"],
            env={**warm.env, "KUBECONFIG": str(config), **({ENV: "off"} if cold else {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            # a process group of its own in this session, as a shell's job: never an orphaned
            # one (a runner's), where the kernel drops Ctrl-Z (SIGTSTP), warm or cold
            process_group=0,
        )
        try:
            assert proc.stderr is not None
            first = proc.stderr.readline()
            assert ("served by the warm process" in first) is not cold, first
            yield proc, int(first.split()[2])
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.communicate(timeout=20)
