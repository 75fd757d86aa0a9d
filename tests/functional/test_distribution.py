"""krew manifest rules, the krew archive installed like krew would, completion, the k9s plugin."""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_spark import __version__
from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent


def krew() -> Any:
    spec = importlib.util.spec_from_file_location("build_krew", ROOT / "scripts" / "build_krew.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kubectl_or_skip() -> str:
    found = shutil.which("kubectl")
    if found is None:
        if os.environ.get("KUBECTL_SPARK_REQUIRE_KUBECTL"):
            pytest.fail("kubectl is required here but not on PATH")
        pytest.skip("SKIPPING LOUDLY: no kubectl on PATH")
    return found


# ------------------------------------------------------------------------------- manifest
def test_committed_manifest_is_valid_and_matches_the_package() -> None:
    doc = yaml.safe_load((ROOT / "krew-manifest.yaml").read_text())
    assert krew().validate(doc, package_version=__version__) == []
    platforms = {
        (p["selector"]["matchLabels"]["os"], p["selector"]["matchLabels"]["arch"])
        for p in doc["spec"]["platforms"]
    }
    assert platforms == {
        ("linux", "amd64"),
        ("linux", "arm64"),
        ("darwin", "amd64"),
        ("darwin", "arm64"),
        ("windows", "amd64"),
    }


def _break(path: str, value: Any) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((ROOT / "krew-manifest.yaml").read_text())
    broken = copy.deepcopy(doc)
    cur: Any = broken
    *parents, last = path.split(".")
    for part in parents:
        cur = cur[int(part)] if part.isdigit() else cur[part]
    if value is KeyError:
        del cur[int(last) if last.isdigit() else last]
    else:
        cur[int(last) if last.isdigit() else last] = value
    return broken


@pytest.mark.parametrize(
    ("path", "value", "complaint"),
    [
        ("apiVersion", "krew.googlecontainertools.github.com/v1alpha1", "apiVersion"),
        ("kind", "Plugins", "kind"),
        ("metadata.name", "Kube-Spark", "metadata.name"),
        ("spec.version", "0.1.0", "v-prefixed"),
        ("spec.version", "v9.9.9", "does not match the package version"),
        ("spec.shortDescription", "x" * 51, "shortDescription"),
        ("spec.description", "y" * 81 + "\n", "80 columns"),
        ("spec.homepage", "http://example.com", "homepage"),
        (
            "spec.platforms.0.selector",
            {"matchLabels": {"os": "linux", "arch": "amd64", "distro": "x"}},
            "only os/arch",
        ),
        (
            "spec.platforms.1.selector",
            {"matchLabels": {"os": "linux", "arch": "amd64"}},
            "overlaps",
        ),
        ("spec.platforms.0.sha256", "ABC", "sha256"),
        ("spec.platforms.0.bin", KeyError, "bin is required"),
        ("spec.platforms.4.bin", "kubectl-spark/kubectl-spark", ".exe on windows"),
        ("spec.platforms.0.files", [{"from": "kubectl-spark/*", "to": "kubectl-spark"}], "LICENSE"),
        ("spec.platforms.0.uri", "https://example.com/x.rpm", "uri"),
    ],
)
def test_each_broken_rule_is_reported(path: str, value: Any, complaint: str) -> None:
    problems = krew().validate(_break(path, value), package_version=__version__)
    assert any(complaint in p for p in problems), problems


# ------------------------------------------------------------------------------ completion
def test_completion_scripts_match_their_golden_files() -> None:
    for shell in ("bash", "zsh", "fish"):
        out = subprocess.run(
            [str(VENV_BIN / "kubectl-spark"), "completion", shell],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert out == (ROOT / "tests" / "golden" / f"completion.{shell}").read_text(), shell
    assert (
        "kubectl-spark __complete" in (ROOT / "completions" / "kubectl_complete-spark").read_text()
    )


def test_completion_install_writes_the_kubectl_helper(tmp_path: Path) -> None:
    out = subprocess.run(
        [str(VENV_BIN / "kubectl-spark"), "completion", "install", "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    helper = tmp_path / "kubectl_complete-spark"
    assert helper.exists() and os.access(helper, os.X_OK) and str(helper) in out


@pytest.mark.kubectl
def test_kubectl_plugin_completion_through_the_real_kubectl(tmp_path: Path) -> None:
    from datetime import UTC, datetime, timedelta

    from kubectl_spark.cluster.apiserver.embedded import EmulatorOptions
    from kubectl_spark.knowledge.clock import ManualClock
    from kubectl_spark.sim import scenario as scenarios
    from kubectl_spark.sim.world import World

    kubectl = kubectl_or_skip()
    clock = ManualClock(datetime.now(UTC) - timedelta(seconds=450))
    with EmbeddedApiServer(EmulatorOptions(clock=clock)) as server:
        world = World.for_server(server, clock)
        scenarios.Player(world, scenarios.load("s2-partition")).play()
        world.close()
        config = server.write_kubeconfig(tmp_path / "kc")
        env = {
            "PATH": f"{VENV_BIN}:{ROOT / 'completions'}:/usr/bin:/bin",
            "KUBECONFIG": str(config),
            "HOME": str(tmp_path),
        }

        def complete(*words: str) -> list[str]:
            proc = subprocess.run(
                [kubectl, "__complete", "spark", *words],
                capture_output=True,
                text=True,
                env=env,
                timeout=60,
                check=True,
            )
            lines = proc.stdout.splitlines()
            assert lines[-1] == ":4", proc.stdout
            return [line.split("\t")[0] for line in lines[:-1]]

        assert {"ls", "describe", "fence", "force-kill", "logs", "demo"} <= set(complete(""))
        assert complete("l") == ["ls", "logs"]
        assert {"default", "kube-system"} <= set(complete("-n", ""))
        # an action names its attempt: "latest" is offered for reading (logs), not for acting
        assert complete("force-kill", "") == ["networkwordcount/1", "networkwordcount/2"]
        assert complete("logs", "networkwordcount/1/") == [
            "networkwordcount/1/exec-1",
            "networkwordcount/1/exec-2",
        ]
        # A flag's value is not the argument: the application is still to be completed.
        assert complete("describe", "-o", "json", "") == ["networkwordcount"]
        assert complete("ls", "--sort-by", "") == []


def test_completion_is_fast_and_light() -> None:
    code = "import sys\nfrom kubectl_spark.cli.main import main\nmain(['__complete', 'l'])\nprint([m for m in ('textual', 'kubernetes', 'aiohttp') if m in sys.modules])"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.splitlines()[-1] == "[]"


# ------------------------------------------------------------------------------------ k9s
def test_k9s_plugin_runs_only_commands_that_exist() -> None:
    import typer.main

    from kubectl_spark.cli.app import build_app

    doc = yaml.safe_load((ROOT / "completions" / "k9s-plugin.yaml").read_text())
    commands = typer.main.get_command(build_app()).commands  # type: ignore[attr-defined]
    for name, plugin in doc["plugins"].items():
        assert plugin["command"] == "kubectl" and plugin["args"][0] == "spark", name
        assert plugin["args"][1] in commands, name
        assert set(plugin["scopes"]) <= {"pods", "sparkapplications"}
        if plugin["args"][1] in ("fence", "force-kill"):
            assert plugin.get("dangerous") is True and plugin.get("confirm") is True


# --------------------------------------------------------------------- install, for real
@pytest.mark.slow
@pytest.mark.kubectl
@pytest.mark.timeout(300)  # a PyInstaller build: 90 s alone here, more beside the suite's tests
def test_krew_archive_installs_and_runs_through_kubectl(tmp_path: Path) -> None:
    kubectl = kubectl_or_skip()
    module = krew()
    dist = tmp_path / "dist"
    manifest = tmp_path / "krew-manifest.yaml"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "build_krew.py"),
            "--manifest",
            str(manifest),
            "--dist",
            str(dist),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    here = module.current_platform()
    archive = dist / module.archive_name(__version__, *here)
    doc = yaml.safe_load(manifest.read_text())
    entry = next(
        p
        for p in doc["spec"]["platforms"]
        if (p["selector"]["matchLabels"]["os"], p["selector"]["matchLabels"]["arch"]) == here
    )
    assert entry["sha256"] == module.sha256(archive)
    # what krew does: unpack into the store, link the bin into $KREW_ROOT/bin
    store = tmp_path / "krew" / "store" / "spark" / doc["spec"]["version"]
    store.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        assert "LICENSE" in names and "kubectl-spark/kubectl-spark" in names
        tar.extractall(store, filter="data")
    bin_dir = tmp_path / "krew" / "bin"
    bin_dir.mkdir()
    (bin_dir / "kubectl-spark").symlink_to(store / entry["bin"])
    with EmbeddedApiServer() as server:
        config = server.write_kubeconfig(tmp_path / "kc")
        env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "KUBECONFIG": str(config), "HOME": str(tmp_path)}
        version = subprocess.run(
            [kubectl, "spark", "version"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )
        assert version.returncode == 0, version.stderr
        assert version.stdout.strip() == f"kubectl spark v{__version__}"
        listed = subprocess.run(
            [kubectl, "spark", "ls"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )
        assert listed.returncode == 0 and "No Spark applications found" in listed.stderr, (
            listed.stderr
        )
        try:  # that first `ls` started the bundle's warm server; the next one is its answer
            assert _answered_warm([kubectl, "spark", "ls", "-v=6"], env), "no warm answer"
        finally:
            _stop_warm_servers(tmp_path / ".cache" / "kubectl-spark-warm")


def _answered_warm(command: list[str], env: dict[str, str]) -> bool:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done = subprocess.run(
            command, capture_output=True, text=True, env=env, timeout=60, check=False
        )
        assert done.returncode == 0, done.stderr
        if "served by the warm process" in done.stderr:
            return True
        time.sleep(0.5)
    return False


def _stop_warm_servers(directory: Path) -> None:
    for pidfile in directory.glob("*.pid"):
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(pidfile.read_text()), signal.SIGTERM)


def _installs_a_working_command(install: list[str], env: dict[str, str], bin_dir: Path) -> None:
    """Run one of the README's install commands, then the `kubectl-spark` it put in bin_dir."""
    subprocess.run(
        install,
        check=True,
        timeout=600,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", **env},
        capture_output=True,
    )
    out = subprocess.run(
        [str(bin_dir / "kubectl-spark"), "version"], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == f"kubectl spark v{__version__}"


@pytest.mark.slow
def test_install_from_source_into_a_clean_virtualenv(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # --no-compile: byte-compiling the dependencies' modules is half of the install's time and
    # says nothing about whether the package installs and runs.
    _installs_a_working_command(
        [str(venv / "bin" / "pip"), "install", "--quiet", "--no-compile", str(ROOT)],
        {},
        venv / "bin",
    )


@pytest.mark.slow
def test_install_with_pipx_into_a_clean_home(tmp_path: Path) -> None:
    """The README's `pipx install .`, with pipx's home and bin dir kept inside the test."""
    _installs_a_working_command(
        [str(Path(sys.executable).parent / "pipx"), "install", "--quiet", str(ROOT)],
        {
            "PIPX_HOME": str(tmp_path / "pipx-home"),
            "PIPX_BIN_DIR": str(tmp_path / "bin"),
            "PIPX_MAN_DIR": str(tmp_path / "man"),
        },
        tmp_path / "bin",
    )


@pytest.mark.slow
def test_install_with_uv_tool_into_a_clean_home(tmp_path: Path) -> None:
    """The README's `uv tool install .`, with uv's tool and cache dirs kept inside the test."""
    _installs_a_working_command(
        [str(Path(sys.executable).parent / "uv"), "tool", "install", "--quiet", str(ROOT)],
        {
            "UV_TOOL_DIR": str(tmp_path / "tools"),
            "UV_TOOL_BIN_DIR": str(tmp_path / "bin"),
            "UV_CACHE_DIR": str(tmp_path / "cache"),
            "UV_PYTHON": sys.executable,
        },
        tmp_path / "bin",
    )
