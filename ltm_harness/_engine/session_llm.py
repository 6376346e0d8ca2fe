"""LLM use inside one session: judge calls and test-program calls, recorded in its event log.

Every call becomes an `llm_call` event and is summed per role. Calls made by test programs
(`ctx.llm`, e.g. the waiter of a role-play) and by the judge are stored with their response; a session
given the recorded calls of an earlier run (`replay`; `judge_replay` when resuming) hands those back in
order instead of calling again, so a resumed or re-scored run sees exactly what the original saw. A test-program
call that failed after its retries is recorded too (with its error), and replayed as the same failure.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ltm_harness._errors import ConfigError, LLMError
from ltm_harness._store.eventlog import Recorder
from ltm_harness._store.records import LLMCall, UsageTotals
from ltm_harness._scoring.verdict import Judge, JudgeVerdict

if TYPE_CHECKING:  # pragma: no cover
    from ltm_harness._llm.client import LLMClient
    from ltm_harness._scoring.judge_prompt import JudgePrompt


@dataclass
class TestLLM:
    """The LLM that test programs may call (config.test_llm)."""

    __test__ = False

    client: "LLMClient"
    model: str


class _RecordingJudge:
    """The run's judge as one test sees it: its calls are logged in the test's session."""

    def __init__(self, judge: Judge, owner: "SessionLLM", test: str) -> None:
        self._judge = judge
        self._owner = owner
        self._test = test
        self.model = judge.model

    async def grade(self, question: str, expected: str, response: str, *, context: str = "",
                    prompt: "JudgePrompt | None" = None) -> JudgeVerdict:
        recorded = getattr(self._judge, "grade_recorded", None)
        if recorded is not None:
            verdict: JudgeVerdict = await recorded(question, expected, response, context=context, prompt=prompt,
                                                   test=self._test, record=self._owner.record,
                                                   replayed=self._owner.judge_replay.get(self._test))
            return verdict
        if prompt is None:  # a judge of the user's own that may know no `prompt`
            return await self._judge.grade(question, expected, response, context=context)
        return await self._judge.grade(question, expected, response, context=context, prompt=prompt)


@dataclass
class SessionLLM:
    log: Recorder
    judge: Judge | None = None
    test_llm: TestLLM | None = None
    replay: dict[str, deque[LLMCall]] = field(default_factory=dict)  # test -> its recorded test-LLM calls
    judge_replay: dict[str, deque[LLMCall]] = field(default_factory=dict)  # test -> its recorded judge calls (resume)
    usage: UsageTotals = field(default_factory=UsageTotals)

    def record(self, call: LLMCall) -> None:
        self.log.write(call)
        self.usage.add(call)

    def judge_for(self, test: str) -> Judge | None:
        return None if self.judge is None else _RecordingJudge(self.judge, self, test)

    @property
    def has_test_llm(self) -> bool:
        return self.test_llm is not None or any(self.replay.values())

    async def call(self, test: str, messages: list[dict[str, str]], *, model: str | None, temperature: float | None,
                   max_tokens: int | None, json_mode: bool) -> str:
        """A test program's call (`ctx.llm`): the recorded one when replaying, else asked live. A call that failed
        after its retries is recorded with its error (no tokens, nothing paid) and raises `LLMError` (its test errors
        unless the program catches it); replayed, it raises the same error again instead of asking."""
        recorded = self.replay.get(test)
        if recorded:
            call = recorded.popleft()
            self.record(call)  # the same event as in the original run
            if call.error is not None:
                raise LLMError(call.error)
            return call.response or ""
        if self.test_llm is None:
            raise ConfigError(f"test {test} asks an LLM, but the run has none; set config.test_llm.model "
                            "(e.g. mock with OPENAI_BASE_URL at `python -m ltm_harness mock-llm`)")
        from ltm_harness._llm.client import CallFailed  # (the client is loaded already: it made test_llm)

        try:
            result = await self.test_llm.client.chat("test", model or self.test_llm.model, messages,
                                                     temperature=temperature, max_tokens=max_tokens,
                                                     json_mode=json_mode, test=test, keep_response=True)
        except CallFailed as failed:
            self.record(failed.call)
            raise LLMError(str(failed), fatal=failed.fatal, retry=failed.retry) from None
        self.record(result.call)
        return result.text
