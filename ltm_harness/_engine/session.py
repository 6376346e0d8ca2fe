"""One conversation with one agent: the scheduler that interleaves test programs, sends filler,
moves the virtual clock, records every turn and measures information gaps.

Order is decided only by the state of the conversation (never by event-loop timing):
1. tests whose waits are over are resumed; a ready line is said, the earliest planned first
   (reset messages last, and only when they fit before the next wake-up point);
2. else a queued test is started if it is compatible with the running ones, the conversation's
   token load allows it, and none of its planned wake-up points would come so close to a running
   test's that one line would delay the other (else filler moves the conversation to where it fits);
3. else, when a test has enough tokens but waits on time, the virtual clock jumps (while a test is due
   but for the clock, no reset or new test is said before it);
4. else filler sized to reach the nearest wake-up point is sent.
"""

from __future__ import annotations

import asyncio
import math
from bisect import bisect_left
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Callable, Literal

from ltm_harness._agents.base import Agent, AgentMessage, Reply
from ltm_harness._engine.clock import VirtualClock
from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._errors import LTMError, RunFolderError
from ltm_harness._store.events import (ClockJump, EventLog, SessionAborted, SessionEnd, SessionStart, TestEnd, TestStart,
                                TurnEvent)
from ltm_harness._authoring.example import TestExample
from ltm_harness._engine.filler import FillerGenerator
from ltm_harness._llm.in_session import SessionLLM
from ltm_harness._agents.replay import ReplayAgent
from ltm_harness._engine.program import Heard, NextTurn, ProgramDriver, Request, Say, TestContext, TestOutcome, WaitFor
from ltm_harness._results.models import TestResult, measure_gaps
from ltm_harness._engine.tokens import Tokenizer

INTRO = (
    "Hello. This will be a long conversation with many topics; I will sometimes come back to things "
    "I told you much earlier. Please answer briefly and follow any instructions I give you."
)
MAX_LOAD = 0.5  # at most this share of a span may be taken by the running tests' own lines and replies


@dataclass(slots=True)
class MessageRecord:
    turn: int
    pos: int
    planned: int  # offset from the test's start that its waits asked for
    tokens: int
    reply_tokens: int
    time: datetime
    text: str
    is_question: bool


@dataclass(frozen=True)
class TurnPolicy:
    """What a failing agent gets: `attempts` tries per turn, each bounded by `timeout` seconds, `backoff`
    seconds before the second try (doubling after). A turn that fails them all errors its test; after
    `give_up_after` failed turns in a row the agent is taken to be down and the session stops."""

    attempts: int = 3
    timeout: float | None = 600.0
    backoff: float = 0.5
    give_up_after: int = 5


class AgentDown(Exception):
    """The agent cannot go on (failed turn after turn, or an error no retry can fix)."""


def _one_line(exc: BaseException) -> str:
    """An attempt's error for the log: a user error's own sentence, else the exception's class and message."""
    text = " ".join(str(exc).split())[:300]
    if isinstance(exc, LTMError) and text:
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@dataclass
class SessionSettings:
    agent_name: str
    session_id: str
    start_time: datetime
    seconds_per_turn: float = 10.0
    isolated: bool = False
    intro: str | None = INTRO
    incompatible: Callable[[str, str], bool] = lambda a, b: a == b
    policy: TurnPolicy = field(default_factory=TurnPolicy)


class TestRun:
    """The state of one test inside the conversation."""

    __test__ = False

    def __init__(self, session: "Session", dataset: DatasetInterface, example: TestExample,
                 line_tokens: dict[str, int]) -> None:
        self.session = session
        self.dataset = dataset
        self.example = example
        self.span = dataset.memory_span
        self.line_tokens = line_tokens
        self.ctx = TestContext(self)
        self.driver = ProgramDriver(self._program())
        self.pending: Request | None = None
        self.ready_seq = 0
        self.messages: list[MessageRecord] = []
        self.start_pos = 0
        self.start_turn = 0
        self.plan_cursor = 0
        self.wake_pos = 0
        self.wake_time: datetime | None = None
        self.oracle_suffix: str | None = None
        self.plan_abs: list[int] = []  # planned conversation position of each script line
        idx = dataset.answer_statement_idx(example)
        self.anchor_line: int | None = idx[0] if idx else None  # the answer statement's line

    def next_point(self) -> int | None:
        """Where this test plans to speak next (None when it has no more planned lines)."""
        k = len(self.messages)
        if k >= len(self.plan_abs):
            return None
        if isinstance(self.pending, WaitFor):
            return max(self.wake_pos, self.plan_abs[k])
        return self.plan_abs[k]

    def future_points(self) -> list[int]:
        nxt = self.next_point()
        return [] if nxt is None else [nxt, *self.plan_abs[len(self.messages) + 1:]]

    async def _program(self) -> TestOutcome:
        outcome = await self.dataset.run(self.example, self.ctx)
        if self.dataset.reset_message:
            await Say(self.dataset.reset_message, False, "reset")
        return outcome

    def count(self, text: str) -> int:
        n = self.line_tokens.get(text)
        if n is None:
            n = self.session.tokenizer.count(text)
        return n

    def wait_tokens_met(self, pos: int) -> bool:
        return pos >= self.wake_pos

    def wait_time_met(self, now: datetime) -> bool:
        return self.wake_time is None or now >= self.wake_time


class Session:
    def __init__(
        self,
        agent: Agent,
        tests: list[tuple[DatasetInterface, TestExample]],
        tokenizer: Tokenizer,
        filler: FillerGenerator | None,
        log: EventLog,
        settings: SessionSettings,
        on_turn: Callable[["Session"], None] | None = None,
        llm: SessionLLM | None = None,
    ) -> None:
        self.agent = agent
        self.llm = llm or SessionLLM(log)
        self.tokenizer = tokenizer
        self.filler = filler
        self.log = log
        self.settings = settings
        self.clock = VirtualClock(settings.start_time, settings.seconds_per_turn)
        self.on_turn = on_turn
        self.queue = list(tests)
        self.total_tests = len(tests)
        self.running: list[TestRun] = []
        self.results: list[TestResult] = []
        self.pos = 0
        self.turns = 0
        self.filler_turns = 0
        self._seq = 0
        self._reply_est = 16.0
        self._filler_replies: deque[int] = deque(maxlen=20)  # recent filler reply sizes
        self._answer_replies: dict[str, int] = {}  # longest reply to a question so far, per dataset
        self._n_test_replies = 0
        self.cost_usd = 0.0
        self.agent_prompt_tokens = 0
        self.agent_completion_tokens = 0
        self._line_tokens: dict[str, dict[str, int]] = {}
        self._plans: dict[str, list[int]] = {}
        self._loads: dict[str, float] = {}
        self._incompatibility: dict[tuple[str, str], bool] = {}
        self._blocked_until: dict[str, int] = {}  # queued test -> earliest start position, for this set of running tests
        self._start_at: float = math.inf
        self._failed_in_a_row = 0
        self._failed_reason = ""
        self._answered = 0  # turns the agent answered
        self.failed_turns = 0
        self.failure: str | None = None  # why the session stopped early, if it did
        self.ended = False

    # -- the loop ---------------------------------------------------------------------------
    async def run(self) -> list[TestResult]:
        s = self.settings
        self.log.write(SessionStart(agent=s.agent_name, session=s.session_id, time=self.clock.now,
                                    tokenizer=self.tokenizer.encoding_name, isolated=s.isolated))
        try:
            if s.intro:
                await self._turn("intro", s.intro, self.tokenizer.count(s.intro))
            while True:
                await self._settle()
                run = self._next_speaker()
                if run is not None:
                    await self._say(run)
                    continue
                if await self._start_next():
                    continue
                if not self.running:
                    break
                if self._jump_clock():
                    continue
                await self._send_filler()
        except AgentDown as down:
            self.abort(str(down))
            return self.results
        self.ended = True
        self.log.write(SessionEnd(turns=self.turns, pos=self.pos, time=self.clock.now))
        return self.results

    def abort(self, reason: str) -> None:
        """Stop early: every test still running or queued ends as errored with `reason`. Safe to call at any
        await point of `run` (the run's watchdog cancels it there first)."""
        if self.ended:
            return
        self.ended = True
        self.failure = reason
        if self.log.replaying:  # still inside the recorded part of a resumed run: leave the log as it was
            raise RunFolderError(f"{reason}; this happened while the interrupted session was being replayed, so nothing "
                            "was changed: resume it again")
        self.log.write(SessionAborted(turn=self.turns, pos=self.pos, time=self.clock.now, reason=reason))
        for run in list(self.running):
            run.driver.close()
            self._finish(run, error=reason)
        for dataset, example in self.queue:
            run = TestRun(self, dataset, example, self._line_counts(example))
            run.start_pos, run.start_turn = self.pos, self.turns
            run.driver.close()
            self._finish(run, error=f"not started: {reason}", started=False)
        self.queue.clear()
        self.log.write(SessionEnd(turns=self.turns, pos=self.pos, time=self.clock.now))

    def _next_speaker(self) -> TestRun | None:
        """The ready test line planned earliest; a reset message only if nothing else is ready and it fits."""
        lines: list[TestRun] = []
        resets: list[TestRun] = []
        for r in self.running:
            if isinstance(r.pending, Say):
                (resets if r.pending.kind == "reset" else lines).append(r)
        if lines:
            def planned(r: TestRun) -> int:
                point = r.next_point()
                return self.pos if point is None else point

            return min(lines, key=lambda r: (planned(r), r.ready_seq))
        # A reset fits where it leaves no room before the next wake-up point, or room for the smallest filler
        # turn: a gap of a few tokens left after it could only be closed by filler that overshoots the point.
        smallest_filler = (self.filler.min_tokens if self.filler else 0) + min(self._filler_replies, default=0)
        for r in sorted(resets, key=lambda r: r.ready_seq):
            assert isinstance(r.pending, Say)
            left = self._headroom() - (r.count(r.pending.text) + self._reply_est)
            if left >= smallest_filler or 0 <= left < 1:
                return r
        return None

    async def _settle(self) -> None:
        """Resume tests whose waits are over until each has a line to say or an unmet wait."""
        changed = True
        while changed:
            changed = False
            for run in list(self.running):
                if isinstance(run.pending, WaitFor) and self._wait_met(run):
                    await self._step(run, None)
                    changed = True

    def _wait_met(self, run: TestRun) -> bool:
        if self.settings.isolated:
            return run.wait_time_met(self.clock.now)
        return run.wait_tokens_met(self.pos) and run.wait_time_met(self.clock.now)

    async def _step(self, run: TestRun, value: object) -> None:
        request = await run.driver.step(value)
        run.pending = request
        if request is None:
            self._finish(run)
        elif isinstance(request, Say):
            self._seq += 1
            run.ready_seq = self._seq
        elif isinstance(request, WaitFor):
            self._set_wait(run, request)

    def _set_wait(self, run: TestRun, w: WaitFor) -> None:
        last = run.messages[-1] if run.messages else None
        base_pos = last.pos if last else self.pos
        base_time = last.time if last else self.clock.now
        base_plan = last.planned if last else 0
        pct_offset = math.ceil(w.percentage_finished * run.span / 100) if w.percentage_finished else 0
        run.plan_cursor = max(run.plan_cursor, base_plan + w.tokens, pct_offset)
        # Where the plan puts the next line, measured from a line that was actually said: the answer
        # statement once it has been said (so each question's gap misses its target only by that
        # question's own lateness), else the test's last line (a late line does not squeeze the next
        # gap). Lines are never early, so this is never before `percentage_finished` of the span.
        anchor = last
        if run.anchor_line is not None and run.anchor_line < len(run.messages):
            anchor = run.messages[run.anchor_line]
        planned_from_anchor = anchor.pos + run.plan_cursor - anchor.planned if anchor else 0
        run.wake_pos = max(base_pos + w.tokens, run.start_pos + pct_offset, planned_from_anchor)
        run.wake_time = base_time + timedelta(seconds=w.time) if w.time else None

    # -- starting tests -----------------------------------------------------------------------
    def _compatible(self, dataset: DatasetInterface, example: TestExample) -> bool:
        if self.running and (not example.can_be_interleaved or any(not r.example.can_be_interleaved for r in self.running)):
            return False
        return not any(self._incompatible(dataset.name, r.dataset.name) for r in self.running)

    def _incompatible(self, a: str, b: str) -> bool:
        key = (a, b)
        known = self._incompatibility.get(key)
        if known is None:
            known = self._incompatibility[key] = self.settings.incompatible(a, b)
        return known

    def _line_counts(self, example: TestExample) -> dict[str, int]:
        counts = self._line_tokens.get(example.unique_id)
        if counts is None:
            counts = {line: self.tokenizer.count(line) for line in example.script}
            self._line_tokens[example.unique_id] = counts
        return counts

    def _load(self, example: TestExample, span: int) -> float:
        """Share of the span the test's own lines and replies take (estimated once per test)."""
        load = self._loads.get(example.unique_id)
        if load is None:
            counts = self._line_counts(example)
            own = sum(counts[line] for line in example.script) + len(example.script) * self._reply_est
            load = self._loads[example.unique_id] = own / max(span, 1)
        return load

    def _headroom(self) -> float:
        """Tokens the conversation may take before a waiting test is due. A test whose tokens are met but that
        waits on the clock is due now: the clock jump costs no tokens, so nothing may be said before it."""
        room = math.inf
        for r in self.running:
            if isinstance(r.pending, WaitFor):
                room = min(room, max(r.wake_pos - self.pos, 0))
        return room

    def _plan(self, example: TestExample, span: int) -> list[int]:
        """Planned offset of each script line from the test's start, from its waits and line sizes."""
        plan = self._plans.get(example.unique_id)
        if plan is None:
            counts = self._line_counts(example)
            plan, r = [0], 0
            for line, w in zip(example.script[:-1], example.waits):
                pct = math.ceil(w.percentage_finished * span / 100) if w.percentage_finished else 0
                r = max(r + counts[line] + int(self._reply_est), r + w.tokens, pct)
                plan.append(r)
            self._plans[example.unique_id] = plan
        return plan

    def _clearance(self, example: TestExample) -> int:
        """How far apart two tests' planned points must be so that neither line delays the other:
        the longer line with its reply, plus room for one smallest filler turn."""
        longest = max(self._line_counts(example).values())
        for r in self.running:
            longest = max(longest, max(r.line_tokens.values()))
        filler_turn = (self.filler.min_tokens if self.filler else 0) + min(self._filler_replies, default=0)
        # Replies to questions (routes, JSON lists) can be far longer than the mean reply: allow the longest one
        # these datasets have had (a dataset not asked yet: the longest of any).
        seen = self._answer_replies
        unknown = max(seen.values(), default=0)
        names = {example.dataset_name, *(r.dataset.name for r in self.running)}
        longest_reply = max([self._reply_est, *(seen.get(n, unknown) for n in names)])
        return int(longest + longest_reply + self._reply_est + filler_turn)

    def _start_offset(self, example: TestExample, span: int) -> int:
        """Tokens from now until the test can start with every planned point clear of the running tests'."""
        points = sorted(p for r in self.running for p in r.future_points())
        if not points:
            return 0
        plan = self._plan(example, span)
        clear = self._clearance(example)

        def fits(start: int) -> bool:
            for r in plan:
                i = bisect_left(points, start + r - clear + 1)
                if i < len(points) and points[i] < start + r + clear:
                    return False
            return True

        candidates = sorted({0, *(p + clear - r - self.pos for p in points for r in plan if p + clear - r > self.pos)})
        for d in candidates:
            if fits(self.pos + d):
                return d
        return candidates[-1]

    async def _start_next(self) -> bool:
        self._start_at = math.inf
        if not self.queue:
            return False
        if self.running and self.settings.isolated:
            return False
        load = sum(self._load(r.example, r.span) for r in self.running)
        headroom = self._headroom()
        for i, (dataset, example) in enumerate(self.queue):
            if not self._compatible(dataset, example):
                continue
            if self.running:
                if load + self._load(example, dataset.memory_span) > MAX_LOAD:
                    continue
                first = self._line_counts(example)[example.script[0]] + self._reply_est
                if first > headroom:
                    continue
                uid = example.unique_id
                if uid not in self._blocked_until:
                    self._blocked_until[uid] = self.pos + self._start_offset(example, dataset.memory_span)
                if self._blocked_until[uid] > self.pos:
                    self._start_at = min(self._start_at, self._blocked_until[uid])
                    continue
            del self.queue[i]
            run = TestRun(self, dataset, example, self._line_counts(example))
            run.start_pos, run.start_turn = self.pos, self.turns
            run.plan_abs = [self.pos + r for r in self._plan(example, dataset.memory_span)]
            self.running.append(run)
            self._blocked_until.clear()  # the running set changed
            self.log.write(TestStart(test=example.unique_id, turn=self.turns, pos=self.pos, time=self.clock.now,
                                     span=dataset.memory_span))
            await self._step(run, None)
            return True
        return False

    # -- moving the conversation on --------------------------------------------------------
    def _jump_clock(self) -> bool:
        times = [
            r.wake_time for r in self.running
            if isinstance(r.pending, WaitFor) and r.wake_time is not None
            and (self.settings.isolated or r.wait_tokens_met(self.pos)) and not r.wait_time_met(self.clock.now)
        ]
        if not times:
            return False
        target = min(times)
        self.log.write(ClockJump(turn=self.turns, time=self.clock.now, to=target))
        self.clock.jump_to(target)
        return True

    async def _send_filler(self) -> None:
        if self.filler is None:
            raise RuntimeError("no test can move on: every running test waits on tokens but this session has no filler")
        # In isolated mode waits on tokens are not honoured: filler only keeps a watching (continual) test going.
        need = math.inf if self.settings.isolated else self._headroom()
        # Aim at the nearest wake-up assuming the shortest recent filler reply: rather a few tokens
        # over than a few under, which would cost a whole extra filler message.
        shortest_reply = min(self._filler_replies, default=0)
        # Stop first where a queued test may start, unless that leaves less than the smallest filler turn
        # before the wake-up point: a test starting so close to it cannot start, and that wake-up would be missed.
        to_start = self._start_at - self.pos
        if not self.settings.isolated and to_start < need and need - to_start >= self.filler.min_tokens + shortest_reply:
            need = to_start
        if need == math.inf:  # only tests watching the next turn: the smallest filler will do
            need = 0
        message = self.filler.make(int(need - shortest_reply))
        self.filler_turns += 1
        await self._turn("filler", message.text, message.tokens, oracle=message.expected_reply)

    async def _say(self, run: TestRun) -> None:
        say = run.pending
        assert isinstance(say, Say)
        tokens = run.count(say.text)
        planned = None
        if say.kind == "test":
            planned = run.plan_cursor
            record = MessageRecord(self.turns, self.pos, planned, tokens, 0, self.clock.now, say.text, say.is_question)
            run.messages.append(record)
        heard, reply_tokens = await self._turn(say.kind, say.text, tokens, run=run, question=say.is_question,
                                               oracle=say.oracle, planned=planned)
        if say.kind == "test":
            record.reply_tokens = reply_tokens
            run.plan_cursor = record.planned + record.tokens + record.reply_tokens
            if heard is None:  # the agent never answered this line: the test cannot be scored
                if say.is_question and len(run.ctx.responses) < len(run.ctx.questions):
                    run.ctx.responses.append("")  # asked, with no reply (as the event log has it)
                run.driver.close()
                self._finish(run, error=self._failed_reason)
                return
            run.ctx.last_heard = heard
        await self._step(run, heard.reply if heard is not None else "")

    async def _turn(self, kind: Literal["intro", "filler", "test", "reset"], text: str, tokens: int,
                    run: TestRun | None = None, question: bool = False, oracle: str | None = None,
                    planned: int | None = None) -> tuple[Heard | None, int]:
        """Send one message, record the turn, and return it as heard with the reply's token count
        (None: the agent failed the turn, which is recorded with why)."""
        now = self.clock.now
        hint = None
        if self.agent.is_oracle:
            suffixes = [r.oracle_suffix for r in self.running if r.oracle_suffix]
            hint = " ".join([oracle or "OK."] + suffixes)
        answer, errors = await self._ask(AgentMessage(text=text, timestamp=now, tokens=tokens), hint)
        reply = answer or Reply(text="")
        reply_text = reply.text if isinstance(reply.text, str) else str(reply.text)
        reply_tokens = self.tokenizer.count(reply_text)
        for call in reply.llm_calls:
            self.llm.record(call)
        self.log.write(TurnEvent(
            i=self.turns, time=now, pos=self.pos, kind=kind, test=run.example.unique_id if run else None,
            question=question, planned=planned, user=text, user_tokens=tokens, reply=reply_text, reply_tokens=reply_tokens,
            prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens, cost_usd=reply.cost_usd,
            failed=answer is None, errors=errors,
        ))
        failed_turn = self.turns
        if answer is None:
            self.failed_turns += 1
            self._failed_in_a_row += 1
            self._failed_reason = (f"the agent failed turn {failed_turn} after {len(errors)} "
                                   f"attempt{'s' if len(errors) != 1 else ''}: {errors[-1] if errors else 'no reply'}")
        else:
            self._failed_in_a_row = 0
            self._answered += 1
        if reply.cost_usd:
            self.cost_usd += reply.cost_usd
        self.agent_prompt_tokens += reply.prompt_tokens or 0
        self.agent_completion_tokens += reply.completion_tokens or 0
        if kind == "filler":
            self._filler_replies.append(reply_tokens)
        elif kind == "test":
            if question and run is not None:
                name = run.dataset.name
                self._answer_replies[name] = max(self._answer_replies.get(name, 0), reply_tokens)
            self._n_test_replies += 1
            self._reply_est += (reply_tokens - self._reply_est) / min(self._n_test_replies, 20)
        self.pos += tokens + reply_tokens
        self.turns += 1
        self.clock.tick()
        heard_index = self.turns - 1
        for other in list(self.running):
            if isinstance(other.pending, NextTurn) and other is not run:
                if answer is None:  # a test watching every reply cannot judge a turn that had none
                    other.driver.close()
                    self._finish(other, error=f"{self._failed_reason} (a turn this test watches)")
                else:
                    await self._step(other, Heard(heard_index, text, reply_text, now, False))
        if self.on_turn:
            self.on_turn(self)
        if answer is None and self._answered == 0:
            raise AgentDown(f"the agent failed its first turn ({self._failed_reason}); the session was stopped")
        if answer is None and self._failed_in_a_row >= self.settings.policy.give_up_after:
            raise AgentDown(f"the agent failed {self._failed_in_a_row} turns in a row (last: {self._failed_reason}); "
                            "the session was stopped")
        if answer is None:
            return None, reply_tokens
        return Heard(heard_index, text, reply_text, now, True), reply_tokens

    async def _ask(self, message: AgentMessage, hint: str | None) -> tuple[Reply | None, list[str]]:
        """The agent's reply under the turn policy, and why each failed attempt failed (None: all failed).
        A replayed turn (rescore, resume) gives its recorded outcome instead of asking."""
        agent = self.agent
        if isinstance(agent, ReplayAgent):
            taken = agent.take(message)
            if taken is not None:
                return taken
            agent = await agent.go_live()
        policy = self.settings.policy
        errors: list[str] = []
        for attempt in range(policy.attempts):
            if attempt and policy.backoff:
                await asyncio.sleep(policy.backoff * 2 ** (attempt - 1))
            try:
                async with asyncio.timeout(policy.timeout) as within:
                    return await agent.reply(message, hint), errors
            except TimeoutError as exc:
                if not within.expired():
                    errors.append(_one_line(exc))
                else:
                    errors.append(f"no reply within {policy.timeout:g} s")
            except Exception as exc:
                if getattr(exc, "fatal", False):  # e.g. a wrong key or model name: no retry can help
                    raise AgentDown(f"the agent cannot be used: {exc}") from None
                errors.append(_one_line(exc))
        return None, errors

    # -- ending tests -----------------------------------------------------------------------
    def _finish(self, run: TestRun, error: str | None = None, started: bool = True) -> None:
        if started:
            self.running.remove(run)
        self._blocked_until.clear()
        driver = run.driver
        status: Literal["ok", "unscored", "errored"]
        if error is not None:
            status, outcome = "errored", TestOutcome(0.0, 1.0, [error])
        elif driver.error is not None:
            status, outcome = "errored", TestOutcome(0.0, 1.0, [f"the test program failed: {type(driver.error).__name__}: {driver.error}"])
        elif not isinstance(driver.result, TestOutcome):
            status, outcome = "errored", TestOutcome(0.0, 1.0, [f"the test program returned {type(driver.result).__name__}, not a TestOutcome"])
        else:
            outcome = driver.result
            status = "unscored" if outcome.unscored else "ok"
        self.log.write(TestEnd(test=run.example.unique_id, turn=self.turns, pos=self.pos, time=self.clock.now,
                               score=outcome.score, max_score=outcome.max_score, status=status, reasons=outcome.reasons,
                               verdicts=outcome.verdicts))
        self.results.append(TestResult(
            dataset=run.dataset.name,
            example_id=run.example.example_id,
            status=status,
            score=outcome.score,
            max_score=outcome.max_score,
            reasons=outcome.reasons,
            verdicts=outcome.verdicts,
            questions=run.ctx.questions,
            responses=run.ctx.responses,
            expected=run.example.expected_responses,
            memory_span=run.span,
            gaps=measure_gaps(run.messages, run.dataset.answer_statement_idx(run.example), self.tokenizer.count,
                              self.settings.isolated, run.dataset.gap_questions(run.example)),
            start_turn=run.start_turn,
            end_turn=self.turns,
            tokens=self.pos - run.start_pos,
        ))
