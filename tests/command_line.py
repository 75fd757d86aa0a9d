"""Commands through the real entry point (``kubectl_spark.cli.main.main``), in the test's process.

The console script runs the same ``main`` (the subprocess tests run the script itself); here
its output is captured by pytest's ``capsys``. Every answer is checked for a traceback: bad
input gets a one-line error, never a trace.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

import pytest

from kubectl_spark.cli.main import main


class HasKubeconfig(Protocol):
    """A test cluster, a played scenario: anything with a kubeconfig to read it through."""

    @property
    def kubeconfig(self) -> Path: ...


def run(
    capsys: pytest.CaptureFixture[str], where: Path | str | HasKubeconfig | None, *args: str
) -> tuple[int, str, str]:
    """``kubectl spark [--kubeconfig WHERE] ARGS``: its exit code, stdout and stderr."""
    if where is None:
        argv = list(args)
    else:
        path = where if isinstance(where, (Path, str)) else where.kubeconfig
        argv = ["--kubeconfig", str(path), *args]
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, out + err
    return code, out, err


def ls_json(capsys: pytest.CaptureFixture[str], where: HasKubeconfig, *args: str) -> dict[str, Any]:
    """``ls -A -o json ARGS``, checked to be a SparkAppList."""
    code, out, err = run(capsys, where, "ls", "-A", "-o", "json", *args)
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    assert (doc["apiVersion"], doc["kind"]) == ("kubectl-spark/v1", "SparkAppList")
    return doc


def app_named(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(a for a in doc["items"] if a["name"] == name)
