"""The collector pause restores what it found, nested or not, errors or not."""

from __future__ import annotations

import gc

import pytest

from kubectl_spark.memory import collector_paused


def test_the_pause_restores_the_collector_it_found() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause does not end the outer one
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # one who had it off keeps it off
    finally:
        gc.enable()
