"""The contract tests run on both backends: the emulator and a real control plane."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer
from tests.beds import Bed, EmulatorBed


@pytest.fixture
def emulator(bed: Bed) -> EmbeddedApiServer:
    """Only the emulator's own tests ask for it (they are deselected on the real backend)."""
    assert isinstance(bed, EmulatorBed)
    return bed.server


@pytest.fixture
def kubeconfig(bed: Bed, tmp_path: Path) -> Path:
    return bed.write_kubeconfig(tmp_path / "kubeconfig")
