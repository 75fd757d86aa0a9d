"""The optional lists are read beside the pods' pages (``kube.snapshot.read``): against a
distant API server a command waits about one round trip for them, not one each. And a
command that is interrupted while one of them never answers ends at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from kubectl_spark.cli.main import main
from kubectl_spark.kube.lazy_kubernetes import EAGER
from tests.faultproxy import Fault, FaultProxy, through

LISTS = ("/jobs", "/events", "/nodes", "/sparkapplications", "/persistentvolumeclaims")


def _most_at_once(bed: Any, tmp_path: Path, capsys: Any, extra: dict[str, str]) -> int:
    with FaultProxy(bed.url) as proxy:
        kubeconfig = through(proxy, bed.token, tmp_path / "proxied")
        proxy.faults = [Fault("late", "GET", part, seconds=0.3) for part in LISTS]
        os.environ.update(extra)
        try:
            code = main(["--kubeconfig", str(kubeconfig), "ls", "-A"])
        finally:
            for key in extra:
                os.environ.pop(key, None)
        _, err = capsys.readouterr()
        assert code == 0, err
        assert proxy.count("GET", "/events") == 1
        return proxy.most_open


def test_the_optional_lists_are_read_together_and_one_by_one_with_the_fast_paths_off(
    bed: Any, tmp_path: Path, capsys: Any
) -> None:
    assert _most_at_once(bed, tmp_path, capsys, {}) >= 3
    assert _most_at_once(bed, tmp_path, capsys, {EAGER: "1"}) == 1


def test_ctrl_c_while_a_list_never_answers_ends_the_command_at_once(
    bed: Any, tmp_path: Path
) -> None:
    with FaultProxy(bed.url) as proxy:
        kubeconfig = through(proxy, bed.token, tmp_path / "proxied")
        proxy.faults = [Fault("swallow", "GET", "/events", seconds=120)]
        binary = str(Path(sys.executable).parent / "kubectl-spark")
        command = subprocess.Popen(
            [binary, "--kubeconfig", str(kubeconfig), "ls", "-A"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 60
            while not proxy.count("GET", "/events") and time.monotonic() < deadline:
                time.sleep(0.05)
            assert proxy.count("GET", "/events"), "the events list was never asked"
            time.sleep(0.5)
            command.send_signal(signal.SIGINT)
            _, err = command.communicate(timeout=10)  # not the 120 s the list would take
        finally:
            command.kill()
            command.communicate()
        assert command.returncode == 130, err
