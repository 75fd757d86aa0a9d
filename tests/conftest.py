"""Fixtures shared by every tier: an emulator on 127.0.0.1, its kubeconfig, the real kubectl."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer, EmulatorOptions
from tests.beds import BACKENDS, Bed, RealBed, emulator_bed, reset, skip_or_fail_without_real
from tests.controlplane.launcher import ControlPlane

# No warm server (kubectl_spark.warm) for the suite's many commands, each with an environment
# of its own: tests/functional/test_warm.py turns it on, in a runtime directory of its own.
os.environ["KUBECTL_SPARK_WARM"] = "off"

# Tests send Ctrl-C to the commands they start, as a terminal would. A suite started by a shell
# without job control (``cmd &`` in a script, nohup) inherits SIGINT ignored (POSIX, for an
# asynchronous list), and so would every command it starts: they start with it as a terminal
# gives it. (A test that wants it ignored, as a background job has it, says so.)
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def emulator() -> Iterator[EmbeddedApiServer]:
    with EmbeddedApiServer(EmulatorOptions(bookmark_interval=0.5)) as server:
        yield server


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    """A real control plane, started once per test worker on first use (see tests/beds.py)."""
    skip_or_fail_without_real()
    with ControlPlane() as plane:
        yield plane


@pytest.fixture(params=BACKENDS)
def bed(request: pytest.FixtureRequest) -> Iterator[Bed]:
    """The emulator, then the real control plane: one test body, both backends."""
    if request.param == "emulator":
        yield from emulator_bed()
        return
    plane: ControlPlane = request.getfixturevalue("control_plane")
    real = RealBed(plane)
    try:
        yield real
    finally:
        real.close()
        reset(plane)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that asks for the emulator itself (its admin hooks, its clock) runs on it alone."""
    emulator_only = {"emulator", "cluster"}
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        callspec = getattr(item, "callspec", None)
        on_real = callspec is not None and callspec.params.get("bed") == "real"
        names = set(getattr(item, "fixturenames", ()))
        (drop if on_real and names & emulator_only else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    # Longest first (xdist's workers take the queue in order and steal from its tail): a
    # 90-second test that starts last would make the whole run wait for it.
    items.sort(key=lambda item: LONGEST.index(item.name) if item.name in LONGEST else len(LONGEST))


# The longest tests, slowest first (from --durations; the rest keep their order).
LONGEST = (
    "test_krew_archive_installs_and_runs_through_kubectl",
    "test_install_from_source_into_a_clean_virtualenv",
    "test_the_tuis_model_converges_after_a_simulated_hour_of_faults",
    "test_s1_a_lost_node_brings_attempt_2_and_a_zombie[real]",
    "test_s2b_a_blocked_job_and_the_advice_that_unblocks_it[real]",
    "test_a_fenced_zombie_driver_is_refused_by_the_api_server[real]",
    "test_hostile_text_never_crashes_and_never_reaches_the_terminal_raw",
    "test_s4_executor_losses_of_every_kind[real]",
    "test_a_readwriteoncepod_claim_blocks_attempt_2_until_attempt_1_is_killed[real]",
)


@pytest.fixture
def staged(bed: Bed, tmp_path: Path) -> Iterator[Any]:
    """Scenarios (by name or parsed) staged on ``bed``, each closed after the test."""
    from kubectl_spark.sim import scenario as scenarios
    from tests.stages import Stage

    made: list[Stage] = []

    def start(name: str | scenarios.Scenario) -> Stage:
        made.append(Stage(bed, name, tmp_path))
        return made[-1]

    yield start
    for each in made:
        each.close()


@pytest.fixture
def kubeconfig(emulator: EmbeddedApiServer, tmp_path: Path) -> Path:
    return emulator.write_kubeconfig(tmp_path / "kubeconfig")


@pytest.fixture
def api(kubeconfig: Path) -> Iterator[Any]:
    """The official Python client, configured from the written kubeconfig (no mocks)."""
    from kubernetes import config

    client = config.new_client_from_config(config_file=str(kubeconfig))
    yield client
    client.close()


class Kubectl:
    """Runs the real kubectl binary against the emulator."""

    def __init__(self, binary: str, kubeconfig: Path) -> None:
        self.binary = binary
        self.kubeconfig = kubeconfig

    def __call__(
        self, *args: str, input: str | None = None, check: bool = True, timeout: float = 30
    ) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
        env["KUBECONFIG"] = str(self.kubeconfig)
        env["HOME"] = str(self.kubeconfig.parent)  # keep kubectl's discovery cache per test
        proc = subprocess.run(
            [self.binary, *args],
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            check=False,
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}"
            )
        return proc

    def popen(self, *args: str) -> subprocess.Popen[str]:
        env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
        env["KUBECONFIG"] = str(self.kubeconfig)
        env["HOME"] = str(self.kubeconfig.parent)
        return subprocess.Popen(
            [self.binary, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )


def kubectl_binary() -> str | None:
    return shutil.which("kubectl")


@pytest.fixture
def kubectl(kubeconfig: Path) -> Kubectl:
    binary = kubectl_binary()
    if binary is None:
        if os.environ.get("KUBECTL_SPARK_REQUIRE_KUBECTL"):
            pytest.fail("kubectl is required here (KUBECTL_SPARK_REQUIRE_KUBECTL) but not on PATH")
        pytest.skip(
            "SKIPPING real-kubectl test LOUDLY: no kubectl binary on PATH (scripts/dev test installs it)"
        )
    return Kubectl(binary, kubeconfig)


class ScenarioCluster:
    """An emulator with a simulated scenario on a manual clock that ends about now (so that time
    windows such as churn read as live), and a kubeconfig for it."""

    def __init__(self, name: str, tmp: Path) -> None:
        from datetime import UTC, datetime, timedelta

        from kubectl_spark.knowledge.clock import ManualClock
        from kubectl_spark.sim import scenario as scenarios
        from kubectl_spark.sim.world import World

        loaded = scenarios.load(name)
        self.clock = ManualClock(
            datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=loaded.duration)
        )
        self.server = EmbeddedApiServer(EmulatorOptions(clock=self.clock)).start()
        self.world = World.for_server(self.server, self.clock)
        self.player = scenarios.Player(self.world, loaded)
        self.kubeconfig = self.server.write_kubeconfig(tmp / "kubeconfig")
        self.one_answer: list[str] = []  # what replay_checked found (``played``)

    def close(self) -> None:
        self.world.close()
        self.server.stop()


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Any]:
    """Start scenario clusters by name; all are stopped after the test."""
    made: list[ScenarioCluster] = []

    def start(name: str) -> ScenarioCluster:
        made.append(ScenarioCluster(name, tmp_path))
        return made[-1]

    yield start
    for c in made:
        c.close()


@pytest.fixture(scope="session")
def played(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Scenario clusters played to their end once per test run (per worker), for tests that
    only read them: ``played("mixed")``. A test that changes the cluster uses ``cluster``.

    Each is replayed step by step with the one-answer property checked at every step
    (``tests/app/replay.py``), its failures kept in ``one_answer``: one replay serves
    that property and every reader.
    """
    from tests.app.replay import replay_checked

    made: dict[str, ScenarioCluster] = {}

    def get(name: str) -> ScenarioCluster:
        if name not in made:
            c = ScenarioCluster(name, tmp_path_factory.mktemp(name))
            c.one_answer = replay_checked(c)
            made[name] = c
        return made[name]

    yield get
    for c in made.values():
        c.close()


@pytest.fixture(autouse=True)
def _own_state_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test gets its own XDG_STATE_HOME: a developer's history store never leaks in."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


# ---------------------------------------------------------------- the checkout stays as it was
# A test that writes into the working directory writes into the checkout (a fuzzed
# ``--history-db WORD`` once left SQLite files there, and they were committed). The run fails
# when files git does not ignore appeared during it. Checked once, by the controlling process.
def _untracked() -> set[str] | None:
    root = Path(__file__).resolve().parent.parent
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=all"],
            check=False,
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None  # not a git checkout (an sdist): nothing to compare
    return {line[3:] for line in done.stdout.splitlines() if line.startswith("?? ")}


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):
        session.config.stash[_BEFORE] = _untracked()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if hasattr(session.config, "workerinput"):
        return
    before = session.config.stash.get(_BEFORE, None)
    after = _untracked()
    if before is None or after is None:
        return
    left = sorted(after - before)
    if left:
        said = f"error: the tests left files in the checkout: {', '.join(left[:10])}"
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(said, red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


_BEFORE = pytest.StashKey[set[str] | None]()
