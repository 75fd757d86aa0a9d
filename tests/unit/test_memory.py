"""The collector pause restores what it found, nested or not, errors or not."""

from __future__ import annotations

import gc
from collections.abc import Iterator

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


@pytest.fixture
def no_automatic_collections() -> Iterator[None]:
    """Where an object sits must not depend on when the test process last collected."""
    before = gc.get_threshold()
    gc.set_threshold(1_000_000)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _generation(obj: object) -> int | None:
    for generation in range(3):
        if any(o is obj for o in gc.get_objects(generation=generation)):
            return generation
    return None


@pytest.mark.parametrize(("owner_freezes", "generation"), [(False, 2), (True, 0)])
def test_what_the_pause_built_goes_straight_to_the_oldest_generation(
    monkeypatch: pytest.MonkeyPatch,
    no_automatic_collections: None,
    owner_freezes: bool,
    generation: int,
) -> None:
    """The first collection after a pause would otherwise walk all of it, to find nothing.

    Not in a process that freezes objects on purpose (the TUI): unfreezing would thaw them.
    """
    from kubectl_spark import memory

    monkeypatch.setattr(memory._Freezing, "by_owner", owner_freezes)  # a TUI test may have set it
    with collector_paused():
        held = [[i] for i in range(1000)]
    assert _generation(held) == generation
    if not owner_freezes:
        assert gc.get_count()[0] < 100  # no young generation left to walk


def test_a_cycle_made_during_the_pause_is_still_collected(no_automatic_collections: None) -> None:
    import weakref

    class Node:
        other: object = None

    with collector_paused():
        a, b = Node(), Node()
        a.other, b.other = b, a
        alive = weakref.ref(a)
        del a, b
    assert alive() is not None  # a cycle: only a collection frees it
    gc.collect()
    assert alive() is None


def test_pauses_in_two_threads_nest_as_one(
    monkeypatch: pytest.MonkeyPatch, no_automatic_collections: None
) -> None:
    """The collector is one per process; pauses come from several threads (the TUI's watches and
    its analysis, or a watch thread still retrying after its test). A pause that began while
    another held the collector still sends what it built to the oldest generation, and the
    collector runs again only when the last pause ends, in whichever thread."""
    import threading

    from kubectl_spark import memory

    monkeypatch.setattr(memory._Freezing, "by_owner", False)
    entered, release, left = threading.Event(), threading.Event(), threading.Event()

    def other() -> None:
        with collector_paused():
            entered.set()
            release.wait(10)
        left.set()

    worker = threading.Thread(target=other)
    worker.start()
    assert entered.wait(10)
    try:
        with collector_paused():
            held = [[i] for i in range(1000)]
        assert _generation(held) == 2, "built under another thread's pause: still moved"
        assert not gc.isenabled(), "the other thread's pause still holds"
        with collector_paused():
            release.set()
            assert left.wait(10)
            assert not gc.isenabled(), "the other pause ended first: this one still holds"
    finally:
        release.set()
        worker.join(10)
    assert gc.isenabled()
