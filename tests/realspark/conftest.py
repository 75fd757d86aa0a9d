"""The real-Spark tier: one control plane a worker, a cluster (nodes, namespace) per test.

The tier runs on two workers (scripts/dev): its tests mostly wait on Spark's own timers
(heartbeats, idle timeouts, allocation batches), so two at once take about half the time of
one at a time, each worker with its control plane and its own loopback addresses
(``Addresses``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.controlplane.build import built

from .bed import REQUIRE, Addresses, Cluster, EmulatorSparkBed, SparkBed, Unavailable


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest tests first, told by the time each allows itself (its timeout mark).

    On two workers the tier ends when its last test does: a long test started last would run
    alone at the end. Only a run of this tier alone is ordered (the rest of the suite collects
    this folder too, and keeps its order).
    """
    here = Path(__file__).parent
    if all(here in item.path.parents for item in items):
        items.sort(key=_allowed_seconds, reverse=True)


def _allowed_seconds(item: pytest.Item) -> float:
    mark = item.get_closest_marker("timeout")
    return float(mark.args[0]) if mark is not None and mark.args else 0.0


@pytest.fixture(scope="session")
def spark_bed() -> Iterator[SparkBed]:
    why = "" if built() is not None else "the control plane's binaries are not built"
    bed = None
    if not why:
        try:
            bed = SparkBed(Addresses.of_this_worker())
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
    bed = EmulatorSparkBed(spark_bed.image, tmp_path, spark_bed.addresses)
    try:
        made = Cluster(bed, "spark", tmp_path / "cluster")
        try:
            yield made
        finally:
            made.close()
    finally:
        bed.close()
