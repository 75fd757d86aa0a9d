"""The warm process (kubectl_spark.warm): the same answers as a cold start, faster.

Run through the installed console script, as people run it: the first reading command starts
a server, later ones are handed to it. The suite runs with ``KUBECTL_SPARK_WARM=off``
(tests/conftest.py); these tests turn it on with a runtime directory of their own and stop
their servers after.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from kubectl_spark.errors import UsageError
from kubectl_spark.warm import ENV, client, place
from tests.stages import Stage
from tests.warm_server import BIN, Warm, alive, hanging, read_message, warm_server

AGE = re.compile(r"\b\d+[smhd](\d+[smh])?\b")
SPACES = re.compile(r" +")


@pytest.fixture
def warm_on(tmp_path: Path, kubeconfig: Path) -> Iterator[Warm]:
    yield from warm_server(tmp_path, kubeconfig)


@contextmanager
def _kept_alive(s: Stage) -> Iterator[None]:
    """On the real control plane the simulated kubelets keep posting their nodes' status while
    the commands run (its node controller marks a node silent for 6 s unreachable)."""
    if s.kind != "real":
        yield
        return
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(0.5):
            s.world.tick()

    beating = threading.Thread(target=beat, daemon=True)
    beating.start()
    try:
        yield
    finally:
        stop.set()
        beating.join(timeout=10)


def _masked(text: str) -> str:
    """Ages (a second may pass between the two runs) and the column widths they set."""
    return SPACES.sub(" ", AGE.sub("AGE", text))


@pytest.mark.slow
def test_every_reading_command_answers_the_same_warm_and_cold(staged: Any, tmp_path: Path) -> None:
    """Issue 26: the warm path reads the same requests and makes the same analysis."""
    s: Stage = staged("s9-deleted-executors")
    s.do("submit", "vanishing")
    s.until("four executors running", lambda: len(s.running(spark_role="executor")) == 4)
    s.do("oom_kill", {"app": "vanishing", "exec": 1})
    s.until("the OOM-killed executor deleted by Spark", lambda: s.executor_gone("vanishing", "1"))
    s.until("its replacement running", lambda: len(s.running(spark_role="executor")) == 4)
    ns = s.scenario.apps["vanishing"].namespace
    with contextmanager(warm_server)(tmp_path, s.kubeconfig) as warm, _kept_alive(s):
        warm.started()
        commands = [
            ("ls", "-A"),
            ("ls", "-A", "-o", "json"),
            ("ls", "-n", ns, "-o", "wide"),
            ("describe", "vanishing", "-n", ns),
            ("describe", "vanishing", "-n", ns, "-o", "json"),
            ("history", "vanishing", "-n", ns),
            ("history", "vanishing", "-n", ns, "-o", "json"),
            ("events", "vanishing", "-n", ns),
            ("doctor", "vanishing", "-n", ns),
            ("describe", "no-such-app", "-n", ns),  # an error: the same line, the same code
        ]
        for args in [*commands, ("ls", "--no-such-flag")]:  # that one sends no request
            assert args[-1] == "--no-such-flag" or warm.served_warm(*args), args
            hot, cold = warm.spark(*args), warm.spark(*args, warm=False)
            assert hot.returncode == cold.returncode, (args, hot.stderr, cold.stderr)
            assert _masked(hot.stdout) == _masked(cold.stdout), args
            assert hot.stderr == cold.stderr, args
        assert json.loads(warm.spark("ls", "-A", "-o", "json").stdout)["items"]


def test_the_client_s_environment_is_the_one_that_counts(warm_on: Warm, tmp_path: Path) -> None:
    """A server started with one kubeconfig and namespace answers for another's."""
    warm_on.started()
    other = tmp_path / "other-kubeconfig"
    other.write_text(Path(warm_on.env["KUBECONFIG"]).read_text().replace("127.0.0.1", "127.0.0.9"))
    env = {"KUBECONFIG": str(other), "COLUMNS": "60", "NO_COLOR": "1", "TZ": "Asia/Tokyo"}
    hot = warm_on.spark("ls", "-A", env=env)
    cold = warm_on.spark("ls", "-A", env=env, warm=False)
    assert hot.returncode == cold.returncode != 0
    assert hot.stderr == cold.stderr and "connection refused" in hot.stderr
    assert warm_on.served_warm("ls", "-A")


def test_a_changed_install_is_another_server(warm_on: Warm) -> None:
    """A request whose identity is not the server's is refused before anything runs: the
    client runs the command itself (an upgrade between two commands, a checksum collision)."""
    warm_on.started()
    path = next(warm_on.servers.glob("*.sock"))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    place.reach(sock, str(path))
    with sock:
        data = client.request("not this install")
        sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, bytes(12))])
        assert read_message(sock) == (client.REFUSED, client.OTHER_INSTALL)


def test_the_identity_changes_with_any_file_of_the_package(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    module = package / "sub" / "m.py"
    module.write_text("x = 1\n")
    before = place._newest(str(package))
    os.utime(module, (time.time() + 5, time.time() + 5))
    assert place._newest(str(package)) != before
    (package / "n.py").write_text("")
    assert place._newest(str(package))[0] == 2


@pytest.mark.parametrize("how", ["warm", "cold", "after-a-background-server"])
def test_ctrl_c_reaches_the_command_and_the_exit_code_comes_back(
    warm_on: Warm, tmp_path: Path, how: str
) -> None:
    """A request that hangs (a server that never answers TLS) ends with 130 on Ctrl-C, as
    kubectl's does; warm, the worker gets the signal and its code comes back. A server started
    by a background job (SIGINT ignored, as a shell starts one) still lets Ctrl-C through: its
    worker takes the client's dispositions, not its own (issue 49)."""
    if how == "after-a-background-server":
        first = subprocess.run(
            [str(BIN), "ls", "-A"],
            env=warm_on.env,
            capture_output=True,
            timeout=60,
            check=False,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        )
        assert first.returncode == 0
        warm_on.wait_for_server()
    elif how == "warm":
        warm_on.started()
    with hanging(warm_on, tmp_path, cold=how == "cold") as (proc, worker):
        assert (worker != proc.pid) is (how != "cold")
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        proc.wait(timeout=20)
        # "within a second" (issue 49): measured 0.01 s warm and 0.2 s cold with a full test
        # run beside it; without the fix the worker ignored SIGINT and the command ran on to
        # its connect timeout (10 s).
        assert time.monotonic() - sent < 1.0
        assert proc.returncode == 130
        deadline = time.monotonic() + 10
        while alive(worker):
            assert time.monotonic() < deadline, "the warm worker outlived Ctrl-C"
            time.sleep(0.05)


def test_a_closed_pipe_and_a_removed_directory_end_as_they_would_cold(warm_on: Warm) -> None:
    warm_on.started()
    head = subprocess.run(
        f"{BIN} ls -A -o json | head -c 10",
        shell=True,  # a fixed pipeline of this test's own
        env=warm_on.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert head.returncode == 0 and len(head.stdout) == 10 and not head.stderr
    gone = warm_on.run.parent / "gone"
    gone.mkdir()
    removed = subprocess.run(
        f"cd {gone} && rmdir {gone} && {BIN} ls -A -o json",
        shell=True,  # a working directory removed under the shell: the client runs it itself
        env=warm_on.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert removed.returncode == 0 and json.loads(removed.stdout)["items"] == [], removed.stderr


@pytest.mark.parametrize(
    ("args", "warm"),
    [
        (["ls", "-A"], True),
        (["-n", "x", "describe", "app"], True),
        (["history", "app", "-o", "json"], True),
        (["logs", "app"], True),
        (["ls", "-w"], False),
        (["ls", "-Aw"], False),
        (["ls", "--watch-only"], False),
        (["logs", "app", "-f"], False),
        (["logs", "app", "--follow=true"], False),
        (["tui"], False),
        (["fence", "app"], False),
        (["force-kill", "app"], False),
        (["version"], False),
        (["__warm-serve"], False),
        (["__complete", "ls", ""], False),
        (["ls", "--", "-w"], True),
        (["resubmit", "ls"], False),
        (["-n", "ls", "force-kill", "app/1"], False),
        (["describe", "tui"], False),
    ],
)
def test_only_one_shot_reading_commands_go_warm(args: list[str], warm: bool) -> None:
    assert client.eligible(args) is warm


def test_the_warm_client_reads_the_table_the_cli_registers_from() -> None:
    """One table: a command added to the CLI is known to the warm client, warm or not."""
    import typer.main

    from kubectl_spark.cli.app import build_app
    from kubectl_spark.command_table import NAMES, WARM_COMMANDS

    registered = set(getattr(typer.main.get_command(build_app()), "commands", {}))
    assert registered == NAMES
    assert WARM_COMMANDS < NAMES
    for name in NAMES - WARM_COMMANDS:  # an action or a live command, anywhere on the line
        assert not client.eligible(["ls", name])


def test_off_and_the_eager_switch_keep_it_cold(monkeypatch: pytest.MonkeyPatch) -> None:
    from kubectl_spark import warm
    from kubectl_spark.kube import lazy_kubernetes

    assert warm.EAGER == lazy_kubernetes.EAGER
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.delenv(warm.EAGER, raising=False)
    assert client.enabled()
    for value in ("off", "OFF", " off "):
        monkeypatch.setenv(ENV, value)
        assert not client.enabled()
    for value in ("0", "false", "bogus", "of"):  # a typo never means "on" (issue 49)
        monkeypatch.setenv(ENV, value)
        with pytest.raises(UsageError, match="must be on or off"):
            client.enabled()
    monkeypatch.setenv(ENV, "on")
    monkeypatch.setenv(warm.EAGER, "1")
    assert not client.enabled()


# Read at import by a preloaded module and not by the plugin's answer: kube_config's default
# kubeconfig path (the plugin resolves the kubeconfig itself and hands over its contents).
NOT_USED_AT_IMPORT = {"KUBECONFIG"}
MODULE_LEVEL_ENV = re.compile(r"^\S.*(?:environ|getenv)\b.*$", re.MULTILINE)
NAME = re.compile(r"""["']([A-Z_][A-Z0-9_]*)["']""")


def test_what_the_server_imports_reads_no_variable_it_does_not_key_on() -> None:
    """A variable read when a module is imported is read once, by the server: a client with
    another value would get the server's. Each such variable of the preloaded modules (a line
    at module level naming ``environ`` or ``getenv``) is in the server's identity."""
    from kubectl_spark.warm import IMPORT_TIME_ENV

    script = (
        "import importlib, json, sys\n"
        "from kubectl_spark.warm.server import PRELOAD\n"
        "for name in PRELOAD: importlib.import_module(name)\n"
        "print(json.dumps(sorted({getattr(m, '__file__', None) or '' for m in list(sys.modules.values())})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    files = [f for f in json.loads(done.stdout) if f.endswith(".py")]
    assert any(f.endswith("kube_config.py") for f in files)
    assert not [f for f in files if "/rich/" in f or "/textual/" in f]
    read: dict[str, set[str]] = {}
    for file in files:
        if "/python3." in file and "-packages" not in file:
            continue  # the standard library: read at runtime, or Python's own start-up
        for line in MODULE_LEVEL_ENV.findall(Path(file).read_text(errors="replace")):
            if line.lstrip().startswith(("#", "def ", "class ", "from ", "import ")):
                continue
            for name in NAME.findall(line):
                read.setdefault(name, set()).add(file)
    unkeyed = {k: v for k, v in read.items() if k not in set(IMPORT_TIME_ENV) | NOT_USED_AT_IMPORT}
    assert not unkeyed, unkeyed
    assert "TYPER_USE_RICH" in read  # the scan does find what it looks for


def test_a_stopped_server_is_waited_for_briefly_and_the_command_runs_once(warm_on: Warm) -> None:
    """A server that does not hand over in time (stopped here with SIGSTOP): the client runs
    the command itself, and the worker started later, on a closed connection, runs nothing."""
    warm_on.started()
    (server,) = warm_on.pids()
    out = warm_on.run.parent / "out.json"
    os.kill(server, signal.SIGSTOP)
    try:
        with out.open("w") as sink:
            proc = subprocess.Popen(
                [str(BIN), "ls", "-A", "-o", "json"], env=warm_on.env, stdout=sink, stderr=sink
            )
            assert proc.wait(timeout=60) == 0
    finally:
        os.kill(server, signal.SIGCONT)
    time.sleep(2.0)  # the late worker: it finds the client gone and exits
    assert json.loads(out.read_text())["items"] == []  # one answer, not two
    assert warm_on.served_warm("ls", "-A")


# All a warm client imports beyond the interpreter's start: its budget is a few milliseconds.
CLIENT_MODULES = {
    "__future__",
    "_signal",
    "_socket",
    "marshal",
    "zlib",
    "kubectl_spark",
    "kubectl_spark.cli",
    "kubectl_spark.cli.main",
    "kubectl_spark.command_table",  # plain tuples: the commands, once
    "kubectl_spark.errors",
    "kubectl_spark.warm",
    "kubectl_spark.warm.client",
    "kubectl_spark.warm.place",
}


def test_a_warm_client_imports_next_to_nothing(warm_on: Warm) -> None:
    warm_on.started()
    script = (
        "import os, sys, json\n"
        "sys.argv = ['kubectl-spark', 'ls', '-A', '-v=6']\n"
        "before = set(sys.modules)\n"
        "from kubectl_spark.cli.main import main\n"
        "code = main()\n"
        "print(json.dumps([code, sorted(set(sys.modules) - before), os.getpid()]), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=warm_on.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    code, loaded, client = json.loads(done.stderr.strip().splitlines()[-1])
    # The worker names the process it answers for: the client's pid, carried in its connection.
    assert f"served by the warm process for process {client}" in done.stderr, done.stderr
    assert code == 0
    assert set(loaded) <= CLIENT_MODULES, set(loaded) - CLIENT_MODULES
