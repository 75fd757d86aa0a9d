"""Shared by the benchmarks: an emulator in its own process, filled by the generator.

The emulator runs as ``kubectl-spark demo --serve --scenario empty`` (its memory is its own);
the generator writes through the API from whichever process calls it.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kubectl_spark.sim.client import Client  # noqa: E402

BIN = Path(sys.executable).parent / "kubectl-spark"
# The environment to run the product in, as installed: pip and the krew binary keep compiled
# modules, where a shell that sets PYTHONDONTWRITEBYTECODE (this workplace's does) makes every
# run compile the client's modules again (10-15 ms of a warm command).
AS_INSTALLED = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def client_for(kubeconfig: Path) -> Client:
    doc = yaml.safe_load(kubeconfig.read_text())
    return Client(
        doc["clusters"][0]["cluster"]["server"],
        doc["users"][0]["user"]["token"],
        base64.b64decode(doc["clusters"][0]["cluster"]["certificate-authority-data"]),
    )


@contextmanager
def served() -> Iterator[Path]:
    """An empty emulator; yields its kubeconfig. Stopped on exit."""
    kubeconfig = Path(tempfile.mkdtemp()) / "kc.yaml"
    server = subprocess.Popen(
        [str(BIN), "demo", "--serve", "--scenario", "empty", "--kubeconfig", str(kubeconfig)],
        stdout=subprocess.DEVNULL,
    )
    try:
        while not kubeconfig.exists():
            if server.poll() is not None:
                raise RuntimeError("the emulator did not start")
            time.sleep(0.1)
        yield kubeconfig
    finally:
        server.terminate()
        server.wait()
