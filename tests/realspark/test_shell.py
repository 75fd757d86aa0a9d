"""A shell in a real Spark driver: ``kubectl exec`` through the emulator, and the TUI's ``s``.

The emulator relays exec to the node's kubelet (cluster/apiserver/podexec.py), which runs the
command beside the container's own process (sim/oskubelet/runtime.py, ``exec``). The real
control plane would ask that kubelet in SPDY, which the simulated kubelets do not speak: these
run on the emulator only.

The TUI's ``s`` is tried in a real terminal (tmux): Textual hands it to ``kubectl exec -it``,
the shell runs in the driver's container (its host name, Spark's files where the image has
them), and the TUI takes the terminal back when the shell exits.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .bed import Cluster, until
from .launch import spark_submit

pytestmark = [pytest.mark.realspark, pytest.mark.timeout(300)]
BIN = Path(sys.executable).parent / "kubectl-spark"


@pytest.fixture
def driver(emulated: Cluster) -> str:
    """A running driver of a real Spark application (its pod's name)."""
    emulated.kubelet.add_node("node-a")
    spark_submit(emulated, "shell", "steady.py")
    until(lambda: len(emulated.running(spark_role="driver")) == 1, 90, "the driver running")
    (pod,) = emulated.running(spark_role="driver")
    return str(pod["metadata"]["name"])


def kubectl(c: Cluster, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["kubectl", "--kubeconfig", str(c.bed.kubeconfig), "-n", c.namespace, *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=60,
        check=False,
    )


def test_kubectl_exec_runs_in_the_drivers_container(emulated: Cluster, driver: str) -> None:
    c = emulated
    said = kubectl(c, "exec", driver, "--", "sh", "-c", "hostname; ls /opt/spark/conf; exit 3")
    assert said.returncode == 3, said
    assert said.stdout.splitlines()[0] == driver, said.stdout
    assert "spark.properties" in said.stdout  # the driver's ConfigMap, mounted where Spark reads it
    assert said.stderr == "command terminated with exit code 3\n"

    piped = kubectl(c, "exec", "-i", driver, "--", "cat", stdin="from stdin\n")
    assert (piped.returncode, piped.stdout) == (0, "from stdin\n"), piped

    wrong = kubectl(c, "exec", driver, "-c", "nope", "--", "true")
    assert wrong.returncode == 1
    assert f"container nope is not valid for pod {driver}" in wrong.stderr


def test_s_hands_the_terminal_to_a_shell_and_takes_it_back(
    emulated: Cluster, driver: str, tmp_path: Path
) -> None:
    if shutil.which("tmux") is None:
        pytest.fail("tmux is needed to give the TUI a real terminal")
    c = emulated
    socket = str(tmp_path / "tmux.sock")
    env = {
        **os.environ,
        "KUBECTL_SPARK_WARM": "off",
        "KUBECONFIG": str(c.bed.kubeconfig),
        "PATH": f"{BIN.parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    tui = shlex.join([str(BIN), "tui", "-n", c.namespace])

    def tmux(*args: str) -> str:
        done = subprocess.run(
            ["tmux", "-S", socket, *args], env=env, capture_output=True, text=True, check=False
        )
        return done.stdout

    def screen() -> str:
        return tmux("capture-pane", "-p", "-t", "t")

    tmux(
        "new-session",
        "-d",
        "-s",
        "t",
        "-x",
        "140",
        "-y",
        "36",
        f"{tui}; echo TUI-ENDED $?; sleep 60",
    )
    try:
        until(lambda: "shell" in screen() and "Running" in screen(), 60, "the app shown", screen)
        tmux("send-keys", "-t", "t", "s")
        # The shell's prompt (bash's: user@host), in the terminal the TUI handed over
        until(lambda: f"@{driver}:" in screen(), 60, "a shell's prompt", screen)
        tmux("send-keys", "-t", "t", "echo in-$(hostname)-$((6*7))", "Enter")
        until(
            lambda: f"in-{driver}-42" in screen(), 60, "a shell in the driver's container", screen
        )
        tmux("send-keys", "-t", "t", "exit", "Enter")
        until(
            lambda: "shell" in screen() and f"in-{driver}-42" not in screen(),
            30,
            "the TUI back after the shell",
            screen,
        )
        tmux("send-keys", "-t", "t", "q")
        until(lambda: "TUI-ENDED 0" in screen(), 30, "the TUI ended as asked", screen)
    finally:
        tmux("kill-server")
