"""Executor ids: their order, and which of them Spark could have given, read by C loops when
every id is a plain number; the same answers as one Python check per executor."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_spark.core.model import Executor, _exec_sort, in_id_order
from kubectl_spark.core.sparkview import exec_number, exec_numbers

numbers = st.integers(min_value=0, max_value=20_000_000).map(str)
odd = st.sampled_from(["?", "", "0", "007", "00000001", "1_0", " 1", "١٢", "-3", "driver"])
ids = st.one_of(numbers, odd, st.text(max_size=4))


def executor(exec_id: str, pod: str) -> Executor:
    return Executor(exec_id, pod, "", None, "Running", "Running", 0, None, None, None)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.one_of(numbers, ids), st.sampled_from(["a", "b", "c"])), max_size=30))
def test_executors_are_ordered_as_one_key_per_executor_orders_them(
    pairs: list[tuple[str, str]],
) -> None:
    executors = [executor(i, pod) for i, pod in pairs]  # equal keys: ties keep their order
    expected = tuple(sorted(executors, key=_exec_sort))
    assert [id(e) for e in in_id_order(list(executors))] == [id(e) for e in expected]


@settings(max_examples=400, deadline=None)
@given(st.sets(st.one_of(numbers, ids), max_size=30))
def test_the_ids_spark_could_have_given_are_those_one_check_per_id_finds(found: set[str]) -> None:
    assert exec_numbers(found) == {n for n in map(exec_number, found) if n}


def test_plain_numbers_take_the_fast_path_and_odd_ones_the_careful_one() -> None:
    assert exec_numbers({"1", "2", "10"}) == {1, 2, 10}
    assert exec_numbers({"0", "1"}) == {1}
    assert exec_numbers({"1", "2000000"}) == {1}  # beyond any real application
    assert exec_numbers({"1", "?"}) == {1}
    assert exec_numbers(set()) == set()
    assert [
        e.pod for e in in_id_order([executor("10", "x"), executor("9", "y"), executor("?", "z")])
    ] == [
        "y",
        "x",
        "z",
    ]
