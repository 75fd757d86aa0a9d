"""A fuzzed set of command lines: each one either works or says why in one line and exits non-zero
— no traceback, no write reaches the cluster (the emulator's audit log), and a command that
fails writes nothing in its working directory but the local store it was given
(``--history-db WORD`` names a file there)."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_spark.cli.main import main
from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer

COMMANDS = [
    "ls",
    "describe",
    "history",
    "events",
    "logs",
    "fence",
    "unfence",
    "force-kill",
    "resubmit",
    "version",
    "completion",
    "demo",
    "warm",
    "nonsense",
    "",
]
WORDS = [
    "status",
    "--recorder",
    "--history-server",
    "none",
    "kubectl-spark/kubectl-spark-recorder",
    "Bad/x",
    "-o",
    "json",
    "yaml",
    "wide",
    "name",
    "table",
    "jsonpath={.x}",
    "-l",
    "a=b",
    "a in (",
    "!!",
    "=x",
    "-n",
    "Bad_NS",
    "kube-system",
    "-A",
    "--all-namespaces",
    "--context",
    "nope",
    "--request-timeout",
    "1s",
    "-5",
    "abc",
    "--group-by",
    "",
    "app",
    "app/0",
    "app/x",
    "app/99",
    "--dry-run",
    "--dry-run=server",
    "--dry-run=maybe",
    "--yes",
    "--force",
    "--previous",
    "-c",
    "--tail",
    "-3",
    "--since",
    "1y",
    "--scenario",
    "missing",
    "--list-scenarios",
    "--speed",
    "0",
    "--port",
    "99999",
    "--history-db",
    "/nonexistent/dir/h.sqlite",
    "--no-history",
    "-h",
    "--unknown-flag",
    "bash",
    "powershell",
    "\x1b[31m",
    "[bold]x[/]",
    "--",
    "--kubeconfig",
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[EmbeddedApiServer, Path]]:
    server = EmbeddedApiServer().start()
    path = server.write_kubeconfig(tmp_path_factory.mktemp("kc") / "kubeconfig")
    yield server, path
    server.stop()


@settings(
    max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(command=st.sampled_from(COMMANDS), words=st.lists(st.sampled_from(WORDS), max_size=5))
def test_every_command_line_works_or_fails_in_one_line(
    served: tuple[EmbeddedApiServer, Path],
    capsys: pytest.CaptureFixture[str],
    command: str,
    words: list[str],
) -> None:
    server, kubeconfig = served
    argv = [w for w in [command, *words] if w != "--kubeconfig"]
    if command == "demo" and "--list-scenarios" not in argv:
        argv.append("--no-tui")
        if "--scenario" not in argv:
            argv += ["--scenario", "nonexistent"]  # a full scenario run is the demo's own test
    server.clear_audit()
    # Each example in an empty directory of its own: a relative --history-db is created there,
    # never in the checkout the tests run from.
    with tempfile.TemporaryDirectory() as workdir, contextlib.chdir(workdir):
        code = main(["--kubeconfig", str(kubeconfig), *argv])
        left = sorted(p.name for p in Path(workdir).iterdir())
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "Traceback" not in out, (argv, err)
    if code != 0:
        lines = [line for line in err.splitlines() if line.strip()]
        assert lines and lines[0].startswith("error: "), (argv, err)
        assert len(lines) <= 2 and (len(lines) == 1 or lines[1].startswith("hint: ")), (argv, err)
        # A reading command keeps what it read in the local store, even when the application
        # asked for is not there; nothing else is written.
        stores = {argv[i + 1] for i, w in enumerate(argv[:-1]) if w == "--history-db"}
        assert set(left) <= stores, (argv, f"a failed command left {left}")
    assert server.audit_writes() == [], (argv, "a write reached the cluster")
