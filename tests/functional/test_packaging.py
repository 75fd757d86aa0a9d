"""The shape of what we ship and of the repository's entry points."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.helpers import sent

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_wheel_has_kubectl_spark_tui_and_no_top_level_tui(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(tmp_path),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (wheel,) = tmp_path.glob("kubectl_spark-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top_level = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top_level == {"kubectl_spark"}
    assert "kubectl_spark/tui/__init__.py" in names
    assert "kubectl_spark/cluster/apiserver/server.py" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "kubectl-spark = kubectl_spark.cli.main:main" in text
    assert any(n.endswith("licenses/LICENSE") for n in names)


HEAVY = ("textual", "kubernetes", "aiohttp", "trustme", "yaml", "rich", "urllib3")


@pytest.mark.parametrize(
    ("argv", "also_forbidden"),
    [
        (["version"], ("typer", "click")),
        (["--help"], ("typer", "click")),
        (["__complete", "l"], ("typer", "click")),
    ],
)
def test_start_up_commands_import_nothing_heavy(
    argv: list[str], also_forbidden: tuple[str, ...]
) -> None:
    """Start-up is the performance issue's target (at most twice `kubectl version --client`)."""
    forbidden = HEAVY + also_forbidden
    code = (
        "import sys\n"
        "sys.argv[0] = 'kubectl-spark'\n"  # as kubectl runs it
        "from kubectl_spark.cli.main import main\n"
        f"code = main({argv!r})\n"
        f"bad = sorted(m for m in {forbidden!r} if m in sys.modules)\n"
        "print('\\nLOADED:' + ','.join(bad))\n"
        "sys.exit(code)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "COLUMNS": "120"},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "LOADED:"


def test_readme_opens_with_the_two_commands_and_ci_runs_the_test_one() -> None:
    readme = (ROOT / "README.md").read_text()
    first_block = readme.split("```")[1]
    commands = [line.split("#")[0].strip() for line in first_block.splitlines()[1:] if line.strip()]
    assert commands == ["scripts/dev demo", "scripts/dev test"]
    before = readme.split("```")[0].strip().splitlines()
    assert before == ["# kubectl spark"], "the two commands come first"
    ci = (ROOT / ".ci" / "run").read_text()
    assert "exec scripts/dev test" in ci
    dev = (ROOT / "scripts" / "dev").read_text()
    assert '"$VENV/bin/pytest"' in dev and "-m venv" in dev


def test_the_readme_stays_a_front_page() -> None:
    """Under 12 KB, however a kilobyte is counted (issue 48): details belong in docs/, the
    README points at them."""
    assert len((ROOT / "README.md").read_bytes()) < 12_000


def test_every_runtime_dependency_is_explained_in_the_readme() -> None:
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Dependencies")[1].split("\n## ")[0]
    for dep in deps:
        name = dep.split(">")[0].split("<")[0].split("=")[0].strip()
        assert f"`{name}`" in section, f"README does not say why {name} is a dependency"


def test_the_recorder_image_runs_the_console_script_the_manifests_name() -> None:
    """The Dockerfile's entrypoint is the package's console script, its default command the
    recorder's, and the manifests' arguments start the same way."""
    import tomllib
    from pathlib import Path

    from kubectl_spark.core.recorder_manifests import RecorderOptions, manifests

    root = Path(__file__).resolve().parents[2]
    docker = (root / "Dockerfile").read_text()
    scripts = tomllib.loads((root / "pyproject.toml").read_text())["project"]["scripts"]
    assert 'ENTRYPOINT ["kubectl-spark"]' in docker and "kubectl-spark" in scripts
    for copied in ("pyproject.toml", "README.md", "kubectl_spark", "tui"):
        assert (root / copied).exists()
    (deployment,) = [
        m for m in sent(manifests(RecorderOptions("ns", "img"))) if m["kind"] == "Deployment"
    ]
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert 'CMD ["record", "--in-cluster", "--leader-elect", "--all-namespaces"]' in docker
    assert args[:4] == ["record", "--in-cluster", "--leader-elect", "--all-namespaces"]
