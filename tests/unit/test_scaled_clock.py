"""The demo's clock catches up with the wall clock without a jump (issue 21)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from kubectl_spark.knowledge.clock import ScaledClock


@pytest.mark.parametrize(("speed", "lead"), [(10.0, 660.0), (30.0, 450.0), (2.0, 60.0)])
def test_the_clock_never_jumps_and_meets_the_wall_clock(speed: float, lead: float) -> None:
    real = [1000.0]
    clock = ScaledClock(speed, lead=lead, real=lambda: real[0])
    wall0 = clock.now() + timedelta(seconds=lead)  # it starts ``lead`` before the wall clock
    before = clock.now()
    step = 0.05
    meets = lead / (speed - 1)
    while real[0] - 1000.0 < meets * 2:
        real[0] += step
        now = clock.now()
        gained = (now - before).total_seconds()
        # Never more than ``speed`` simulated seconds per real second: no jump anywhere.
        assert gained <= speed * step + 1e-6, (real[0] - 1000.0, gained)
        before = now
        wall = wall0 + timedelta(seconds=real[0] - 1000.0)
        assert now <= wall + timedelta(microseconds=1)  # never in the future
    assert abs((clock.now() - (wall0 + timedelta(seconds=real[0] - 1000.0))).total_seconds()) < 1e-3
