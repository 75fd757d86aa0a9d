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
import os
import shlex
import signal
import subprocess
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
