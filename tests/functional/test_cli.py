"""The CLI through its real entry point (a subprocess running the installed console script)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kubectl_spark import __version__

BIN = Path(sys.executable).parent / "kubectl-spark"


def run(
    *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN), *args], capture_output=True, text=True, timeout=timeout, env=env, check=False
    )


def test_version() -> None:
    proc = run("version")
    assert (proc.returncode, proc.stdout) == (0, f"kubectl spark v{__version__}\n")
    assert (
        run("version", "-o", "json").stdout.strip()
        == f'{{"clientVersion": {{"gitVersion": "v{__version__}"}}}}'
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bogus"], "No such command 'bogus'"),
        (["version", "-o", "xml"], "--output must be 'yaml' or 'json', not 'xml'"),
        (["version", "--nope"], "No such option: --nope"),
        (["demo", "--scenario", "s99"], "unknown scenario 's99'"),
        (["demo", "--port", "70000"], "--port must be between 0 and 65535"),
        (["demo", "--speed", "0"], "--speed must be above 0"),
        (["demo", "--speed", "fast"], "Invalid value for '--speed'"),
        (["ls", "-v", "loud"], 'invalid argument "loud" for "-v, --v" flag'),
        (["ls", "--v=-1"], 'invalid argument "-1" for "-v, --v" flag'),
        (["ls", "--insecure-skip-tls-verify=maybe"], "use true or false"),
        # said once, not taken for a failed connection and retried five times
        (["ls", "--server", "ftp://x"], "--server 'ftp://x': unsupported protocol scheme \"ftp\""),
        (["ls", "--server", "http://[::1"], "--server 'http://[::1': not a URL"),
        (["ls", "--server", "http://a:b"], "--server 'http://a:b': not a URL"),
        (["ls", "--server", "http://"], "--server 'http://': no host"),
    ],
)
def test_bad_input_is_one_line_and_non_zero(args: list[str], message: str) -> None:
    proc = run(*args)
    assert proc.returncode != 0
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ") and message in lines[0]
    assert "Traceback" not in proc.stderr


def test_help_names_the_plugin() -> None:
    proc = subprocess.run(
        [str(BIN), "--help"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "COLUMNS": "100", "NO_COLOR": "1"},
    )
    assert proc.returncode == 0
    assert "version" in proc.stdout and "demo" in proc.stdout


def test_demo_prints_what_it_serves_and_how_to_reach_it(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path)}
    proc = run("demo", "--scenario", "empty", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Embedded Kubernetes API v1.32.0" in proc.stdout
    assert "sparkoperator.k8s.io/v1beta2" in proc.stdout and "pods" in proc.stdout
    assert (
        f"kubectl spark demo --serve --scenario empty --kubeconfig {tmp_path}/kubectl-spark/demo-kubeconfig.yaml"
        in proc.stdout
    )


@pytest.mark.kubectl
def test_demo_serve_writes_kubeconfig_that_kubectl_uses_and_stops_on_sigterm(
    tmp_path: Path,
) -> None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        if os.environ.get("KUBECTL_SPARK_REQUIRE_KUBECTL"):
            pytest.fail("kubectl is required here but not on PATH")
        pytest.skip("SKIPPING LOUDLY: no kubectl on PATH")
    config = tmp_path / "nested" / "kubeconfig.yaml"
    server = subprocess.Popen(
        [str(BIN), "demo", "--serve", "--scenario", "empty", "--kubeconfig", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not config.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert config.exists(), "the kubeconfig is written once the server accepts requests"
        assert oct(config.stat().st_mode & 0o777) == "0o600"
        env = {**os.environ, "HOME": str(tmp_path)}
        got = subprocess.run(
            [kubectl, "--kubeconfig", str(config), "get", "pods", "-A"],
            capture_output=True,
            text=True,
            timeout=30,
            env=env,
            check=False,
        )
        assert got.returncode == 0, got.stderr
        assert "No resources found" in got.stderr
        got = subprocess.run(
            [kubectl, "--kubeconfig", str(config), "get", "namespaces", "-o", "name"],
            capture_output=True,
            text=True,
            timeout=30,
            env=env,
            check=False,
        )
        assert "namespace/kube-system" in got.stdout.split()
    finally:
        server.send_signal(signal.SIGTERM)
        out, err = server.communicate(timeout=30)
    assert server.returncode == 0, err
    assert f"kubeconfig: {config}" in out
    assert out.rstrip().endswith("Embedded Kubernetes API stopped.")


def test_demo_serve_stops_on_sigint(tmp_path: Path) -> None:
    config = tmp_path / "kc.yaml"
    server = subprocess.Popen(
        [
            str(BIN),
            "demo",
            "--serve",
            "--scenario",
            "s1-node-shutdown",
            "--kubeconfig",
            str(config),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not config.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    server.send_signal(signal.SIGINT)
    out, err = server.communicate(timeout=30)
    assert server.returncode == 0, err
    assert "Traceback" not in err
    assert "stopped" in out


def test_demo_serve_on_a_busy_port_is_a_clear_error(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        proc = run("demo", "--serve", "--port", str(port), "--kubeconfig", str(tmp_path / "kc"))
    assert proc.returncode != 0
    assert proc.stderr.startswith(f"error: cannot serve on 127.0.0.1:{port}")
    assert len(proc.stderr.strip().splitlines()) == 1


def test_demo_lists_scenarios() -> None:
    proc = run("demo", "--list-scenarios")
    assert proc.returncode == 0
    names = [line.split()[0] for line in proc.stdout.splitlines()]
    assert names[0] == "empty"
    assert {"mixed", "s1-node-shutdown", "s2-partition", "s8-orphans-and-churn"} <= set(names)
    # the Apache operator's: a retry after an infrastructure failure, a force-deleted driver
    assert {"s10-apache-infra-retry", "s11-apache-force-delete"} <= set(names)
    assert "s12-spark4-deployment-executors" in names


def test_demo_no_tui_plays_a_scenario_to_its_end(tmp_path: Path) -> None:
    proc = run(
        "demo",
        "--no-tui",
        "--scenario",
        "s6-driver-restarts",
        env={**os.environ, "XDG_STATE_HOME": str(tmp_path)},
    )
    assert proc.returncode == 0, proc.stderr
    assert "Played scenario 's6-driver-restarts'" in proc.stdout
    row = next(line for line in proc.stdout.splitlines() if line.startswith("default "))
    assert row.split()[1:4] == ["restarting-driver", "Running", "1/1"]
    assert row.split()[7] == "2"  # RESTARTS: two in-place restarts
    assert "$ kubectl spark history restarting-driver -n default" in proc.stdout
    assert proc.stdout.count("ContainerRestarted") == 2


@pytest.mark.kubectl
def test_kubectl_watch_sees_a_served_scenario_unfold(tmp_path: Path) -> None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        if os.environ.get("KUBECTL_SPARK_REQUIRE_KUBECTL"):
            pytest.fail("kubectl is required here but not on PATH")
        pytest.skip("SKIPPING LOUDLY: no kubectl on PATH")
    config = tmp_path / "kc.yaml"
    server = subprocess.Popen(
        [
            str(BIN),
            "demo",
            "--serve",
            "--scenario",
            "s1-node-shutdown",
            "--speed",
            "20",
            "--kubeconfig",
            str(config),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    watch = None
    try:
        deadline = time.monotonic() + 30
        while not config.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        watch = subprocess.Popen(
            [
                kubectl,
                "--kubeconfig",
                str(config),
                "get",
                "pods",
                "-A",
                "-w",
                "--output-watch-events",
                "-o",
                "custom-columns=EVENT:.type,NAME:.object.metadata.name,PHASE:.object.status.phase",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "HOME": str(tmp_path)},
        )
        seen: list[str] = []
        assert watch.stdout is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(
            "-exec-2" in line and "Running" in line for line in seen
        ):
            seen.append(watch.stdout.readline())
        text = "".join(seen)
        assert "networkwordcount" in text and "-driver-" in text
        assert any("-exec-2" in line and "Running" in line for line in seen), text
    finally:
        if watch is not None:
            watch.kill()
            watch.communicate()
        server.send_signal(signal.SIGTERM)
        out, err = server.communicate(timeout=30)
    assert server.returncode == 0, err
    assert "Playing scenario 's1-node-shutdown'" in out
