"""The scheduler with numbers alone: no agent, no event log, no tokenizer, no event loop."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest

from ltm_harness._engine.filler_landing import landing_filler
from ltm_harness._engine.scheduler import MAX_LOAD, Pause, Scheduler, Slot, TestShape

T0 = datetime(2024, 1, 1, 9, 0, tzinfo=timezone.utc)


def shape(id: str = "a/0", group: str = "a", span: int = 1000, lines: tuple[int, ...] = (10, 10),
          pauses: tuple[Pause, ...] | None = None, **kw: object) -> TestShape:
    return TestShape(id, group, span, lines, pauses or tuple(Pause() for _ in lines), **kw)  # type: ignore[arg-type]


def sched(**kw: object) -> Scheduler:
    return Scheduler(T0, 10.0, filler_min_tokens=20, **kw)  # type: ignore[arg-type]


def say_line(s: Scheduler, slot: Slot, tokens: int, reply: int) -> None:
    """The session's part of a test line: said, answered, the turn done."""
    s.asks_to_say(slot, tokens)
    line = s.line_said(slot, tokens)
    s.line_answered(slot, line, reply)
    s.turn_done("test", tokens, reply, slot.shape.group, question=False)


def test_plan_takes_the_larger_of_line_sizes_token_waits_and_span_percentages():
    s = sched()
    # line 0 (10 tokens) then wait 300 tokens; line 1 (40) then 50% of 1000; line 2 (5)
    plan = s.plan(shape(lines=(10, 40, 5), pauses=(Pause(tokens=300), Pause(percentage=50), Pause())))
    assert plan == [0, 300, 500]
    # without waits, lines follow each other: own tokens plus the estimated reply (16 at first)
    assert s.plan(shape("b/0", lines=(10, 40, 5))) == [0, 26, 26 + 40 + 16]


def test_a_token_wait_counts_from_the_line_said():
    s = sched()
    slot = s.start(shape(lines=(10, 10), pauses=(Pause(tokens=200), Pause())))
    say_line(s, slot, 10, 5)
    s.asks_to_wait(slot, Pause(tokens=200))
    assert slot.wake_pos == 200 and not s.wait_met(slot)
    s.turn_done("filler", 180, 4)
    assert s.pos == 199 and not s.wait_met(slot)
    s.turn_done("filler", 1, 0)
    assert s.wait_met(slot)


def test_after_a_late_answer_statement_the_question_keeps_its_planned_gap():
    s = sched()
    # line 0, then 100 tokens, line 1 (the answer statement), then 50% of the span, the question
    slot = s.start(shape(span=1000, lines=(10, 10, 10), pauses=(Pause(tokens=100), Pause(percentage=50), Pause()),
                         anchor_line=1))
    say_line(s, slot, 10, 5)
    s.asks_to_wait(slot, Pause(tokens=100))
    s.turn_done("filler", 115, 0)  # 30 tokens past the wake-up point at 100
    say_line(s, slot, 10, 5)
    statement = slot.lines[1]
    assert (statement.pos, statement.planned) == (130, 100)
    s.asks_to_wait(slot, Pause(percentage=50))
    # planned: the question 400 tokens after the statement (500 - 100); kept although the statement came late
    assert slot.wake_pos - statement.pos == 500 - 100
    # a percentage of the span alone would have given only 370


def test_time_waits_need_the_clock_and_the_clock_jumps_to_the_earliest():
    s = sched()
    a = s.start(shape("a/0", "a"))
    b = s.start(shape("b/0", "b"))
    say_line(s, a, 10, 2)
    say_line(s, b, 10, 2)
    s.asks_to_wait(a, Pause(time=3600))
    s.asks_to_wait(b, Pause(time=600))
    assert s.clock_target() == T0 + timedelta(seconds=10) + timedelta(seconds=600)
    s.jump_clock(s.clock_target())  # type: ignore[arg-type]
    assert s.wait_met(b) and not s.wait_met(a)
    assert s.clock_target() == T0 + timedelta(seconds=3600)


def test_a_time_wait_whose_tokens_are_not_met_gets_filler_not_a_jump_unless_isolated():
    for isolated, jumps in ((False, False), (True, True)):
        s = sched(isolated=isolated)
        slot = s.start(shape())
        say_line(s, slot, 10, 2)
        s.asks_to_wait(slot, Pause(tokens=500, time=60))
        assert (s.clock_target() is not None) is jumps
        assert s.wait_met(slot) is False
        if isolated:  # waits on tokens are not honoured when each test is alone
            s.jump_clock(s.clock_target())  # type: ignore[arg-type]
            assert s.wait_met(slot)


def test_filler_reaches_the_nearest_wake_up_point_exactly():
    s = sched()
    a = s.start(shape("a/0", "a"))
    b = s.start(shape("b/0", "b"))
    say_line(s, a, 10, 2)
    say_line(s, b, 10, 2)
    s.asks_to_wait(a, Pause(tokens=400))
    s.asks_to_wait(b, Pause(tokens=250))
    s.turn_done("filler", 50, 6)  # the shortest filler reply seen so far is 6 tokens
    need = 12 + 250 - s.pos  # b wakes at its line (12) + 250
    assert s.filler_tokens() == need - 6
    s.turn_done("filler", s.filler_tokens(), 6)
    assert s.pos == 12 + 250 and s.wait_met(b) and not s.wait_met(a)


def test_the_earliest_planned_line_speaks_first_and_resets_only_when_they_fit():
    s = sched()
    late = s.start(shape("a/0", "a", lines=(10, 10), pauses=(Pause(tokens=300), Pause())))
    early = s.start(shape("b/0", "b", lines=(10, 10)))
    s.asks_to_say(late, 10)
    s.asks_to_say(early, 10)
    assert s.next_speaker() is late  # both at their first line (planned at 0): the one ready first
    say_line(s, late, 10, 2)
    s.asks_to_say(early, 10)
    assert late.next_point() == 300 and s.next_speaker() is early
    say_line(s, early, 10, 2)
    s.asks_to_wait(late, Pause(tokens=300))
    room = late.wake_pos - s.pos  # tokens before the waiting test is due
    s.asks_to_say(early, room - 100, reset=True)  # leaves room for a filler turn (20 tokens) after it
    assert s.next_speaker() is early
    s.asks_to_say(early, room - int(s._reply_est) - 10, reset=True)  # leaves 10 tokens: too few for filler
    assert s.next_speaker() is None
    s.asks_to_say(early, room - int(s._reply_est), reset=True)  # fills the room exactly
    assert s.next_speaker() is early


def started_and_waiting(s: Scheduler, test: TestShape, tokens: int = 5000) -> Slot:
    """A running test that said its first line and now waits `tokens`."""
    slot = s.start(test)
    say_line(s, slot, test.line_tokens[0], 2)
    s.asks_to_wait(slot, Pause(tokens=tokens))
    return slot


def test_a_group_never_overlaps_itself_and_incompatible_groups_wait():
    s = sched(incompatible=lambda x, y: x == y or {x, y} == {"a", "b"})
    first = started_and_waiting(s, shape("a/0", "a", span=100_000))
    assert s.pick_start([shape("a/1", "a"), shape("b/0", "b")]) is None
    assert s.pick_start([shape("a/1", "a"), shape("b/0", "b"), shape("c/0", "c")]) == 2
    s.finish(first)
    assert s.pick_start([shape("a/1", "a"), shape("b/0", "b")]) == 0


def test_a_test_that_may_not_be_interleaved_runs_alone():
    s = sched()
    started_and_waiting(s, shape("a/0", "a", span=100_000))
    assert s.pick_start([shape("b/0", "b", interleave=False)]) is None
    s2 = sched()
    started_and_waiting(s2, shape("b/0", "b", span=100_000, interleave=False))
    assert s2.pick_start([shape("a/0", "a")]) is None


def test_the_running_tests_may_take_at_most_half_the_span():
    s = sched()
    # a test's load is its lines and estimated replies (2 tokens, after the one reply seen) against its span
    started_and_waiting(s, shape("a/0", "a", span=1000, lines=(240, 240)))  # (480 + 2 * 2) / 1000 = 0.484
    heavy = shape("b/0", "b", span=1000, lines=(50,))  # 0.052 more: over MAX_LOAD
    light = shape("c/0", "c", span=10_000, lines=(50,))  # 0.0052 more
    assert s._load(s.running[0].shape) + s._load(heavy) > MAX_LOAD
    assert s.pick_start([heavy, light]) == 1


def test_an_isolated_schedule_runs_one_test_at_a_time():
    s = sched(isolated=True)
    s.start(shape("a/0", "a"))
    assert s.pick_start([shape("b/0", "b")]) is None
    # also beside a test with no planned point left (where a shared schedule would start one at once)
    s = sched(isolated=True)
    watcher = s.start(shape("w/0", "w", span=100_000, lines=(10,)))
    say_line(s, watcher, 10, 2)
    watcher.asks = "turn"
    assert s.pick_start([shape("b/0", "b", span=100_000)]) is None


def test_replies_teach_the_estimates_and_turns_move_position_and_clock():
    s = sched()
    for reply in (40, 40, 40):
        s.turn_done("test", 10, reply, "a", question=True)
    assert math.isclose(s._reply_est, 40.0) and s._answer_replies == {"a": 40}
    assert (s.pos, s.turns, s.now) == (150, 3, T0 + timedelta(seconds=30))
    s.turn_done("filler", 100, 7)
    s.turn_done("intro", 30, 3)
    assert list(s._filler_replies) == [7] and s.pos == 150 + 107 + 33


def test_the_same_numbers_give_the_same_schedule():
    def simulate() -> list[tuple[str, int]]:
        s = sched()
        shapes = [shape(f"{g}/0", g, span=3000, lines=(20, 15, 12), pauses=(Pause(percentage=30), Pause(percentage=90),
                                                                              Pause())) for g in "abcd"]
        queue = list(shapes)
        said: list[tuple[str, int]] = []
        index: dict[str, int] = {}
        for _ in range(2000):
            for slot in list(s.running):
                if slot.asks == "wait" and s.wait_met(slot):
                    s.asks_to_say(slot, slot.shape.line_tokens[len(slot.lines)])
            slot = s.next_speaker()
            if slot is not None:
                said.append((slot.shape.id, s.pos))
                say_line(s, slot, slot.shape.line_tokens[len(slot.lines)], 8)
                k = index[slot.shape.id] = index.get(slot.shape.id, 0) + 1
                if k == len(slot.shape.line_tokens):
                    s.finish(slot)
                else:
                    s.asks_to_wait(slot, slot.shape.pauses[k - 1])
                continue
            i = s.pick_start(queue)
            if i is not None:
                new = s.start(queue.pop(i))
                s.asks_to_say(new, new.shape.line_tokens[0])
                continue
            if not s.running:
                break
            s.turn_done("filler", max(s.filler_tokens(), 20), 6)
        return said

    first = simulate()
    assert first == simulate()
    assert len(first) == 12  # every line of the four tests was said
    by_test: dict[str, list[int]] = {}
    for test, pos in first:
        by_test.setdefault(test, []).append(pos)
    starts = sorted(positions[0] for positions in by_test.values())
    assert len(set(starts)) == 4 and starts[-1] < 900  # the four interleave: each starts before the first is asked
    for start, second, third in by_test.values():  # with exact filler, every line lands on its plan: 30% and 90%
        assert (second - start, third - start) == (900, 2700)


def _landings(aim_with_shortest: bool, trials: int = 300, gap: int = 1200) -> list[int]:
    """Where a 1200-token wait ends, over `trials` waits, when filler replies are 0-450 tokens (seeded): by the
    scheduler's filler, or by filler aimed with the shortest reply (what it did before it planned for the spread)."""
    import random

    rng = random.Random(7)
    s = sched()
    for _ in range(20):
        s.turn_done("filler", 100, rng.randint(0, 450))
    landed = []
    for k in range(trials):
        slot = s.start(shape(f"a/{k}", "a", span=10_000, lines=(10, 10), anchor_line=0))
        say_line(s, slot, 10, 0)
        s.asks_to_wait(slot, Pause(tokens=gap))
        while not s.wait_met(slot):
            size = (slot.wake_pos - s.pos - min(s._filler_replies)) if aim_with_shortest else s.filler_tokens()
            s.turn_done("filler", max(size, 20), rng.randint(0, 450))
        landed.append(s.pos - slot.wake_pos)
        s.finish(slot)
    return landed


def test_filler_plans_for_replies_of_unknown_length():
    """Replies spread over 0-450 tokens: aimed with the shortest reply, a wait lands anywhere up to 450 tokens late;
    filler that may fall short (then a smaller one follows) lands within 10% of a 1200-token gap far more often."""
    within = {aim: sum(0 <= late <= 120 for late in _landings(aim)) / 300 for aim in (True, False)}
    assert within[True] < 0.35 and within[False] > within[True] + 0.1, within
    assert _landings(False) == _landings(False)  # the same replies, the same filler


def test_filler_with_replies_inside_the_band_is_aimed_with_the_shortest():
    s = sched()
    slot = s.start(shape("a/0", "a", span=10_000, lines=(10, 10), anchor_line=0))
    say_line(s, slot, 10, 0)
    s.asks_to_wait(slot, Pause(tokens=2000))
    for reply in (6, 9, 7, 8, 6, 30):  # spread 24 < 8% of the 2000-token gap
        s.turn_done("filler", 100, reply)
    assert s.filler_tokens() == slot.wake_pos - s.pos - 6


# -- starting a test beside running ones ------------------------------------------------------------------------


def _asked(s: Scheduler, answers: dict[str, int], replies: int = 20) -> None:
    """Test turns whose replies teach the scheduler: the longest answer of each group, then short replies, so that
    the reply estimate (the mean of the first 20 replies) stays small."""
    for group, reply in answers.items():
        s.turn_done("test", 0, reply, group, question=True)
    for _ in range(replies - len(answers)):
        s.turn_done("test", 0, 0, "x")


@pytest.mark.parametrize("answers, longest, filler_min, filler_reply", [
    ({"a": 40, "b": 30, "z": 500}, 40, 20, 4),  # z's long answers do not concern a and b
    ({"a": 40, "b": 30, "z": 500}, 40, None, None),  # no filler in this session
    ({}, 0, 20, 4),  # nothing asked yet, replies of nothing
])
def test_a_new_test_keeps_clear_of_a_running_tests_future_points(answers, longest, filler_min, filler_reply):
    """Two tests' planned points must be at least the clearance apart: the longer line, the longest answer the two
    groups have had (not another group's), the estimated reply and one smallest filler turn. At exactly that
    distance a test may start, either side of a running point; one token closer, it may not."""
    s = Scheduler(T0, 10.0, filler_min_tokens=filler_min)
    _asked(s, answers)
    if filler_reply is not None:
        s.turn_done("filler", 0, filler_reply)
    a = started_and_waiting(s, shape("a/0", "a", span=100_000, lines=(10, 10), pauses=(Pause(tokens=3000), Pause())),
                            tokens=3000)
    point = a.future_points()[0]
    assert a.future_points() == [a.start_pos + 3000]
    clear = int(10 + max(longest, s._reply_est) + s._reply_est + (filler_min or 0) + (filler_reply or 0))
    pos = s.pos

    def b(name: str, gap: int) -> TestShape:  # a test of group b whose second line comes `gap` tokens after its first
        return shape(f"b/{name}", "b", span=100_000, lines=(10, 10), pauses=(Pause(tokens=gap), Pause()))

    assert s.pick_start([b("before", point - clear - pos)]) == 0  # its second line exactly clear before a's point
    assert s.pick_start([b("too-close-before", point - clear + 1 - pos)]) is None
    assert s.pick_start([b("too-close-after", point + clear - 1 - pos)]) is None
    gap = point - pos - clear // 2
    late = b("after", gap)  # where it could start now, its second line would be too close to a's point
    assert s.pick_start([late]) is None
    assert s.pick_start([late, b("before", point - clear - pos)]) == 1  # a test that must wait holds up no other
    start = point + clear - gap  # the first position where its second line is clear after a's point
    if filler_min is not None:  # filler stops there, not at a's wake-up point
        assert s.filler_tokens() == start - s.pos - filler_reply
    s.turn_done("intro", start - 1 - s.pos, 0)
    assert s.pick_start([late]) is None
    s.turn_done("intro", 1, 0)
    assert s.pick_start([late]) == 0


def test_a_test_starts_as_soon_as_every_planned_point_is_clear():
    s = sched()
    a = s.start(shape("a/0", "a", span=100_000, lines=(10, 10, 10),
                      pauses=(Pause(tokens=1000), Pause(tokens=1000), Pause())))
    say_line(s, a, 10, 2)
    s.asks_to_wait(a, Pause(tokens=1000))
    points = a.future_points()
    assert points == [1000, 2000]
    clear = int(10 + s._reply_est + s._reply_est + 20)  # nothing answered, no filler seen yet
    # started now, its second line would come just before a's first point: it goes just clear after it (between
    # a's two points), not after a's last
    b = shape("b/0", "b", span=100_000, lines=(10, 10), pauses=(Pause(tokens=980), Pause()))
    assert s.pos + 980 in range(points[0] - clear, points[0])
    assert s.pick_start([b]) is None
    s.turn_done("intro", points[0] + clear - 980 - s.pos - 1, 0)
    assert s.pick_start([b]) is None
    s.turn_done("intro", 1, 0)
    assert s.pick_start([b]) == 0


def test_a_test_starts_at_once_beside_tests_with_no_planned_lines_left():
    s = sched()
    watcher = s.start(shape("w/0", "w", span=100_000, lines=(10,)))
    say_line(s, watcher, 10, 2)
    watcher.asks = "turn"  # it watches the replies to the turns that follow
    assert watcher.future_points() == []
    assert s.pick_start([shape("b/0", "b", span=100_000)]) == 0


def test_by_default_a_group_never_overlaps_itself_while_other_groups_interleave():
    s = Scheduler(T0, 10.0, filler_min_tokens=20)  # no incompatibilities given: a group is incompatible with itself
    started_and_waiting(s, shape("a/0", "a", span=100_000))
    same, other = shape("a/1", "a", span=100_000), shape("b/0", "b", span=100_000)
    assert s.pick_start([same]) is None
    assert s.pick_start([same, other]) == 1


def test_the_clearance_allows_for_the_running_tests_longest_line():
    """Around a running test whose lines are 300 tokens, a new test of 10-token lines keeps 300 tokens (and the
    replies and a filler turn) clear, not 10."""
    s = sched()
    a = started_and_waiting(s, shape("a/0", "a", span=100_000, lines=(300, 300),
                                     pauses=(Pause(tokens=3000), Pause())), tokens=3000)
    point, pos = a.future_points()[0], s.pos
    assert (point, s._reply_est, s._answer_replies) == (3000, 2, {})
    clear = 300 + 2 + 2 + 20  # the longer line, the longest reply (none asked: the estimate), the estimate, filler

    def b(name: str, gap: int) -> TestShape:
        return shape(f"b/{name}", "b", span=100_000, lines=(10, 10), pauses=(Pause(tokens=gap), Pause()))

    assert s.pick_start([b("too-close", point - clear + 1 - pos)]) is None
    assert s.pick_start([b("clear", point - clear - pos)]) == 0


def test_the_running_tests_may_take_exactly_half_the_span_and_no_more():
    s = sched()
    started_and_waiting(s, shape("a/0", "a", span=1024, lines=(200, 200)))  # replies now estimated at 2 tokens
    assert s._reply_est == 2
    exactly = shape("b/0", "b", span=1024, lines=(106,))  # (400 + 2 * 2) / 1024 + (106 + 2) / 1024 = 0.5
    over = shape("c/0", "c", span=1024, lines=(107,))
    assert s.pick_start([over]) is None
    assert s.pick_start([exactly]) == 0


def test_a_tests_load_and_plan_are_estimated_once():
    """A test's share of the span and its planned points are reckoned with the reply estimate of when it was first
    considered: longer replies later neither move its planned points nor make a running test weigh more."""
    s = sched()
    a = s.start(shape("a/0", "a", span=1024, lines=(200, 200), pauses=(Pause(tokens=5000), Pause())))
    b = shape("b/0", "b", span=1024, lines=(24, 24))  # (48 + 2 * 16) / 1024, and a's (400 + 2 * 16) / 1024: 0.5
    assert s.pick_start([b]) is None  # a's first line is due where b would start
    say_line(s, a, 200, 500)  # the estimate becomes 500 a reply
    s.asks_to_wait(a, Pause(tokens=5000))
    assert s._reply_est == 500
    assert s.pick_start([b]) == 0  # a's load and b's are still reckoned at 16 a reply
    assert s.start(b).plan_abs == [s.pos, s.pos + 24 + 16]


def test_a_new_tests_first_line_and_reply_must_fit_before_the_next_wake_up_point():
    """Also when the waiting test's plan put its next line later (a program that waits less than it declared)."""
    s = sched()
    a = s.start(shape("a/0", "a", span=100_000, lines=(10, 10), pauses=(Pause(tokens=1000), Pause())))
    say_line(s, a, 10, 2)
    s.asks_to_wait(a, Pause(tokens=100))
    assert a.future_points() == [1000] and a.wake_pos == 100
    room = a.wake_pos - s.pos
    assert s._reply_est == 2
    too_long = shape("b/0", "b", span=100_000, lines=(room - 2 + 1, 10))
    fits = shape("c/0", "c", span=100_000, lines=(room - 2, 10))
    assert s.pick_start([too_long]) is None
    assert s.pick_start([too_long, fits]) == 1  # a test that does not fit does not hold up the next


def test_while_a_test_is_due_but_for_the_clock_no_new_test_starts():
    """Even where its planned point is far enough behind (filler overshot it) and the new line is tiny."""
    s = sched()
    a = s.start(shape("a/0", "a", span=100_000, lines=(10, 10), pauses=(Pause(tokens=100, time=600), Pause())))
    say_line(s, a, 10, 0)  # an agent that replies nothing: the reply estimate is 0
    s.asks_to_wait(a, Pause(tokens=100, time=600))
    s.turn_done("filler", 400, 0)  # far past the point
    assert s.wait_met(a) is False and s.clock_target() == a.wake_time and s._reply_est == 0
    assert s.pick_start([shape("b/0", "b", span=100_000, lines=(1, 1))]) is None


# -- waits ----------------------------------------------------------------------------------------------------------


def test_a_wait_before_the_first_line_counts_from_where_the_test_started():
    s = sched()
    s.turn_done("intro", 40, 0)
    slot = s.start(shape("a/0", "a", span=1000, lines=(10, 10)))
    s.asks_to_wait(slot, Pause(tokens=100))
    assert slot.wake_pos == 40 + 100 and slot.wake_time is None
    s.asks_to_wait(slot, Pause(tokens=100, percentage=30))
    assert slot.wake_pos == 40 + 300
    s.asks_to_wait(slot, Pause(time=60))
    assert slot.wake_pos == 40 and slot.wake_time == s.now + timedelta(seconds=60)
    s.asks_to_wait(slot, Pause(percentage=30))
    s.turn_done("intro", 300, 0)
    line = s.line_said(slot, 10)
    assert (line.pos, line.planned) == (340, 300)  # planned: 300 tokens after the test's start, as it waited
    other = s.start(shape("b/0", "b", span=1000, lines=(10, 10)))
    s.asks_to_wait(other, Pause(tokens=100))
    s.turn_done("intro", 100, 0)
    assert s.line_said(other, 10).planned == 100


def test_a_time_wait_at_the_very_start_needs_only_the_clock():
    s = sched()
    slot = s.start(shape("a/0", "a", span=1000, lines=(10, 10)))
    s.asks_to_wait(slot, Pause(time=60))
    assert s.clock_target() == T0 + timedelta(seconds=60)


def test_a_short_wait_after_a_line_ends_after_its_reply():
    """A wait of fewer tokens than the line and its reply is over when the reply is; the next line is planned
    there, and the next wait counts from that plan."""
    s = sched()
    slot = s.start(shape("a/0", "a", span=100_000, lines=(50, 10, 10), pauses=(Pause(tokens=10), Pause(tokens=500),
                                                                             Pause()), anchor_line=0))
    say_line(s, slot, 50, 30)
    s.asks_to_wait(slot, Pause(tokens=10))
    assert slot.wake_pos == 80 == s.pos
    say_line(s, slot, 10, 5)
    assert slot.lines[1].planned == 80
    s.asks_to_wait(slot, Pause(tokens=500))
    assert slot.wake_pos == 80 + 500
    s.turn_done("intro", slot.wake_pos - s.pos, 0)
    assert s.line_said(slot, 10).planned == 80 + 500


def test_a_short_wait_ends_after_the_reply_also_in_a_test_without_an_answer_statement():
    s = sched()
    slot = s.start(shape("a/0", "a", span=100_000, lines=(50, 10)))
    say_line(s, slot, 50, 30)
    s.asks_to_wait(slot, Pause(tokens=10))
    assert slot.wake_pos == 80


def test_a_question_keeps_its_gap_from_the_answer_statement_when_a_line_between_came_late():
    s = sched()
    slot = s.start(shape("a/0", "a", span=1000, lines=(10, 10, 10),
                         pauses=(Pause(tokens=100), Pause(percentage=50), Pause()), anchor_line=0))
    say_line(s, slot, 10, 5)  # the answer statement, on time
    s.asks_to_wait(slot, Pause(tokens=100))
    s.turn_done("filler", 300 - s.pos, 0)  # the next line 200 tokens late
    say_line(s, slot, 10, 5)
    s.asks_to_wait(slot, Pause(percentage=50))
    assert slot.wake_pos == 500  # 500 tokens after the statement, as planned: not 500 after the late line's plan


def test_a_token_wait_after_a_late_line_counts_from_its_planned_point():
    """The lines' planned offsets (recorded with each turn) follow the plan even when a line comes late."""
    s = sched()
    slot = s.start(shape("a/0", "a", span=100_000, lines=(10, 10, 10), pauses=(Pause(tokens=1000), Pause(tokens=500),
                                                                             Pause()), anchor_line=0))
    say_line(s, slot, 10, 2)
    s.asks_to_wait(slot, Pause(tokens=1000))
    s.turn_done("intro", 1030 - s.pos, 0)  # 30 tokens late
    say_line(s, slot, 10, 2)
    s.asks_to_wait(slot, Pause(tokens=500))
    assert slot.wake_pos == 1030 + 500  # 500 tokens after the line itself
    s.turn_done("intro", slot.wake_pos - s.pos, 0)
    assert s.line_said(slot, 10).planned == 1000 + 500


# -- who speaks and how much filler ---------------------------------------------------------------------------------


def test_of_lines_planned_at_the_same_point_the_first_asked_speaks_first():
    s = sched()
    a = s.start(shape("a/0", "a"))
    b = s.start(shape("b/0", "b"))
    s.asks_to_say(b, 10)
    s.asks_to_say(a, 10)
    assert s.next_speaker() is b
    c = s.start(shape("c/0", "c"))
    d = s.start(shape("d/0", "d"))
    s.asks_to_say(d, 10, reset=True)
    s.asks_to_say(c, 10, reset=True)
    a.asks = b.asks = "none"
    assert s.next_speaker() is d


def test_filler_aims_with_the_shortest_of_the_last_20_filler_replies():
    s = sched()
    slot = started_and_waiting(s, shape("a/0", "a", span=100_000), tokens=5000)
    assert s.filler_tokens() == slot.wake_pos - s.pos  # no reply seen yet: aimed at the point itself
    s.turn_done("filler", 100, 1)
    for _ in range(19):
        s.turn_done("filler", 100, 50)
    assert s.filler_tokens() == slot.wake_pos - s.pos - 1
    s.turn_done("filler", 100, 50)  # the reply of 1 token is now 21 replies ago
    assert s.filler_tokens() == slot.wake_pos - s.pos - 50


# -- sizing filler after the replies' spread ------------------------------------------------------------------------


def _best_size(need: int, replies: list[int], smallest: int, gap: int) -> int:
    """What filler_landing's rule asks for, by trying every size from the smallest filler message up to the one aimed
    with the shortest reply: the size most likely to end the wait inside its band (8% of the gap) after the point,
    counting a turn that falls short at the chance a later turn still lands (the band over a mean turn, at most
    0.9); of equally good sizes the largest. Fewer than 5 replies seen: aimed with the shortest."""
    direct = need - min(replies)
    if len(replies) < 5:
        return direct
    band = int(0.08 * gap)
    retry = min(0.9, band / (smallest + sum(replies) / len(replies)))

    def score(size: int) -> float:
        short = need - size
        return sum(short <= r <= short + band for r in replies) + retry * sum(r < short for r in replies)

    best = direct
    for size in range(direct - 1, smallest - 1, -1):
        if score(size) > score(best) + 1e-9:
            best = size
    return best


def test_filler_is_the_best_size_of_all_for_its_wake_up_point():
    import random

    rng = random.Random(3)
    for case in range(300):
        n = rng.choice([4, 5, 5, 8, 20])
        spread = rng.choice([10, 40, 150])
        replies = [rng.randint(0, spread) for _ in range(n)]
        need, smallest, gap = rng.randint(0, 300), rng.choice([0, 5, 20]), rng.choice([100, 500, 1500, 4000])
        assert landing_filler(need, min(replies), replies, smallest, gap) == _best_size(need, replies, smallest,
                                                                                        gap), case


def test_filler_never_goes_below_the_smallest_message_and_may_be_exactly_it():
    # replies 0 or 100 with a band of 80: the best size lets a 100-token reply end the wait 80 tokens late
    replies = [0, 0, 100, 100, 100]
    assert landing_filler(500, 0, replies, 480, 1000) == 480  # 500 - 100 + 80: exactly the smallest message
    assert landing_filler(500, 0, replies, 481, 1000) == 500  # not allowed: aimed with the shortest


def _spread_filler(s: Scheduler) -> list[int]:
    """20 filler turns whose replies spread over 0-450 tokens (seeded); their sizes."""
    import random

    rng = random.Random(7)
    for _ in range(20):
        s.turn_done("filler", 0, rng.randint(0, 450))
    return list(s._filler_replies)


def test_filler_lands_in_the_band_of_the_nearest_waits_gap_from_its_answer_statement():
    """The band is 8% of the planned gap of the nearest wake-up point, measured from the end of the line its wait
    counts from: the answer statement once said (not the test's last line, nor the statement's start)."""
    s = sched()
    replies = _spread_filler(s)
    slot = s.start(shape("a/0", "a", span=100_000, lines=(300, 10, 10),
                         pauses=(Pause(tokens=400), Pause(tokens=1500), Pause()), anchor_line=0))
    say_line(s, slot, 300, 0)
    statement = slot.lines[0]
    s.asks_to_wait(slot, Pause(tokens=400))
    s.turn_done("intro", statement.pos + 1500 - s.pos, 0)  # the second line comes 1100 tokens late
    say_line(s, slot, 10, 0)
    s.asks_to_wait(slot, Pause(tokens=1500))
    need = slot.wake_pos - s.pos

    def filler(gap: int) -> int:
        return landing_filler(need, min(replies), replies, 20, gap)

    gap = slot.wake_pos - statement.pos - 300
    assert len({filler(gap), filler(slot.wake_pos - slot.lines[1].pos - 10), filler(gap + 600)}) == 3
    assert s.filler_tokens() == filler(gap)


def test_filler_lands_in_the_band_of_the_gap_from_the_last_line_before_the_answer_statement_is_said():
    s = sched()
    replies = _spread_filler(s)
    slot = s.start(shape("a/0", "a", span=100_000, lines=(300, 10, 10), anchor_line=1))
    say_line(s, slot, 300, 0)
    s.asks_to_wait(slot, Pause(tokens=2000))
    need = slot.wake_pos - s.pos
    assert s.filler_tokens() == landing_filler(need, min(replies), replies, 20, 2000 - 300)


def test_filler_for_a_wait_before_any_line_is_aimed_with_the_shortest_reply():
    s = sched()
    replies = _spread_filler(s)
    slot = s.start(shape("a/0", "a", span=100_000))
    s.asks_to_wait(slot, Pause(tokens=3000))  # no line said: no gap to land in
    assert s.filler_tokens() == slot.wake_pos - s.pos - min(replies)


def test_filler_is_sized_for_the_waiting_test_due_first():
    """Not for a test that asks to say a reset message (that does not fit yet), even one whose last wait ended
    earlier; of two tests due at the same point, for the one that started first (the same run, the same filler)."""
    s = sched()
    replies = _spread_filler(s)

    def waiting(name: str, statement: int, wake: int) -> Slot:
        slot = s.start(shape(name, name, span=100_000, lines=(statement, 10), anchor_line=0))
        say_line(s, slot, statement, 0)
        s.asks_to_wait(slot, Pause(tokens=wake - slot.lines[0].pos))
        return slot

    first = waiting("a/0", 300, s.pos + 3000)
    s.turn_done("intro", 1000, 0)
    second = waiting("b/0", 10, first.wake_pos)
    resetting = waiting("c/0", 10, s.pos + 1000)
    s.asks_to_say(resetting, first.wake_pos - s.pos + 100, reset=True)  # too long to fit before the point
    assert s.next_speaker() is None and resetting.wake_pos < first.wake_pos
    need = first.wake_pos - s.pos

    def filler(slot: Slot) -> int:
        return landing_filler(need, min(replies), replies, 20, slot.wake_pos - slot.lines[0].pos - slot.lines[0].tokens)

    assert len({filler(first), filler(second), filler(resetting)}) == 3
    assert s.filler_tokens() == filler(first)


def test_filler_stops_where_a_test_may_start_unless_too_close_before_the_wake_up_point():
    """Filler stops first where a queued test may start, unless that leaves less than one smallest filler turn (the
    smallest message and the shortest filler reply) before the nearest wake-up point: then it aims at that point."""
    for left, stops in ((24, True), (23, False)):
        s = sched()
        s.turn_done("filler", 0, 4)
        a = s.start(shape("a/0", "a", span=100_000, lines=(10, 10), pauses=(Pause(tokens=1000), Pause())))
        say_line(s, a, 10, 2)
        s.asks_to_wait(a, Pause(tokens=300))  # it waits less than it planned: its next line is planned at 1000
        wake, point = a.wake_pos, a.future_points()[0]
        assert (wake, point) == (4 + 300, 4 + 1000)
        clear = int(200 + 2 + 2 + 20 + 4)  # b's long second line, replies of 2, a filler turn of 24
        start = wake - left  # where b's second line comes just clear after a's planned point
        b = shape("b/0", "b", span=100_000, lines=(10, 200), pauses=(Pause(tokens=point + clear - start), Pause()))
        assert s.pick_start([b]) is None
        assert s.filler_tokens() == (start if stops else wake) - s.pos - 4


def test_filler_in_an_isolated_schedule_is_the_smallest():
    """Each test alone: waits on tokens are not honoured, so filler only keeps a watching test going."""
    s = sched(isolated=True)
    s.turn_done("filler", 0, 4)
    started_and_waiting(s, shape("a/0", "a", span=100_000), tokens=3000)
    assert s.filler_tokens() <= 20  # the filler makes its smallest message


def test_a_line_beyond_a_tests_plan_is_planned_now():
    s = sched()
    a = s.start(shape("a/0", "a", lines=(10,)))
    say_line(s, a, 10, 2)
    assert a.next_point() is None
    b = s.start(shape("b/0", "b"))
    s.asks_to_say(a, 10)  # a line its plan did not know of: planned where the conversation is
    s.asks_to_say(b, 10)  # planned at its start: here too
    assert s.next_speaker() is a  # asked first


@pytest.mark.parametrize("filler_reply", [4, None])
def test_a_reset_message_fits_with_room_for_one_smallest_filler_turn_or_none(filler_reply):
    s = sched()
    if filler_reply is not None:
        s.turn_done("filler", 0, filler_reply)
    started_and_waiting(s, shape("a/0", "a", span=100_000), tokens=1000)
    r = s.start(shape("r/0", "r", span=100_000))
    room = s.running[0].wake_pos - s.pos - 2  # before a's wake-up point, less the estimated reply (2)
    smallest_turn = 20 + (filler_reply or 0)
    for left, fits in ((smallest_turn, True), (smallest_turn - 1, False), (1, False), (0, True)):
        s.asks_to_say(r, room - left, reset=True)
        assert (s.next_speaker() is r) is fits, left


def test_replies_to_questions_teach_each_groups_longest_answer():
    s = sched()
    for reply, question in ((40, True), (30, True), (90, False), (0, True)):
        s.turn_done("test", 0, reply, "a", question=question)
    s.turn_done("test", 0, 0, "b", question=True)
    s.turn_done("test", 0, 700, "c")  # not a question
    assert s._answer_replies == {"a": 40, "b": 0}


def test_the_reply_estimate_is_the_mean_of_the_first_20_then_moves_a_20th_of_the_way():
    s = sched()
    for reply in (10, 30):
        s.turn_done("test", 0, reply, "a")
    assert s._reply_est == 20
    for _ in range(18):
        s.turn_done("test", 0, 20, "a")
    s.turn_done("test", 0, 220, "a")
    assert math.isclose(s._reply_est, 30)


def test_filler_gives_up_on_a_turn_landing_late_only_for_a_good_chance():
    # two 0-token replies land a 500-token filler inside a 40-token band; waiting for a 200-token reply to be 40
    # tokens early (490) lands as often (the two 50s; the 0s fall short and a later turn may land them): the larger
    assert landing_filler(500, 0, [0, 0, 50, 50, 200], 20, 500) == 490
    # eleven empty replies and one of 200: aimed with the shortest, 11 of 12 land in the band; a size that lands the
    # long one leaves eleven short, each landing later at most 9 times in 10: worse
    assert landing_filler(500, 0, [0] * 11 + [200], 0, 1250) == 500


# -- history that needs no reply, dated sessions --------------------------------------------------------------------


def test_a_line_of_history_is_planned_without_a_reply_and_teaches_nothing():
    s = sched()
    plan = s.plan(shape(lines=(40, 10, 10), observed=(True, False, False)))
    assert plan == [0, 40, 40 + 10 + 16]  # the observed line takes its own tokens only; the next one its reply too
    s.turn_done("test", 40, 0, "a", question=True, observed=True)
    s.turn_done("intro", 30, 300)
    assert (s._reply_est, s._answer_replies, s.pos) == (16.0, {}, 40 + 330)


def test_a_wait_until_a_date_ends_when_the_clock_reaches_it_or_the_time_waited_if_later():
    s = sched()
    slot = s.start(shape(span=100_000))
    say_line(s, slot, 10, 2)
    said = slot.lines[0].time
    later, earlier = said + timedelta(days=2), said + timedelta(seconds=30)
    s.asks_to_wait(slot, Pause(until=later))
    assert slot.wake_time == later and s.clock_target() == later
    s.asks_to_wait(slot, Pause(time=3600, until=later))
    assert slot.wake_time == later
    s.asks_to_wait(slot, Pause(time=3600, until=earlier))
    assert slot.wake_time == said + timedelta(seconds=3600)
