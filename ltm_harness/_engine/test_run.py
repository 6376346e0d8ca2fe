"""A test program running in the session (`TestRun`: its driver, its slot in the schedule, and the port its
`TestContext` reaches the session through), and how its end is recorded (`recorded_outcome`): a wrong score is
never stored as valid, and a test scored question by question is checked part by part."""

from __future__ import annotations

import weakref
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from ltm_harness._engine.program import ProgramDriver, Request, Say, TestContext, TestOutcome, TestProgram
from ltm_harness._engine.scheduler import Scheduler, Slot
from ltm_harness._scoring.bounds import score_problem
from ltm_harness._scoring.verdict import JudgeUnparseable, not_judged
from ltm_harness._store.events import EnvStep, PartEnd, Status

if TYPE_CHECKING:  # pragma: no cover
    from ltm_harness._engine.session_llm import SessionLLM
    from ltm_harness._store.eventlog import Recorder
    from ltm_harness._tokens import Tokenizer
    from ltm_harness._scoring.verdict import Judge


class SessionPort(Protocol):
    """What a running test reaches of its session (the session itself; a port, so this module needs no import of it)."""

    tokenizer: "Tokenizer"
    scheduler: Scheduler
    log: "Recorder"
    llm: "SessionLLM"


class TestRun:
    """A test program running in the session: its driver, its slot in the schedule, and the port its
    `TestContext` reaches the session through."""

    __test__ = False

    def __init__(self, session: SessionPort, test: TestProgram, slot: Slot, line_tokens: dict[str, int]) -> None:
        self.session = session
        self.test = test
        self.slot = slot
        self.line_tokens = line_tokens
        # its context reaches it weakly: no cycle between the two, so a finished test (a benchmark's conversation, tens
        # of MB) is freed when its session lets it go, not whenever the garbage collector next looks at old objects
        self.ctx = TestContext(weakref.proxy(self))
        self.driver = ProgramDriver(self._program())
        self.pending: Request | None = None
        self.oracle_suffix: str | None = None
        self.needs_from: int | None = None  # where the earliest line its last question needs was said (oracle)

    async def _program(self) -> TestOutcome:
        outcome = await self.test.program(self.ctx)
        if self.test.reset_message:
            await Say(self.test.reset_message, False, "reset")
        return outcome

    def count(self, text: str) -> int:
        n = self.line_tokens.get(text)
        return self.session.tokenizer.count(text) if n is None else n

    # -- the port (ltm_harness._engine.program.TestPort) --------------------------------------------------
    @property
    def now(self) -> datetime:
        return self.session.scheduler.now

    def time_of_line(self, index: int) -> datetime:
        return self.slot.lines[index].time

    def expect_in_next_reply(self, text: str | None) -> None:
        self.oracle_suffix = text

    def record_step(self, step: EnvStep) -> None:
        self.session.log.write(step.model_copy(update={"test": self.test.id}))

    @property
    def judge(self) -> "Judge | None":
        return self.session.llm.judge_for(self.test.id)

    @property
    def has_llm(self) -> bool:
        return self.session.llm.has_test_llm

    async def llm(self, messages: list[dict[str, str]], *, model: str | None, temperature: float | None,
                  max_tokens: int | None, json_mode: bool) -> str:
        return await self.session.llm.call(self.test.id, messages, model=model, temperature=temperature,
                                           max_tokens=max_tokens, json_mode=json_mode)


def recorded_outcome(run: TestRun, error: str | None = None) -> tuple[Status, TestOutcome, list[PartEnd] | None]:
    """How a finished (or stopped) test is recorded: its status, its outcome and, when scored by part, its parts.
    `error` (why the session stopped the test) errors it whatever the program returned."""
    driver = run.driver
    if error is not None:
        return "errored", TestOutcome(0.0, 1.0, [error]), None
    if isinstance(driver.error, JudgeUnparseable):  # a test that needs the judge and cannot get it: never 0
        return "unscored", TestOutcome(0.0, 1.0, [not_judged(driver.error)], unscored=True), None
    if driver.error is not None:
        return "errored", TestOutcome(0.0, 1.0, [f"the test program failed: {type(driver.error).__name__}: "
                                                 f"{driver.error}"]), None
    if not isinstance(driver.result, TestOutcome):
        return "errored", TestOutcome(0.0, 1.0, [f"the test program returned {type(driver.result).__name__}, "
                                                 "not a TestOutcome"]), None
    if run.test.parts:
        return _scored_parts(driver.result, run.test.parts)
    status, outcome = _checked(driver.result)
    return status, outcome, None


def _checked(outcome: TestOutcome) -> tuple[Status, TestOutcome]:
    """A test's outcome as recorded: a wrong score is never stored as valid (errored, saying why)."""
    status: Status = "unscored" if outcome.unscored else "ok"
    problem = None if outcome.unscored else score_problem(outcome.score, outcome.max_score, outcome.reasons)
    if problem is not None:
        return "errored", TestOutcome(0.0, 1.0, [f"the test's scoring returned a wrong score: {problem}; fix the "
                                                 "dataset's scoring"])
    return status, outcome


def _scored_parts(outcome: TestOutcome, expected: int) -> tuple[Status, TestOutcome, list[PartEnd] | None]:
    """A test scored question by question: each part checked as a test would be; the test's own score is the sum of
    its scored parts'. The wrong number of parts errors the whole test (and so every part), saying why."""
    if len(outcome.parts) != expected:
        return "errored", TestOutcome(0.0, 1.0, [f"the test's scoring returned {len(outcome.parts)} part scores "
                                                 f"for {expected} result parts; fix the dataset's scoring"]), None
    parts = []
    for part in outcome.parts:
        status, checked = _checked(part)
        parts.append(PartEnd(score=checked.score, max_score=checked.max_score, status=status,
                             reasons=checked.reasons, verdicts=checked.verdicts))
    scored = [p for p in parts if p.status != "unscored"]
    whole = TestOutcome(sum(p.score for p in scored), sum(p.max_score for p in scored) or 1.0,
                        list(outcome.reasons), raw_score=outcome.raw_score)
    return ("ok" if scored else "unscored"), whole, parts
