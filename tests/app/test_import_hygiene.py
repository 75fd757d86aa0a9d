"""What each entry point loads, in a fresh interpreter (as harlequin's import-hygiene test).

The core loads no UI and no client library; ``kubectl spark ls``, run for real, loads neither
textual nor rich (its start-up time and its independence from the TUI); the TUI loads no typer.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HEAVY = ("textual", "rich", "typer", "kubernetes", "aiohttp")


def loaded_after(code: str) -> set[str]:
    script = f"{code}\nimport sys, json\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1])) & set(HEAVY)


def test_the_core_loads_no_ui_and_no_client() -> None:
    assert (
        loaded_after(
            "import kubectl_spark.core.analyze, kubectl_spark.core.plans, kubectl_spark.core.incremental"
        )
        == set()
    )


def test_ls_loads_neither_textual_nor_rich(kubeconfig: Path) -> None:
    found = loaded_after(
        "from kubectl_spark.cli.main import main\n"
        f"assert main(['--kubeconfig', {str(kubeconfig)!r}, 'ls', '-A']) == 0"
    )
    assert "typer" in found  # it did run the command
    assert not found & {"textual", "rich"}, found


def test_the_tui_loads_no_typer() -> None:
    found = loaded_after("import kubectl_spark.tui.app, kubectl_spark.tui.sources")
    assert "textual" in found and "typer" not in found, found


def modules_after(code: str, env: dict[str, str] | None = None) -> list[str]:
    import os

    script = f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={**os.environ, **(env or {})},
    )
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


# What ``ls`` must not load (issue 26): the client library's API classes and models (about 800
# modules; it reads answers raw), its watch/stream/dynamic/leader-election packages, the
# other commands' modules, pydantic (typer 0.29's), the TUI.
NOT_FOR_LS = (
    "kubernetes.client.api.",
    "kubernetes.client.models.",
    "kubernetes.watch",
    "kubernetes.stream",
    "kubernetes.dynamic",
    "kubernetes.leaderelection",
    "kubernetes.informer",
    "kubectl_spark.cli.commands.describe",
    "kubectl_spark.cli.commands.demo",
    "kubectl_spark.cli.commands.fence",
    "kubectl_spark.app.act",
    "kubectl_spark.sim",
    "kubectl_spark.cluster",
    "pydantic",
    "textual",
    "rich",
)


def test_ls_loads_only_what_it_uses(kubeconfig: Path) -> None:
    loaded = modules_after(
        "from kubectl_spark.cli.main import main\n"
        f"assert main(['--kubeconfig', {str(kubeconfig)!r}, 'ls', '-A']) == 0"
    )
    assert "kubernetes.config.kube_config" in loaded  # it did authenticate with the library
    assert "kubectl_spark.cli.commands.ls" in loaded
    wrong = [m for m in loaded if m.startswith(NOT_FOR_LS)]
    assert wrong == [], wrong[:20]


def test_the_fast_paths_change_no_answer(played: Any) -> None:
    """The same requests read, the same analysis made: every command's output is the same
    with the library's full import and the whole command tree (``EAGER``)."""
    import os

    from kubectl_spark.kube.lazy_kubernetes import EAGER

    kubeconfig = played("mixed").kubeconfig
    bin_dir = Path(sys.executable).parent
    for args in (
        ["ls", "-A", "-o", "json"],
        ["ls", "-A"],
        ["describe", "pi", "-n", "spark-dev"],
        ["history", "pi", "-n", "spark-dev", "-o", "json"],
        ["events", "pi", "-n", "spark-dev"],
    ):
        outputs = []
        for extra in ({}, {EAGER: "1"}):
            done = subprocess.run(
                [str(bin_dir / "kubectl-spark"), "--kubeconfig", str(kubeconfig), *args],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
                env={**os.environ, **extra},
            )
            assert done.returncode == 0, done.stderr
            outputs.append(done.stdout)
        assert outputs[0] == outputs[1], args
    eager = modules_after("import kubectl_spark.kube.client", {EAGER: "1"})
    assert any(m.startswith("kubernetes.client.models.") for m in eager)  # it is the full import


def test_a_cold_reading_command_ends_without_freeing_its_view(kubeconfig: Path) -> None:
    """As the warm worker ends: the view held, the process ended at once (0.14 s at 50,000
    pods, freeing a million objects after the output was written); other commands end as
    Python ends."""
    import os

    ending = (
        "import os, sys\n"
        "from kubectl_spark import memory\n"
        "real = memory.end_without_freeing\n"
        "def told(code):\n"
        "    sys.stderr.write(f'ended without freeing: {code}\\n')\n"
        "    real(code)\n"
        "memory.end_without_freeing = told\n"
        "from kubectl_spark.cli.main import main\n"
        "sys.argv = ['kubectl-spark', *sys.argv[1:]]\n"
        "code = main()\n"
        "sys.stderr.write(f'returned: {code}\\n')\n"
    )
    env = {**os.environ, "KUBECTL_SPARK_WARM": "off", "KUBECONFIG": str(kubeconfig)}

    def cold(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", ending, *argv],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            check=False,
        )

    ls = cold("ls", "-A")
    assert ls.returncode == 0, ls.stderr
    assert "ended without freeing: 0" in ls.stderr
    assert "returned" not in ls.stderr
    version = cold("version")
    assert version.stdout.startswith("kubectl spark v")
    assert "returned: 0" in version.stderr and "ended" not in version.stderr
