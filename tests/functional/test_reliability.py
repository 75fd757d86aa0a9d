"""Under a server that misbehaves after doing its work (tests/faultproxy.py): every write is sent
once and its lost answer settled by a re-read; every command ends within its deadline plus a
second; a list that pages for ever, a trickled body, garbage in a watch, an object nested deeper
than a parser's limit or an answer that is not a list each end in one clear line, or are set
aside by name while the rest is kept."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubectl_spark.cluster.apiserver.embedded import (
    ADMIN_USER,
    EmbeddedApiServer,
    kubeconfig_document,
    write_kubeconfig_file,
)
from kubectl_spark.kube.client import Connection, connect
from kubectl_spark.kube.live import LiveCluster
from tests.command_line import run
from tests.conftest import ScenarioCluster
from tests.faultproxy import Fault, FaultProxy, through
from tests.helpers import create_pods, spark_pod

DEADLINE_SLACK = 1.0  # a command ends within its --request-timeout plus this
LEASE = "kubectl-spark-networkwordcount"  # the fencing Lease of S2's application


@pytest.fixture
def proxied_emulator(
    emulator: EmbeddedApiServer, tmp_path: Path
) -> Iterator[tuple[FaultProxy, Path]]:
    with FaultProxy(emulator.url) as proxy:
        yield proxy, through(proxy, emulator.token, tmp_path / "proxied")


def timed(
    capsys: pytest.CaptureFixture[str], kubeconfig: Path, *args: str
) -> tuple[int, str, str, float]:
    start = time.monotonic()
    code, out, err = run(capsys, kubeconfig, *args)
    return code, out, err, time.monotonic() - start


def one_line_error(code: int, err: str) -> str:
    assert code != 0 and err.startswith("error: ") and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    return err


@pytest.fixture
def direct(emulator: EmbeddedApiServer, tmp_path: Path) -> Iterator[Any]:
    """The emulator reached directly (no proxy): how a test sets the scene."""
    with connect(Connection(kubeconfig=str(emulator.write_kubeconfig(tmp_path / "direct")))) as api:
        yield api


# ---------------------------------------------------------------- writes: sent once, settled
@pytest.fixture
def partitioned(cluster: Any, tmp_path: Path) -> Iterator[tuple[ScenarioCluster, FaultProxy, Path]]:
    """S2 (a zombie attempt 1 beside attempt 2), reached through the fault proxy."""
    c = cluster("s2-partition")
    c.player.play()
    with FaultProxy(c.server.url) as proxy:
        yield c, proxy, through(proxy, c.server.token, tmp_path / "proxied")


def test_a_late_answer_to_a_write_is_not_resent_and_the_reread_finishes_the_fence(
    partitioned: tuple[ScenarioCluster, FaultProxy, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    c, proxy, kubeconfig = partitioned
    # A fencing Lease from before (epoch 0): the fence takes it with a compare-and-swap (PUT).
    c.world.client.create(
        "/apis/coordination.k8s.io/v1/namespaces/default/leases",
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": LEASE},
            "spec": {"holderIdentity": "before", "leaseTransitions": 0},
        },
    )
    # The server applies the compare-and-swap, then answers 3 s late: past the timeout.
    proxy.faults = [Fault("late", "PUT", "/leases/", seconds=3)]
    code, out, err = run(
        capsys,
        kubeconfig,
        "fence",
        "networkwordcount/1",
        "--yes",
        "--request-timeout",
        "1s",
        "-v",
        "6",
    )
    assert code == 0, err
    assert proxy.count("PUT", "/leases/") == 1, proxy.seen  # sent once, by every layer
    # -v=6 prints every attempt: one PUT line, without a status (no answer came).
    puts = [line for line in err.splitlines() if "] PUT " in line and "/leases/" in line]
    assert len(puts) == 1 and " 200 " not in puts[0], puts
    assert "answer to step update leases.coordination.k8s.io" in err and "it took effect" in err
    assert "fence networkwordcount/1: done" in out
    lease = c.world.client.get(f"/apis/coordination.k8s.io/v1/namespaces/default/leases/{LEASE}")
    assert lease is not None and lease["spec"]["leaseTransitions"] == 1
    # What came after the lost answer was done too: the Fenced Event is there, once.
    events = c.world.client.list("/api/v1/namespaces/default/events", fieldSelector="reason=Fenced")
    assert len(events) == 1


def test_a_slow_delete_reaches_the_server_once(
    partitioned: tuple[ScenarioCluster, FaultProxy, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _c, proxy, kubeconfig = partitioned
    proxy.faults = [Fault("late", "DELETE", "/pods/", seconds=2.5)]
    code, _out, err = run(
        capsys,
        kubeconfig,
        "force-kill",
        "networkwordcount/1",
        "--node-down",
        "--yes",
        "--request-timeout",
        "1s",
    )
    assert code == 0, err
    deletes = {p: n for (m, p), n in proxy.seen.items() if m == "DELETE" and "/pods/" in p}
    assert deletes and set(deletes.values()) == {1}, deletes
    assert err.count("it took effect") == len(deletes)


def test_a_write_that_never_arrived_stops_the_plan_and_says_so(
    partitioned: tuple[ScenarioCluster, FaultProxy, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    c, proxy, kubeconfig = partitioned
    # The proxy holds the Lease's create and never passes it on: the answer is lost, and so
    # is the write. The re-read says so; the plan stops there and re-sends nothing. The
    # command's deadline is shared by its reads before the create (0.9 s of a 1 s deadline on
    # a loaded machine): 3 s, under the 5 s the proxy holds the create.
    proxy.faults = [Fault("swallow", "POST", "/leases", seconds=5)]
    code, out, err = run(
        capsys, kubeconfig, "fence", "networkwordcount/1", "--yes", "--request-timeout", "3s"
    )
    one_line_error(code, err.splitlines()[-1] + "\n")
    assert "it did not take effect (not re-sent)" in err and "fence stopped at step" in err
    assert proxy.count("POST", "/leases") == 1
    assert (
        c.world.client.get(f"/apis/coordination.k8s.io/v1/namespaces/default/leases/{LEASE}")
        is None
    )
    assert "not done:" in out  # the steps after it are listed as not done


# ---------------------------------------------------------------- deadlines
def test_a_trickled_body_is_cut_at_the_deadline(
    proxied_emulator: tuple[FaultProxy, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    proxy, kubeconfig = proxied_emulator
    proxy.faults = [Fault("trickle", "GET", "/pods", seconds=0.5)]
    code, out, err, took = timed(capsys, kubeconfig, "ls", "-A", "--request-timeout", "2s")
    assert took < 2 + DEADLINE_SLACK, took
    assert "no whole answer within" in one_line_error(code, err) and out == ""


def test_the_commands_requests_share_one_deadline(
    proxied_emulator: tuple[FaultProxy, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    proxy, kubeconfig = proxied_emulator
    # Each answer is 0.7 s late: under the timeout one by one, past it together.
    proxy.faults = [Fault("late", "GET", "/", seconds=0.7)]
    code, _out, err, took = timed(capsys, kubeconfig, "ls", "-A", "--request-timeout", "2s")
    assert took < 2 + DEADLINE_SLACK, took
    assert "--request-timeout" in one_line_error(code, err)


def test_a_list_that_pages_for_ever_is_stopped(
    direct: Any,
    proxied_emulator: tuple[FaultProxy, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    proxy, kubeconfig = proxied_emulator
    create_pods(direct, spark_pod("a-driver", "driver"), spark_pod("a-exec-1"))
    proxy.faults = [Fault("endless-continue", "GET", "/pods")]
    code, _out, err, took = timed(capsys, kubeconfig, "ls", "-A")
    assert "pages repeat" in one_line_error(code, err)
    assert proxy.count("GET", "/pods") <= 3 and took < 10


def test_pages_that_come_empty_for_ever_are_stopped(
    proxied_emulator: tuple[FaultProxy, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    proxy, kubeconfig = proxied_emulator  # no Spark pods: each page is empty, with a token
    proxy.faults = [Fault("endless-continue", "GET", "/pods")]
    code, _out, err, took = timed(capsys, kubeconfig, "ls", "-A")
    assert "empty pages" in one_line_error(code, err)
    assert took < 30


def test_a_kubeconfig_that_never_ends_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _out, err, took = timed(capsys, Path("/dev/zero"), "ls")
    assert "larger than 16 MiB" in one_line_error(code, err) and took < 10


# ---------------------------------------------------------------- answers that are not lists
@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("status-200", "the server answered a Status, not a list: odd"),
        ("items-not-list", "the server's answer has no list of items"),
    ],
)
def test_a_200_that_is_not_a_list_is_an_error_not_an_empty_cluster(
    proxied_emulator: tuple[FaultProxy, Path],
    capsys: pytest.CaptureFixture[str],
    kind: str,
    said: str,
) -> None:
    proxy, kubeconfig = proxied_emulator
    proxy.faults = [Fault(kind, "GET", "/pods")]
    code, out, err = run(capsys, kubeconfig, "ls", "-A")
    assert said in one_line_error(code, err) and "No Spark applications" not in out


def test_one_deeply_nested_object_is_set_aside_by_name_and_the_rest_kept(
    direct: Any,
    proxied_emulator: tuple[FaultProxy, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    proxy, kubeconfig = proxied_emulator
    if True:
        for name in ("etl", "pi"):
            direct.request(
                "POST",
                "/apis/sparkoperator.k8s.io/v1beta2/namespaces/default/sparkapplications",
                body={
                    "apiVersion": "sparkoperator.k8s.io/v1beta2",
                    "kind": "SparkApplication",
                    "metadata": {"name": name},
                    "spec": {"type": "Scala", "mode": "cluster", "sparkVersion": "3.5.0"},
                },
            )
    # 1,100 levels: past orjson's 1,024, within kube-apiserver's 10,000.
    proxy.faults = [Fault("deep-item", "GET", "/sparkapplications", depth=1100)]
    code, out, err = run(capsys, kubeconfig, "ls", "-o", "json")
    assert code == 0, err
    names = sorted(a["name"] for a in json.loads(out)["items"])
    assert names == ["etl", "pi"], names
    assert "set aside SparkApplication default/deep-one: nested deeper than" in err
    assert "Traceback" not in err


# ---------------------------------------------------------------- watches
def test_a_bad_watch_line_is_skipped_and_the_watch_kept(
    direct: Any, proxied_emulator: tuple[FaultProxy, Path]
) -> None:
    proxy, kubeconfig = proxied_emulator
    create_pods(direct, spark_pod("a-driver", "driver"))
    proxy.faults = [Fault("watch-garbage", "GET", "/pods")]
    notes: list[str] = []

    def connected() -> Any:
        api = connect(Connection(kubeconfig=str(kubeconfig)))
        api.on_note = notes.append
        return api

    live = LiveCluster(connected, "default", spark_api=False)
    live.start()
    try:
        assert live.ready.wait(20)
        create_pods(direct, spark_pod("a-exec-1"))
        deadline = time.monotonic() + 10
        while "a-exec-1" not in {p.metadata.name for p in live.snapshot().pods}:
            assert time.monotonic() < deadline, (live.state, live.error, notes)
            time.sleep(0.05)
        assert live.state == "live" and live.error == "", (live.state, live.error)
    finally:
        live.stop()
    assert any("skipped a watch line that is not an event" in n for n in notes), notes
    assert any("skipped Pod no-uid in a watch: it has no metadata.uid" in n for n in notes)


def test_ls_watch_keeps_going_past_a_bad_line(
    direct: Any, proxied_emulator: tuple[FaultProxy, Path]
) -> None:
    proxy, kubeconfig = proxied_emulator
    create_pods(direct, spark_pod("a-driver", "driver"))
    proxy.faults = [Fault("watch-garbage", "GET", "/pods")]
    binary = Path(sys.executable).parent / "kubectl-spark"
    proc = subprocess.Popen(
        [str(binary), "--kubeconfig", str(kubeconfig), "ls", "-w", "--no-headers"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout or []), daemon=True)
    reader.start()
    try:
        time.sleep(1.5)
        create_pods(direct, spark_pod("a-exec-1"))
        deadline = time.monotonic() + 10
        while not any(line.split()[4].endswith("/1") for line in lines if len(line.split()) > 4):
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, lines
            time.sleep(0.1)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert "Traceback" not in err and "JSONDecodeError" not in err and "KeyError" not in err


class _Mute:
    """A TCP server that accepts every connection and never says a word (no TLS hello back)."""

    def __init__(self) -> None:
        import socket

        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.held: list[Any] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.held.append(conn)

    def close(self) -> None:
        self.listener.close()
        for conn in self.held:
            conn.close()


def test_a_server_that_accepts_and_never_answers_ends_the_command(tmp_path: Path) -> None:
    """As kubectl (client-go's 10 s TLS handshake timeout): one line, not a hang, no retries."""
    from kubectl_spark.kube.client import CONNECT_SECONDS

    mute = _Mute()
    config = write_kubeconfig_file(
        tmp_path / "mute",
        kubeconfig_document(f"https://127.0.0.1:{mute.port}", b"", ADMIN_USER, "t", "default"),
    )
    command = [sys.executable, "-m", "kubectl_spark.cli.main", "--kubeconfig", str(config)]
    try:
        start = time.monotonic()
        done = subprocess.run(
            [*command, "ls"], capture_output=True, text=True, timeout=120, check=False
        )
        took = time.monotonic() - start
        assert done.returncode == 1 and done.stdout == "", done.stderr
        (line,) = done.stderr.splitlines()
        assert "no connection within 10s (the TCP connect or the TLS handshake timed out)" in line
        # not asked again and again (five tries would take 50 s): a Python start on top
        assert CONNECT_SECONDS <= took < 3 * CONNECT_SECONDS, took
        start = time.monotonic()
        done = subprocess.run(
            [*command, "--request-timeout", "2s", "ls"],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 1 and "--request-timeout" in done.stderr, done.stderr
        assert time.monotonic() - start < CONNECT_SECONDS
    finally:
        mute.close()
