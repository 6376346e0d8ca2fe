"""Planning one conversation over numbers: who speaks next, how much filler, when the clock jumps.

The scheduler sees tests only as numbers (their lines' token counts, their waits, their memory span) and the
conversation only as a token position, a turn count and a virtual clock. It does no I/O, calls no agent and
counts no tokens, so every rule can be tested with numbers alone. The session asks it what to do and tells it
what happened; the rules, in the order the session applies them:

1. tests whose waits are over are resumed; a ready line is said, the earliest planned first (reset messages
   last, and only when they fit before the next wake-up point);
2. else a queued test is started if it is compatible with the running ones, the conversation's token load allows
   it, and none of its planned wake-up points would come so close to a running test's that one line would delay
   the other (else filler moves the conversation to where it fits);
3. else, when a test has enough tokens but waits on time, the virtual clock jumps (while a test is due but for
   the clock, no reset or new test is said before it);
4. else filler sized to reach the nearest wake-up point is sent: aimed with the shortest recent reply, or, where
   recent replies vary more than the wait's landing band (8% of its gap), sized after each reply to the length
   most likely to land the wait inside that band (a message that may fall short, followed by a smaller one, can
   beat one whose landing spreads over the whole range of reply lengths).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Callable, Iterable, Literal

from ltm_harness._engine.clock import VirtualClock
from ltm_harness._engine.filler_landing import landing_filler

MAX_LOAD = 0.5  # at most this share of a span may be taken by the running tests' own lines and replies
Asks = Literal["say", "reset", "wait", "turn", "none"]


@dataclass(frozen=True, slots=True)
class Pause:
    """What must pass after a line before the test's next one: tokens and virtual seconds since the line,
    a percentage of the span since the test started, and a time the clock must have reached (`until`: a dated
    history's next session)."""

    tokens: int = 0
    time: float = 0.0
    percentage: float = 0.0
    until: datetime | None = None


@dataclass(frozen=True, slots=True)
class TestShape:
    """A test as the scheduler plans it."""

    __test__ = False

    id: str
    group: str  # tests of one group never overlap; incompatibilities are between groups (dataset names)
    span: int
    line_tokens: tuple[int, ...]  # tokens of each planned line, in order
    pauses: tuple[Pause, ...]  # after each line
    interleave: bool = True  # may run beside other tests
    anchor_line: int | None = None  # the line holding the answer: later waits are measured from where it was said
    observed: tuple[bool, ...] = ()  # lines of history that need no reply (planned without one); () for none


@dataclass(slots=True)
class SaidLine:
    """A test's line as it was said: where, when, and the offset from the test's start its waits asked for."""

    pos: int
    planned: int
    tokens: int
    time: datetime
    reply_tokens: int = 0


@dataclass(eq=False, slots=True)
class Slot:
    """A running test: its plan, the lines it said, and what it asks for now."""

    shape: TestShape
    start_pos: int
    plan_abs: list[int]  # planned conversation position of each line
    lines: list[SaidLine] = field(default_factory=list)
    plan_cursor: int = 0
    wake_pos: int = 0
    wake_time: datetime | None = None
    asks: Asks = "none"
    say_tokens: int = 0  # tokens of the line it asks to say
    ready_seq: int = 0

    def next_point(self) -> int | None:
        """Where this test plans to speak next (None when it has no more planned lines)."""
        k = len(self.lines)
        if k >= len(self.plan_abs):
            return None
        if self.asks == "wait":
            return max(self.wake_pos, self.plan_abs[k])
        return self.plan_abs[k]

    def future_points(self) -> list[int]:
        nxt = self.next_point()
        return [] if nxt is None else [nxt, *self.plan_abs[len(self.lines) + 1:]]


def same_group(a: str, b: str) -> bool:
    return a == b


class Scheduler:
    """The plan of one conversation. `filler_min_tokens` is the smallest filler message (None: no filler)."""

    def __init__(self, start_time: datetime, seconds_per_turn: float, *, isolated: bool = False,
                 incompatible: Callable[[str, str], bool] = same_group, filler_min_tokens: int | None = None) -> None:
        self.clock = VirtualClock(start_time, seconds_per_turn)
        self.isolated = isolated
        self._incompatible_groups = incompatible
        self.filler_min_tokens = filler_min_tokens
        self.pos = 0  # conversation tokens so far
        self.turns = 0
        self.running: list[Slot] = []
        self._seq = 0
        self._reply_est = 16.0
        self._filler_replies: deque[int] = deque(maxlen=20)  # recent filler reply sizes
        self._answer_replies: dict[str, int] = {}  # longest reply to a question so far, per group
        self._n_test_replies = 0
        self._plans: dict[str, list[int]] = {}
        self._loads: dict[str, float] = {}
        self._incompatibility: dict[tuple[str, str], bool] = {}
        self._blocked_until: dict[str, int] = {}  # queued test -> earliest start position, for this set of running tests
        self._start_at: float = math.inf

    @property
    def now(self) -> datetime:
        return self.clock.now

    # -- what the running tests ask for --------------------------------------------------------------
    def asks_to_say(self, slot: Slot, tokens: int, reset: bool = False) -> None:
        slot.asks, slot.say_tokens = ("reset" if reset else "say"), tokens
        self._seq += 1
        slot.ready_seq = self._seq

    def asks_to_wait(self, slot: Slot, pause: Pause) -> None:
        last = slot.lines[-1] if slot.lines else None
        base_pos = last.pos if last else self.pos
        base_time = last.time if last else self.now
        base_plan = last.planned if last else 0
        pct_offset = math.ceil(pause.percentage * slot.shape.span / 100)
        slot.plan_cursor = max(slot.plan_cursor, base_plan + pause.tokens, pct_offset)
        # Where the plan puts the next line, measured from a line that was actually said: the answer
        # statement once it has been said (so each question's gap misses its target only by that
        # question's own lateness), else the test's last line (a late line does not squeeze the next
        # gap). Lines are never early, so this is never before `percentage` of the span.
        anchor = last
        anchor_line = slot.shape.anchor_line
        if anchor_line is not None and anchor_line < len(slot.lines):
            anchor = slot.lines[anchor_line]
        planned_from_anchor = anchor.pos + slot.plan_cursor - anchor.planned if anchor else 0
        slot.wake_pos = max(base_pos + pause.tokens, slot.start_pos + pct_offset, planned_from_anchor)
        slot.wake_time = base_time + timedelta(seconds=pause.time) if pause.time else None
        if pause.until is not None and (slot.wake_time is None or pause.until > slot.wake_time):
            slot.wake_time = pause.until
        slot.asks = "wait"

    def wait_met(self, slot: Slot) -> bool:
        time_met = slot.wake_time is None or self.now >= slot.wake_time
        if self.isolated:
            return time_met
        return self.pos >= slot.wake_pos and time_met

    # -- who speaks ----------------------------------------------------------------------------------
    def next_speaker(self) -> Slot | None:
        """The ready test line planned earliest; a reset message only if nothing else is ready and it fits."""
        lines: list[Slot] = []
        resets: list[Slot] = []
        for s in self.running:
            if s.asks == "say":
                lines.append(s)
            elif s.asks == "reset":
                resets.append(s)
        if lines:
            def planned(s: Slot) -> int:
                point = s.next_point()
                return self.pos if point is None else point

            return min(lines, key=lambda s: (planned(s), s.ready_seq))
        # A reset fits where it leaves no room before the next wake-up point, or room for the smallest filler
        # turn: a gap of a few tokens left after it could only be closed by filler that overshoots the point.
        smallest_filler = (self.filler_min_tokens or 0) + min(self._filler_replies, default=0)
        for s in sorted(resets, key=lambda s: s.ready_seq):
            left = self._headroom() - (s.say_tokens + self._reply_est)
            if left >= smallest_filler or 0 <= left < 1:
                return s
        return None

    # -- starting tests ----------------------------------------------------------------------------
    def plan(self, shape: TestShape) -> list[int]:
        """Planned offset of each line from the test's start, from its waits and line sizes."""
        plan = self._plans.get(shape.id)
        if plan is None:
            plan, r = [0], 0
            silent = shape.observed or (False,) * len(shape.line_tokens)
            for tokens, pause, observed in zip(shape.line_tokens[:-1], shape.pauses, silent):
                pct = math.ceil(pause.percentage * shape.span / 100)
                r = max(r + tokens + (0 if observed else int(self._reply_est)), r + pause.tokens, pct)
                plan.append(r)
            self._plans[shape.id] = plan
        return plan

    def pick_start(self, queue: Iterable[TestShape]) -> int | None:
        """The index of the queued test to start now, if any may start (`queue` is read only as far as needed)."""
        self._start_at = math.inf
        if not queue:
            return None
        if self.running and self.isolated:
            return None
        load = sum(self._load(s.shape) for s in self.running)
        headroom = self._headroom()
        for i, shape in enumerate(queue):
            if not self._compatible(shape):
                continue
            if self.running:
                if load + self._load(shape) > MAX_LOAD:
                    continue
                first = shape.line_tokens[0] + self._reply_est
                if first > headroom:
                    continue
                if shape.id not in self._blocked_until:
                    self._blocked_until[shape.id] = self.pos + self._start_offset(shape)
                if self._blocked_until[shape.id] > self.pos:
                    self._start_at = min(self._start_at, self._blocked_until[shape.id])
                    continue
            return i
        return None

    def start(self, shape: TestShape) -> Slot:
        slot = Slot(shape, self.pos, [self.pos + r for r in self.plan(shape)])
        self.running.append(slot)
        self._blocked_until.clear()  # the running set changed
        return slot

    def finish(self, slot: Slot) -> None:
        self.running.remove(slot)
        self._blocked_until.clear()

    def _compatible(self, shape: TestShape) -> bool:
        if self.running and (not shape.interleave or any(not s.shape.interleave for s in self.running)):
            return False
        return not any(self._incompatible(shape.group, s.shape.group) for s in self.running)

    def _incompatible(self, a: str, b: str) -> bool:
        key = (a, b)
        known = self._incompatibility.get(key)
        if known is None:
            known = self._incompatibility[key] = self._incompatible_groups(a, b)
        return known

    def _load(self, shape: TestShape) -> float:
        """Share of the span the test's own lines and replies take (estimated once per test)."""
        load = self._loads.get(shape.id)
        if load is None:
            own = sum(shape.line_tokens) + len(shape.line_tokens) * self._reply_est
            load = self._loads[shape.id] = own / max(shape.span, 1)
        return load

    def _headroom(self) -> float:
        """Tokens the conversation may take before a waiting test is due. A test whose tokens are met but that
        waits on the clock is due now: the clock jump costs no tokens, so nothing may be said before it."""
        room = math.inf
        for s in self.running:
            if s.asks == "wait":
                room = min(room, max(s.wake_pos - self.pos, 0))
        return room

    def _clearance(self, shape: TestShape) -> int:
        """How far apart two tests' planned points must be so that neither line delays the other:
        the longer line with its reply, plus room for one smallest filler turn."""
        longest = max(shape.line_tokens)
        for s in self.running:
            longest = max(longest, max(s.shape.line_tokens))
        filler_turn = (self.filler_min_tokens or 0) + min(self._filler_replies, default=0)
        # Replies to questions (routes, JSON lists) can be far longer than the mean reply: allow the longest one
        # these groups have had (a group not asked yet: the longest of any).
        seen = self._answer_replies
        unknown = max(seen.values(), default=0)
        groups = {shape.group, *(s.shape.group for s in self.running)}
        longest_reply = max([self._reply_est, *(seen.get(g, unknown) for g in groups)])
        return int(longest + longest_reply + self._reply_est + filler_turn)

    def _start_offset(self, shape: TestShape) -> int:
        """Tokens from now until the test can start with every planned point clear of the running tests'."""
        points = sorted(p for s in self.running for p in s.future_points())
        if not points:
            return 0
        plan = self.plan(shape)
        clear = self._clearance(shape)

        def fits(start: int) -> bool:
            for r in plan:
                i = bisect_left(points, start + r - clear + 1)
                if i < len(points) and points[i] < start + r + clear:
                    return False
            return True

        # Offsets where a planned point lands just clear after a running one. One always fits: the test's first line
        # just clear after the last running point (its other lines come later still), or now if every point is that
        # far behind.
        candidates = sorted({0, *(p + clear - r - self.pos for p in points for r in plan if p + clear - r > self.pos)})
        return next(d for d in candidates if fits(self.pos + d))

    # -- moving the conversation on ----------------------------------------------------------------------
    def clock_target(self) -> datetime | None:
        """Where the clock must jump for a test that has its tokens but waits on time (None: no jump)."""
        times = [s.wake_time for s in self.running
                 if s.asks == "wait" and s.wake_time is not None
                 and (self.isolated or self.pos >= s.wake_pos) and not self.now >= s.wake_time]
        return min(times) if times else None

    def jump_clock(self, to: datetime) -> None:
        self.clock.jump_to(to)

    def filler_tokens(self) -> int:
        """The size of the next filler message: reach the nearest wake-up point, landing as close after it as the
        replies allow."""
        # In isolated mode waits on tokens are not honoured: filler only keeps a watching (continual) test going.
        need = math.inf if self.isolated else self._headroom()
        # Aim at the nearest wake-up assuming the shortest recent filler reply: rather a few tokens
        # over than a few under, which would cost a whole extra filler message.
        shortest_reply = min(self._filler_replies, default=0)
        # Stop first where a queued test may start, unless that leaves less than the smallest filler turn
        # before the wake-up point: a test starting so close to it cannot start, and that wake-up would be missed.
        to_start = self._start_at - self.pos
        if not self.isolated and to_start < need and need - to_start >= (self.filler_min_tokens or 0) + shortest_reply:
            need = to_start
        elif need != math.inf:
            return landing_filler(int(need), shortest_reply, self._filler_replies, self.filler_min_tokens or 0,
                                  self._nearest_gap())
        if need == math.inf:  # only tests watching the next turn: the smallest filler will do
            need = 0
        return int(need - shortest_reply)

    def _nearest_gap(self) -> int:
        """The planned gap of the nearest wake-up point: from the end of the line its wait is measured from (the
        answer statement once said, else the test's last line) to the point."""
        nearest: Slot | None = None
        for s in self.running:
            if s.asks == "wait" and (nearest is None or s.wake_pos < nearest.wake_pos):
                nearest = s
        if nearest is None or not nearest.lines:
            return 0
        anchor_line = nearest.shape.anchor_line
        anchor = nearest.lines[anchor_line] if anchor_line is not None and anchor_line < len(nearest.lines) \
            else nearest.lines[-1]
        return max(nearest.wake_pos - anchor.pos - anchor.tokens, 0)

    # -- what happened ---------------------------------------------------------------------------------
    def line_said(self, slot: Slot, tokens: int) -> SaidLine:
        """A test's line is being said now (before its reply)."""
        line = SaidLine(self.pos, slot.plan_cursor, tokens, self.now)
        slot.lines.append(line)
        return line

    def line_answered(self, slot: Slot, line: SaidLine, reply_tokens: int) -> None:
        line.reply_tokens = reply_tokens
        slot.plan_cursor = line.planned + line.tokens + line.reply_tokens

    def turn_done(self, kind: str, tokens: int, reply_tokens: int, group: str | None = None,
                  question: bool = False, observed: bool = False, forgotten: bool = False) -> None:
        """A turn is over: learn from the reply's size (not from history the agent only took in), move the position
        (not for a turn the agent went back from, `forgotten`: it is in no later turn's memory) and the clock."""
        if kind == "filler":
            self._filler_replies.append(reply_tokens)
        elif kind == "test" and not observed:
            if question and group is not None:
                self._answer_replies[group] = max(self._answer_replies.get(group, 0), reply_tokens)
            self._n_test_replies += 1
            self._reply_est += (reply_tokens - self._reply_est) / min(self._n_test_replies, 20)
        if not forgotten:
            self.pos += tokens + reply_tokens
        self.turns += 1
        self.clock.tick()
