"""`ls -w` / `--watch-only` through the real entry point: changed rows from a watch, and a
field selector followed as the applications change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ScenarioCluster as Cluster


class Watching:
    """``kubectl spark ls`` with ARGS as a process, its output lines gathered as they arrive."""

    def __init__(self, c: Cluster, *args: str) -> None:
        import subprocess
        import sys
        import threading

        binary = Path(sys.executable).parent / "kubectl-spark"
        self.proc = subprocess.Popen(
            [str(binary), "--kubeconfig", str(c.kubeconfig), "ls", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        self.lines.extend(self.proc.stdout)  # one line at a time, as they arrive

    def until(self, condition: Any, timeout: float = 20) -> None:
        import time

        deadline = time.monotonic() + timeout
        while not condition(self.lines) and time.monotonic() < deadline:
            time.sleep(0.1)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.communicate(timeout=10)


def oom_kill_exec_1(c: Cluster) -> dict[str, Any]:
    """OOM-kill the executor ``…exec-1`` of s6's application, and let the cluster see it."""
    (executor,) = [
        p
        for p in c.world.find_pods("default", spark_role="executor")
        if p["metadata"]["name"].endswith("exec-1")
    ]
    c.world.oom_kill("default", executor["metadata"]["name"])
    c.world.step(2)
    return executor


def lost_to_the_app(lines: list[str]) -> bool:
    return any(line.startswith("restarting-driver") and "1 app" in line for line in lines)


@pytest.mark.parametrize("flag", ["-w", "--watch-only"])
def test_ls_watch_prints_changed_rows_from_a_watch(cluster, flag: str) -> None:
    import time

    c = cluster("s6-driver-restarts")
    c.player.play_until(20)
    watching = Watching(c, flag)
    lines = watching.lines
    try:
        listed = 2 if flag == "-w" else 1  # --watch-only: the header, no list first
        watching.until(lambda out: len(out) >= listed)
        time.sleep(0.5)  # anything more would have been printed by now
        assert lines[0].split()[0] == "APP" and len(lines) == listed, lines
        if flag == "-w":
            assert lines[1].split()[:2] == ["restarting-driver", "Running"]
        oom_kill_exec_1(c)
        watching.until(lost_to_the_app)
        assert lost_to_the_app(lines[listed:]), lines
        assert not any(line.startswith("APP") for line in lines[1:])  # rows only, as kubectl get -w
    finally:
        watching.stop()


def test_ls_watch_with_a_field_selector_follows_the_matching_applications(cluster) -> None:
    """`ls -w --field-selector spec.nodeName=N`: the applications touching node N, as they change;
    each burst asks the server again which pods match, so its rules are the rules."""
    import time

    c = cluster("s6-driver-restarts")
    c.player.play_until(20)
    (exec_1,) = [
        p
        for p in c.world.find_pods("default", spark_role="executor")
        if p["metadata"]["name"].endswith("exec-1")
    ]
    node = exec_1["spec"]["nodeName"]
    on_node = Watching(c, "-w", "--field-selector", f"spec.nodeName={node}")
    nowhere = Watching(c, "-w", "--field-selector", "spec.nodeName=nowhere")
    try:
        on_node.until(lambda out: len(out) >= 2)
        assert on_node.lines[1].split()[:2] == ["restarting-driver", "Running"], on_node.lines
        oom_kill_exec_1(c)
        on_node.until(lost_to_the_app)
        assert lost_to_the_app(on_node.lines[2:]), on_node.lines
        time.sleep(0.5)
        assert nowhere.lines == [], nowhere.lines  # no pod there: nothing, then or now
    finally:
        on_node.stop()
        nowhere.stop()
