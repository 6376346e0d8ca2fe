"""Placing a queued test beside the running ones, at a cost that does not grow with the queue.

`StartQueue` holds a session's tests waiting to start, in start order, and offers the scheduler only the first
`window` of each group (a dataset; tests of one group never overlap): deciding which test starts looks at a bounded
number of tests however many are queued, so a run's cost per turn does not grow with its number of examples.
`earliest_clear_start` finds where a test's planned points all keep clear of the running tests', jumping from one
clash to the end of the stretch it rules out rather than trying every candidate start.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from dataclasses import dataclass
from typing import Callable, Generic, Iterable, Iterator, TypeVar

T = TypeVar("T")


class StartQueue(Generic[T]):
    """Queued items in start order; `group` names the group of each."""

    def __init__(self, items: Iterable[T], group: Callable[[T], str], window: int) -> None:
        self._group = group
        self._window = window
        self._items: dict[int, T] = {}  # start order -> item (insertion-ordered: iterating gives the start order)
        self._seq: dict[int, int] = {}  # id(item) -> start order (items are known by identity, as a session's are)
        self._groups: dict[str, list[int]] = {}
        for seq, item in enumerate(items):
            self._items[seq] = item
            self._seq[id(item)] = seq
            self._groups.setdefault(group(item), []).append(seq)
        for seqs in self._groups.values():
            seqs.reverse()  # the group's next at the end
        self._heads = sorted(seq for seqs in self._groups.values() for seq in seqs[-window:])

    def heads(self) -> list[T]:
        """The first `window` queued items of every group, in start order: those that may start next."""
        return [self._items[seq] for seq in self._heads]

    def start(self, item: T) -> None:
        """`item`, one of `heads()`, starts: it leaves the queue and the next of its group moves into the window."""
        seq = self._seq.get(id(item))
        seqs = self._groups.get(self._group(item), [])
        if seq is None or seq not in seqs[-self._window:]:
            raise ValueError("only a queued test in its group's window may start")
        seqs.remove(seq)
        del self._items[seq], self._seq[id(item)]
        self._heads.remove(seq)
        if len(seqs) >= self._window:
            insort(self._heads, seqs[-self._window])

    def clear(self) -> None:
        self._items, self._seq, self._groups, self._heads = {}, {}, {}, []

    def __iter__(self) -> Iterator[T]:
        return iter(list(self._items.values()))

    def __len__(self) -> int:
        return len(self._items)


@dataclass(frozen=True, slots=True)
class Around:
    """What placing a queued test needs of the running tests, gathered once per `Scheduler.pick_start`."""

    points: list[int]  # their future planned points, sorted
    longest: int  # their longest line
    reply: float  # the longest reply to allow for their groups (at least the estimated reply)
    unknown: int  # the longest answer of any group, for a group not asked yet
    filler_turn: int  # one smallest filler turn


def earliest_clear_start(points: list[int], plan: list[int], clear: int, pos: int) -> int:
    """The first start at or after `pos` where every planned point (start + each offset of `plan`, in increasing
    order as plans are) is at least `clear` from each of `points` (sorted, not empty). A start is ruled out by a point
    p and offset r exactly on the stretch (p - r - clear, p - r + clear), so from a ruled-out start the search jumps to
    the farthest end of the stretches that rule it out, looking only at the offsets that land near the points:
    O(log offsets + offsets there x log points) a jump, and the result is the smallest start that fits."""
    start = pos
    first, last = points[0], points[-1]
    while True:
        jump = start
        # only offsets with start + r + clear > first and start + r - clear < last can come too close to a point
        for k in range(bisect_right(plan, first - clear - start), bisect_left(plan, last + clear - start)):
            r = plan[k]
            i = bisect_left(points, start + r + clear) - 1  # the last point before start + r + clear
            if i >= 0 and points[i] > start + r - clear:
                jump = max(jump, points[i] - r + clear)
        if jump == start:
            return start
        start = jump
