"""One conversation with one agent: the session loop.

The session runs test programs (each a `TestProgram`: scripted tests, dynamic tests, continual tests,
environments, problem sets, syllabi, suite cases), asks the `Scheduler` what comes next, sends every turn through
the `Channel`, and records every event before the next turn is sent. Order is decided only by the state of the
conversation (never by event-loop timing): see `ltm_harness._engine.scheduler` for the rules.

The session knows nothing of datasets, run folders or run modes: it gets programs, an agent (or none, when every
turn is replayed), a recorder, and a `TurnReplay` when an earlier run's turns are to be handed back first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Callable, Sequence

from ltm_harness._agents.base import Agent, OracleHint
from ltm_harness._engine.channel import AgentDown, Channel, Turn, TurnKind, TurnPolicy
from ltm_harness._engine.filler import FillerGenerator
from ltm_harness._engine.program import Heard, NextTurn, Say, TestOutcome, TestProgram, WaitFor, memory_distance
from ltm_harness._engine.progress import OnTurn, TurnProgress
from ltm_harness._engine.session_llm import SessionLLM
from ltm_harness._engine.scheduler import START_WINDOW, Pause, SaidLine, Scheduler, Slot, TestShape, same_group
from ltm_harness._engine.placement import StartQueue
from ltm_harness._engine.test_run import TestRun, recorded_outcome
from ltm_harness._tokens import Tokenizer
from ltm_harness._errors import RunFolderError
from ltm_harness._store.eventlog import Recorder
from ltm_harness._store.events import (ClockJump, PartEnd, SessionAborted, SessionEnd, SessionStart, Status,
                                       TestEnd, TestStart)

if TYPE_CHECKING:  # pragma: no cover
    from ltm_harness._agents.replay import TurnReplay

INTRO = (
    "Hello. This will be a long conversation with many topics; I will sometimes come back to things "
    "I told you much earlier. Please answer briefly and follow any instructions I give you."
)


@dataclass
class SessionSettings:
    agent_name: str
    session_id: str
    start_time: datetime
    seconds_per_turn: float = 10.0
    isolated: bool = False
    intro: str | None = INTRO
    incompatible: Callable[[str, str], bool] = same_group
    policy: TurnPolicy = field(default_factory=TurnPolicy)
    # why the session must stop before its next turn (a judge or an agent met a cause that fails every call), if so,
    # and how the tests it stops are recorded: "unscored" when the judge failed (the agent is not to blame)
    halt: Callable[[], tuple[str, Status] | None] | None = None


@dataclass(frozen=True, slots=True)
class SessionStats:
    """What a session did so far (for summaries and progress)."""

    turns: int
    filler_turns: int
    observed_turns: int  # history that needed no reply
    failed_turns: int
    tokens: int  # conversation tokens
    prompt_tokens: int  # as the agent reported them
    completion_tokens: int
    cost_usd: float  # the agent's
    tests_done: int
    scored: int  # finished tests that count in means (errored as 0, unscored not at all)
    score_sum: float
    running_share: float  # how far the running tests are through their planned length, summed (0..1 each)
    went_back: int = 0  # independent questions the agent went back from
    in_sequence: int = 0  # independent questions asked in sequence (the agent cannot go back)


class Session:
    def __init__(self, agent: Agent | None, tests: Sequence[TestProgram], tokenizer: Tokenizer,
                 filler: FillerGenerator | None, log: Recorder, settings: SessionSettings,
                 on_turn: OnTurn | None = None, llm: SessionLLM | None = None,
                 replay: "TurnReplay | None" = None) -> None:
        self.tokenizer = tokenizer
        self.filler = filler
        self.log = log
        self.settings = settings
        self.on_turn = on_turn
        self.llm = llm or SessionLLM(log)
        self.scheduler = Scheduler(settings.start_time, settings.seconds_per_turn, isolated=settings.isolated,
                                   incompatible=settings.incompatible,
                                   filler_min_tokens=filler.min_tokens if filler else None)
        self.channel = Channel(agent, settings.policy, log, tokenizer.count, self.llm.record, replay)
        self.queue: StartQueue[TestProgram] = StartQueue(tests, lambda test: test.group, START_WINDOW)
        self._tests_total = sum(max(t.parts, 1) for t in self.queue)  # results, a question each when scored by part
        self._shapes: dict[str, tuple[TestShape, dict[str, int]]] = {}
        self._runs: dict[Slot, TestRun] = {}
        self.filler_turns = 0
        self._tests_done = self._scored = 0
        self._score_sum = 0.0
        self.failure: str | None = None  # why the session stopped early, if it did
        self.every_call_fails = False  # it stopped for a cause that fails every call (a refused key, an unknown model)
        self.ended = False

    # -- the loop ---------------------------------------------------------------------------
    async def run(self) -> None:
        s = self.settings
        self.log.write(SessionStart(agent=s.agent_name, session=s.session_id, time=self.scheduler.now,
                                    tokenizer=self.tokenizer.encoding_name, isolated=s.isolated))
        try:
            self._check_halt()
            if s.intro:
                await self._turn("intro", s.intro, self.tokenizer.count(s.intro))
            while True:
                self._check_halt()
                await self._settle()
                run = self._next_speaker()
                if run is not None:
                    await self._say(run)
                    continue
                if await self._start_next():
                    continue
                if not self.scheduler.running:
                    break
                if self._jump_clock():
                    continue
                await self._send_filler()
        except AgentDown as down:
            self.every_call_fails = down.every_call
            self.abort(str(down), down.status)
            return
        self.ended = True
        self.log.write(SessionEnd(turns=self.scheduler.turns, pos=self.scheduler.pos, time=self.scheduler.now))
        if self.on_turn:
            self.on_turn(self.progress())

    def _check_halt(self) -> None:
        halted = self.settings.halt() if self.settings.halt is not None else None
        if halted is not None:
            raise AgentDown(halted[0], every_call=True, status=halted[1])

    def abort(self, reason: str, status: Status = "errored") -> None:
        """Stop early: every test still running or queued ends with `reason`, errored (or `status`: unscored when
        the run's judge failed, never the agent). Safe to call at any await point of `run` (the run's watchdog
        cancels it there first)."""
        if self.ended:
            return
        self.ended = True
        self.failure = reason
        if self.log.replaying:  # still inside the recorded part of a resumed run: leave the log as it was
            raise RunFolderError(f"{reason}; this happened while the interrupted session was being replayed, so "
                                 "nothing was changed: resume it again")
        sched = self.scheduler
        self.log.write(SessionAborted(turn=sched.turns, pos=sched.pos, time=sched.now, reason=reason))
        for run in self.running:
            run.driver.close()
            self._finish(run, error=reason, status=status)
        for test in self.queue:
            self._end(test.id, TestOutcome(0.0, 1.0, [f"not started: {reason}"]), status, None, test.parts)
        self.queue.clear()
        self.log.write(SessionEnd(turns=sched.turns, pos=sched.pos, time=sched.now))
        if self.on_turn:
            self.on_turn(self.progress())

    @property
    def running(self) -> list[TestRun]:
        """The running tests, in the order they started."""
        return [self._runs[slot] for slot in self.scheduler.running]

    def stats(self) -> SessionStats:
        sched, channel = self.scheduler, self.channel
        share = 0.0
        for slot in sched.running:
            if slot.plan_abs:
                length = max(slot.plan_abs[-1] - slot.start_pos, 1)
                share += min(max((sched.pos - slot.start_pos) / length, 0.0), 0.99)
        return SessionStats(sched.turns, self.filler_turns, channel.observed_turns, channel.failed_turns, sched.pos,
                            channel.prompt_tokens,
                            channel.completion_tokens, channel.cost_usd, self._tests_done, self._scored,
                            self._score_sum, share, channel.went_back, channel.in_sequence)

    def progress(self) -> TurnProgress:
        """Where the session stands now, as `on_turn` hears it after every turn and when the session ends."""
        s = self.stats()
        fraction = min((s.tests_done + s.running_share) / self._tests_total, 1.0) if self._tests_total else 1.0
        return TurnProgress(self.settings.agent_name, self.settings.session_id, s.turns, s.tokens, s.tests_done,
                            self._tests_total, s.scored, s.score_sum, s.cost_usd, s.failed_turns, fraction, self.ended)

    def _next_speaker(self) -> TestRun | None:
        slot = self.scheduler.next_speaker()
        return None if slot is None else self._runs[slot]

    async def _settle(self) -> None:
        """Resume tests whose waits are over until each has a line to say or an unmet wait."""
        changed = True
        while changed:
            changed = False
            for run in self.running:
                if isinstance(run.pending, WaitFor) and self.scheduler.wait_met(run.slot):
                    await self._step(run, None)
                    changed = True

    async def _step(self, run: TestRun, value: object) -> None:
        request = await run.driver.step(value)
        run.pending = request
        if request is None:
            self._check_halt()  # a test that ends after the run was stopped is not recorded: a resume does it again
            self._finish(run)
        elif isinstance(request, Say):
            self.scheduler.asks_to_say(run.slot, run.count(request.text), reset=request.kind == "reset")
        elif isinstance(request, WaitFor):
            self.scheduler.asks_to_wait(run.slot, Pause(request.tokens, request.time, request.percentage_finished,
                                                        request.until))
        else:
            run.slot.asks = "turn"

    # -- starting tests -----------------------------------------------------------------------
    def _shape(self, test: TestProgram) -> tuple[TestShape, dict[str, int]]:
        """The test as the scheduler plans it, and its lines' token counts (each distinct line counted once; not
        at all when the test was made with counts by this tokenizer's encoding)."""
        known = self._shapes.get(test.id)
        if known is None:
            if test.tokens_by == self.tokenizer.encoding_name and len(test.line_tokens) == len(test.script):
                counts = dict(zip(test.script, test.line_tokens))
            else:
                counts = {line: self.tokenizer.count(line) for line in test.script}
            shape = TestShape(test.id, test.group, test.span, tuple(counts[line] for line in test.script), test.pauses,
                              test.interleave, test.anchor_line, test.observed)
            known = self._shapes[test.id] = (shape, counts)
        return known

    async def _start_next(self) -> bool:
        heads = self.queue.heads()  # a group's tests start in their order
        index = self.scheduler.pick_start([self._shape(test)[0] for test in heads])
        if index is None:
            return False
        test = heads[index]
        self.queue.start(test)
        shape, counts = self._shape(test)
        sched = self.scheduler
        slot = sched.start(shape)
        run = self._runs[slot] = TestRun(self, test, slot, counts)
        self.log.write(TestStart(test=test.id, turn=sched.turns, pos=sched.pos, time=sched.now, span=test.span))
        await self._step(run, None)
        return True

    # -- moving the conversation on --------------------------------------------------------
    def _jump_clock(self) -> bool:
        target = self.scheduler.clock_target()
        if target is None:
            return False
        self.log.write(ClockJump(turn=self.scheduler.turns, time=self.scheduler.now, to=target))
        self.scheduler.jump_clock(target)
        return True

    async def _send_filler(self) -> None:
        if self.filler is None:
            raise RuntimeError("no test can move on: every running test waits on tokens but this session has no filler")
        message = self.filler.make(self.scheduler.filler_tokens())
        self.filler_turns += 1
        await self._turn("filler", message.text, message.tokens, oracle=message.expected_reply)

    async def _say(self, run: TestRun) -> None:
        say = run.pending
        assert isinstance(say, Say)
        tokens = run.slot.say_tokens
        line: SaidLine | None = None
        if say.kind == "test":
            line = self.scheduler.line_said(run.slot, tokens)
            if say.is_question:  # where the earliest line this question needs was said (for oracle@N)
                needed = run.test.needs.get(len(run.slot.lines) - 1, ())
                distance = memory_distance([said.pos for said in run.slot.lines], needed, line.pos)
                run.needs_from = None if distance is None else line.pos - distance
        heard, reply_tokens = await self._turn(say.kind, say.text, tokens, run=run, question=say.is_question,
                                               oracle=say.oracle, planned=line.planned if line else None,
                                               observe=say.observe, role=say.role,
                                               independent=say.independent and say.is_question)
        if line is not None:
            self.scheduler.line_answered(run.slot, line, reply_tokens)
            if heard is None:  # the agent never answered this line: the test cannot be scored
                if say.is_question and len(run.ctx.responses) < len(run.ctx.questions):
                    run.ctx.responses.append("")  # asked, with no reply (as the event log has it)
                run.driver.close()
                self._finish(run, error=self.channel.failed_reason)
                return
            run.ctx.last_heard = heard
        await self._step(run, None if say.observe else heard.reply if heard is not None else "")

    async def _turn(self, kind: TurnKind, text: str, tokens: int, run: TestRun | None = None,
                    question: bool = False, oracle: str | None = None,
                    planned: int | None = None, observe: bool = False, role: str = "user",
                    independent: bool = False) -> tuple[Heard | None, int]:
        """Send one message, record the turn, and return it as heard with the reply's token count
        (None: the agent failed the turn, which is recorded with why). History that needs no reply (`observe`) is
        not shown to tests watching every reply: it has none to judge. An independent question the agent went back
        from leaves the conversation's length as it was (it is in no later turn's memory)."""
        sched = self.scheduler
        now = sched.now
        hint = None
        if self.channel.is_oracle and not observe:
            # Each part with the memory distance of what it draws on, for an oracle that knows only its last N tokens.
            own = None
            if run is not None and question and run.needs_from is not None:
                own = sched.pos - run.needs_from
            hint = OracleHint([(oracle or "OK.", own)] + [
                (r.oracle_suffix, None if r.needs_from is None else sched.pos - r.needs_from)
                for r in self.running if r.oracle_suffix])
        answer = await self.channel.send(Turn(sched.turns, now, sched.pos, kind, text, tokens,
                                              run.test.id if run else None, question, planned, hint, observe, role,
                                              independent))
        sched.turn_done(kind, tokens, answer.tokens, run.test.group if run else None, question, observe,
                        forgotten=bool(answer.went_back))
        heard_index = sched.turns - 1
        for other in self.running:
            if isinstance(other.pending, NextTurn) and other is not run and not observe:
                if not answer.ok:  # a test watching every reply cannot judge a turn that had none
                    other.driver.close()
                    self._finish(other, error=f"{self.channel.failed_reason} (a turn this test watches)")
                else:
                    await self._step(other, Heard(heard_index, text, answer.reply, now, False))
        if self.on_turn:
            self.on_turn(self.progress())
        self.channel.check_down()
        if not answer.ok:
            return None, answer.tokens
        return Heard(heard_index, text, answer.reply, now, True), answer.tokens

    # -- ending tests -----------------------------------------------------------------------
    def _finish(self, run: TestRun, error: str | None = None, status: Status = "errored") -> None:
        """Record the end of `run`; `error`: why the session stopped it (recorded `status`, errored by default)."""
        self.scheduler.finish(run.slot)
        del self._runs[run.slot]
        recorded, outcome, parts = recorded_outcome(run, error)
        self._end(run.test.id, outcome, status if error is not None else recorded, parts, run.test.parts)

    def _end(self, test: str, outcome: TestOutcome, status: Status, parts: list[PartEnd] | None = None,
             expected_parts: int = 0) -> None:
        sched = self.scheduler
        self.log.write(TestEnd(test=test, turn=sched.turns, pos=sched.pos, time=sched.now, score=outcome.score,
                               max_score=outcome.max_score, status=status, reasons=outcome.reasons,
                               verdicts=outcome.verdicts, raw_score=outcome.raw_score, parts=parts))
        # as in the results: errored tests (or parts) count as 0, unscored ones not at all
        scores = [(p.status, p.score, p.max_score) for p in parts] if parts is not None else \
            [(status, outcome.score, outcome.max_score)] * max(expected_parts, 1)
        for one, score, max_score in scores:
            self._tests_done += 1
            if one != "unscored":
                self._scored += 1
                if one == "ok" and max_score > 0:
                    self._score_sum += score / max_score
