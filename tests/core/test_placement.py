"""Placing a queued test: the start window of each dataset and the search for the first clear start."""

from __future__ import annotations

import random

import pytest

from ltm_harness._engine.placement import StartQueue, earliest_clear_start


def _brute_force(points: list[int], plan: list[int], clear: int, pos: int) -> int:
    """The first start from `pos` on where no planned point comes closer than `clear` to a running point."""
    start = pos
    while any(abs(start + r - p) < clear for r in plan for p in points):
        start += 1
    return start


def test_the_first_clear_start_is_the_smallest_start_that_fits():
    rng = random.Random(3)
    for _ in range(400):
        points = sorted(rng.sample(range(0, 3000), rng.randint(1, 8)))
        plan = sorted({0, *rng.sample(range(1, 1500), rng.randint(0, 4))})
        clear, pos = rng.randint(0, 300), rng.randint(0, 2000)
        assert earliest_clear_start(points, plan, clear, pos) == _brute_force(points, plan, clear, pos)


def test_a_start_exactly_clear_either_side_fits_and_one_token_closer_does_not():
    assert earliest_clear_start([1000], [0, 500], 100, 400) == 400  # its second line exactly clear before 1000
    assert earliest_clear_start([1000], [0, 500], 100, 401) == 600  # one closer: just clear after, by its 2nd line
    assert earliest_clear_start([1000, 1150], [0], 100, 950) == 1250  # past a point, then the next one it meets


class Test:
    __test__ = False

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


def _queue(names: list[str], window: int) -> tuple[StartQueue[Test], dict[str, Test]]:
    tests = {name: Test(name) for name in names}
    return StartQueue(tests.values(), lambda test: test.name.split("/")[0], window), tests


def _names(tests: object) -> list[str]:
    return [t.name for t in tests]  # type: ignore[attr-defined]


def test_each_dataset_offers_its_first_tests_in_start_order():
    q, t = _queue(["a/0", "b/0", "a/1", "b/1", "a/2", "c/0", "a/3"], window=2)
    assert _names(q.heads()) == ["a/0", "b/0", "a/1", "b/1", "c/0"]
    q.start(t["a/1"])  # a test may start before an earlier one of its dataset: a/2 moves into the window
    assert _names(q.heads()) == ["a/0", "b/0", "b/1", "a/2", "c/0"]
    q.start(t["a/0"])
    assert _names(q.heads()) == ["b/0", "b/1", "a/2", "c/0", "a/3"]
    assert _names(q) == ["b/0", "b/1", "a/2", "c/0", "a/3"] and len(q) == 5  # the rest, in start order
    q.clear()
    assert q.heads() == [] and list(q) == [] and len(q) == 0
    with pytest.raises(ValueError):
        q.start(t["b/0"])  # cleared: nothing may start


def test_a_test_outside_its_datasets_window_may_not_start():
    q, t = _queue(["a/0", "a/1", "a/2"], window=2)
    with pytest.raises(ValueError):
        q.start(t["a/2"])
    with pytest.raises(ValueError):
        q.start(Test("a/0"))  # not one of the queue's (known by identity)
    with pytest.raises(ValueError):
        q.start(Test("z/0"))
    q.start(t["a/0"])
    with pytest.raises(ValueError):
        q.start(t["a/0"])  # started already
    q.start(t["a/2"])
    assert _names(q.heads()) == ["a/1"]
