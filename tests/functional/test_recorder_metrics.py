"""The recorder's /metrics, scraped while S4 and S2 play: losses by reason, the SplitBrain gauge.

A recorder process (``record --metrics-port``) watches the emulator; the scrape is Prometheus's
text format, read as Prometheus would (prometheus_client's own parser), over TLS with a bearer
token the recorder has the API server review.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kubectl_spark.cli.main import main
from tests.incluster import token_of
from tests.recorder_access import read_recorder
from tests.waiting import wait_until

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _samples(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """As Prometheus scrapes: over TLS, with a token (the recorder reviews it)."""
    try:
        status, text = read_recorder(port, "/metrics", SCRAPER[port])
    except OSError:
        return {}
    if status != 200:
        return {}
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


SCRAPER: dict[int, str] = {}  # the token each recorder's scrape carries, by port


@pytest.fixture
def recorder(tmp_path: Path) -> Iterator[Callable[[Path], int]]:
    procs: list[subprocess.Popen[bytes]] = []

    def start(kubeconfig: Path) -> int:
        port = _free_port()
        SCRAPER[port] = token_of(kubeconfig)
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "kubectl_spark.cli.main",
                    "--kubeconfig",
                    str(kubeconfig),
                    "record",
                    "-A",
                    "-q",
                    "--metrics-port",
                    str(port),
                    "--history-db",
                    str(tmp_path / f"history-{port}.db"),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        return port

    yield start
    for proc in procs:
        proc.terminate()
        proc.wait(20)


def _value(samples: dict[Any, float], name: str, **labels: str) -> float:
    return sum(v for (n, ls), v in samples.items() if n == name and set(labels.items()) <= set(ls))


def test_losses_by_reason_in_s4(cluster: Any, recorder: Any) -> None:
    c = cluster("s4-executor-losses")
    c.player.play()
    port = recorder(c.kubeconfig)
    wait_until(
        lambda: _value(_samples(port), "kubectl_spark_executor_losses_total") > 0,
        "the losses counted",
        seconds=30,
    )
    time.sleep(2)
    samples = _samples(port)
    losses = "kubectl_spark_executor_losses_total"
    assert _value(samples, losses, code="OOMKilled", category="app") >= 1
    assert _value(samples, losses, code="Evicted") >= 1
    # Spark's two counters are labels: an OOM kill counts toward spark.executor.maxNumFailures.
    assert _value(samples, losses, code="OOMKilled", counts_toward_max_failures="true") >= 1
    assert _value(samples, "kubectl_spark_recorder_leader") == 1
    assert _value(samples, "kubectl_spark_recorder_store_bytes") > 0


def test_the_split_brain_gauge_goes_to_zero_after_fence_and_force_kill(
    cluster: Any, recorder: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    c = cluster("s2-partition")
    c.player.play()
    port = recorder(c.kubeconfig)
    split = {"type": "SplitBrain", "app": "networkwordcount"}
    wait_until(
        lambda: _value(_samples(port), "kubectl_spark_alerts", **split) == 1,
        "SplitBrain at 1",
        seconds=30,
    )
    for action in (
        ["fence", "networkwordcount/1", "--yes"],
        ["force-kill", "networkwordcount/1", "--yes"],
    ):
        assert main(["--kubeconfig", str(c.kubeconfig), *action]) == 0, capsys.readouterr().err

    def cleared() -> bool:
        samples = _samples(port)
        present = [
            k for k in samples if k[0] == "kubectl_spark_alerts" and set(split.items()) <= set(k[1])
        ]
        return bool(present) and _value(samples, "kubectl_spark_alerts", **split) == 0

    wait_until(cleared, "SplitBrain at 0 (the series kept, at 0)", seconds=30)
