"""The real-Spark tier: one control plane for the tier, a cluster (nodes, namespace) per test."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.controlplane.build import built

from .bed import REQUIRE, Cluster, EmulatorSparkBed, SparkBed, Unavailable


@pytest.fixture(scope="session")
def spark_bed() -> Iterator[SparkBed]:
    why = "" if built() is not None else "the control plane's binaries are not built"
    bed = None
    if not why:
        try:
            bed = SparkBed()
        except Unavailable as err:
            why = str(err)
    if bed is None:
        if os.environ.get(REQUIRE):
            pytest.fail(f"the real-Spark tier cannot run here: {why}")
        pytest.skip(why)
    try:
        yield bed
    finally:
        bed.close()


@pytest.fixture
def cluster(
    spark_bed: SparkBed, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Cluster]:
    namespace = re.sub(r"[^a-z0-9-]", "-", request.node.name.lower())[:50].strip("-")
    made = Cluster(spark_bed, namespace, tmp_path)
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def emulated(
    spark_bed: SparkBed, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Cluster]:
    """A cluster on the project's emulator (with the tier's Spark and Java; one per test)."""
    bed = EmulatorSparkBed(spark_bed.image, tmp_path)
    try:
        made = Cluster(bed, "spark", tmp_path / "cluster")
        try:
            yield made
        finally:
            made.close()
    finally:
        bed.close()
