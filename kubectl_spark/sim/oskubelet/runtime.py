"""A container as a process tree on this machine: its own mount namespace, signals, logs, memory.

What a container runtime gives a container and this module gives the process:

- its name: the pod's, as ``hostname`` (a UTS namespace of its own), in its ``/etc/hosts``;
- its files: the pod's volumes bind-mounted at their ``mountPath`` and ``/etc/hosts`` replaced,
  in a mount namespace of its own (``unshare --mount``, util-linux), so Spark finds
  ``/opt/spark/conf/spark.properties`` and fabric8 the service account's token
  (``/var/run/secrets/kubernetes.io/serviceaccount``) where a kubelet would have put them;
- its output kept line by line as the container's log (handed to ``on_output``);
- its end: the exit status as a container runtime reports it (128 + the signal's number for a
  process ended by a signal, as containerd does), and ``OOMKilled`` when :meth:`over_limit`
  found the tree's resident memory over the pod's ``limits.memory`` and killed it, as the
  kernel's OOM killer does in the container's cgroup (SIGKILL to every process of it);
- stop: SIGTERM to the command (tini -s passes it on), SIGKILL to the whole tree later; freeze
  (SIGSTOP) and thaw for a node that hangs.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import shlex
import signal
import struct
import subprocess
import termios
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class Mount:
    source: Path
    target: str  #: the path inside the container
    read_only: bool = False


def _die_with_kubelet() -> None:
    """In the child: a session of its own, and SIGKILL when the thread that started it ends."""
    os.setsid()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _launcher(mounts: Sequence[Mount], workdir: str, hostname: str) -> str:
    """The shell that builds the container's view of the files, then becomes the command."""
    steps = ["set -e", f"hostname {shlex.quote(hostname)}"]
    for m in mounts:
        source, target = shlex.quote(str(m.source)), shlex.quote(m.target)
        if m.source.is_dir():
            steps.append(f"mkdir -p {target}")
        else:
            steps.append(f"mkdir -p $(dirname {target}); [ -e {target} ] || : > {target}")
        steps.append(f"mount --bind {source} {target}")
        if m.read_only:
            steps.append(f"mount -o remount,bind,ro {target}")
    steps.append(f"mkdir -p {shlex.quote(workdir)}; cd {shlex.quote(workdir)}")
    steps.append('exec "$@"')
    return "; ".join(steps)


class ContainerProcess:
    """One run of one container: started at once, read by :meth:`poll`."""

    def __init__(
        self,
        command: Sequence[str],
        env: dict[str, str],
        mounts: Sequence[Mount],
        workdir: str,
        on_output: Callable[[str], None],
        *,
        hostname: str,
        memory_limit: int | None = None,
    ) -> None:
        self.memory_limit = memory_limit
        self.oom_killed = False
        self.env, self.workdir = env, workdir
        self._on_output = on_output
        argv = [
            "unshare",
            "--mount",
            "--uts",
            "--propagation",
            "private",
            "--",
            "/bin/sh",
            "-c",
            _launcher(mounts, workdir, hostname),
            "container",
            *command,
        ]
        self._proc = subprocess.Popen(  # noqa: S603 - the command the pod asks for, as a kubelet runs it
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_kubelet,  # noqa: PLW1509 - setsid and the death signal only
        )
        self.pid = self._proc.pid
        self._reader = threading.Thread(target=self._read, daemon=True, name=f"log-{self.pid}")
        self._reader.start()

    def _read(self) -> None:
        stream = self._proc.stdout
        assert stream is not None
        for raw in iter(stream.readline, b""):
            self._on_output(raw.decode("utf-8", "replace").rstrip("\n"))
        stream.close()

    def poll(self) -> int | None:
        """The exit status once the command has ended (its output read to the end), else None."""
        code = self._proc.poll()
        if code is None:
            return None
        self._reader.join(timeout=5)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)  # what the command left behind goes with it
        return 128 - code if code < 0 else code

    def wait(self, timeout: float) -> int | None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout)
        return self.poll()

    def signal(self, sig: int, *, tree: bool = False) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if tree:
                os.killpg(self.pid, sig)
            else:
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.signal(signal.SIGTERM)

    def kill(self) -> None:
        self.signal(signal.SIGKILL, tree=True)

    def end(self) -> None:
        """SIGKILL the tree and reap the command: nothing of the container is left running."""
        self.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(10)
        self._reader.join(timeout=5)

    def exec(self, command: Sequence[str], *, tty: bool) -> Execution:
        """``command`` beside the container's own: its files, its name, its environment.

        As a container runtime's exec: a process joined to the container's namespaces
        (``nsenter``, util-linux), in its working folder, with a terminal of its own when
        asked (its output one stream then, as a terminal merges them).
        """
        argv = [
            "nsenter",
            "--target",
            str(self.pid),
            "--mount",
            "--uts",
            "--",
            "/bin/sh",
            "-c",
            f'cd {shlex.quote(self.workdir)} 2>/dev/null; exec "$@"',
            "exec",
            *command,
        ]
        return Execution(argv, self.env, tty=tty)

    def rss(self) -> int:
        """The resident memory of every process of the tree (its session), in bytes."""
        total = 0
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                stat = Path(entry.path, "stat").read_text()
                fields = stat[stat.rindex(")") + 2 :].split()
                if int(fields[3]) != self.pid:  # the session id: the container's processes
                    continue
                total += int(Path(entry.path, "statm").read_text().split()[1]) * _PAGE
            except (OSError, ValueError, IndexError):
                continue
        return total

    def over_limit(self) -> bool:
        """Kill the tree as the OOM killer would when it holds more than its limit."""
        if self.memory_limit is None or self.oom_killed or self._proc.poll() is not None:
            return False
        if self.rss() <= self.memory_limit:
            return False
        self.oom_killed = True
        self.kill()
        return True


class Execution:
    """One ``exec``: the process and the descriptors of its streams, for the kubelet's endpoint.

    With a terminal, stdin, stdout and stderr are one pseudo-terminal (its controlling
    terminal, so a shell's job control and ^C work); without, three pipes.
    """

    def __init__(self, argv: Sequence[str], env: dict[str, str], *, tty: bool) -> None:
        self._tty = tty
        if tty:
            leader, follower = os.openpty()
            self._input = leader
            self._proc = subprocess.Popen(  # noqa: S603 - the command exec asks for, as a runtime runs it
                argv,
                env={**env, "TERM": env.get("TERM", "xterm")},
                stdin=follower,
                stdout=follower,
                stderr=follower,
                start_new_session=True,
                preexec_fn=_controlling_terminal,  # noqa: PLW1509 - the terminal only
            )
            os.close(follower)
            self.outputs = {1: leader}
        else:
            self._proc = subprocess.Popen(  # noqa: S603 - the command exec asks for, as a runtime runs it
                argv,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
            stdin, stdout, stderr = self._proc.stdin, self._proc.stdout, self._proc.stderr
            if stdin is None or stdout is None or stderr is None:
                raise OSError("exec: no pipes")
            self._input = stdin.fileno()
            self.outputs = {1: stdout.fileno(), 2: stderr.fileno()}
        for fd in self.outputs.values():
            os.set_blocking(fd, False)

    def write(self, data: bytes) -> None:
        with contextlib.suppress(OSError):
            os.write(self._input, data)

    def close_input(self) -> None:
        if self._tty:
            self.write(b"\x04")  # end of input, as a terminal's ^D says it
        elif self._proc.stdin is not None:
            with contextlib.suppress(OSError):
                self._proc.stdin.close()

    def resize(self, width: int, height: int) -> None:
        if self._tty:
            with contextlib.suppress(OSError):
                fcntl.ioctl(
                    self._input, termios.TIOCSWINSZ, struct.pack("HHHH", height, width, 0, 0)
                )

    def wait(self) -> int:
        code = self._proc.wait()
        return 128 - code if code < 0 else code

    def end(self) -> None:
        """Nothing of the exec outlives its connection (a client gone mid-command)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, signal.SIGKILL)
        self._proc.wait()
        if self._tty:
            with contextlib.suppress(OSError):
                os.close(self._input)
            return
        for pipe in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()


def _controlling_terminal() -> None:
    """In the child, a session leader already: its stdin becomes its controlling terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
