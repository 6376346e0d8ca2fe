"""What an LLM judge returns, and the interface datasets score through.

A dataset never talks to an LLM client directly: it is handed a `Judge` (or None when the run has
no judge) and asks it to grade one response against what was expected. The verdict keeps what a
user needs to trust or audit the score: the judge model, the hash of the prompt and the raw reply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel, Field

if TYPE_CHECKING:  # pragma: no cover
    from ltm_harness._scoring.judge_prompt import JudgePrompt


class JudgeVerdict(BaseModel):
    """One judged response."""

    question: str
    score: float = Field(ge=0.0, le=1.0)  # 1.0 correct, 0.0 wrong, partial credit in between
    reason: str
    model: str
    prompt_hash: str  # sha256 (16 hex) of the judge prompt template in use
    raw: str  # the judge's reply as received
    cached: bool = Field(default=False, exclude=True)  # this run's disk cache answered it (never written: it varies)


class JudgeUnparseable(Exception):
    """The judge's reply could not be parsed into a verdict, even after retries: the test is unscored."""

    def __init__(self, reason: str, raw: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.raw = raw


class JudgeUnavailable(JudgeUnparseable):
    """The judge could not be asked (its endpoint failed the call after every retry, refused the key, does not serve
    the model): only what the judge decides is unscored, with this cause; a score a rule gives stays. `fatal`: every
    later call would fail the same way (an unknown model, a refused key, an exhausted quota), so the run stops."""

    def __init__(self, reason: str, fatal: bool = False) -> None:
        super().__init__(reason)
        self.fatal = fatal


class JudgePending(JudgeUnavailable):
    """The verdict waits for the judge's batch (`--judge-batch`): its request was kept, not sent, and the run is
    scored again once the batch has answered. A scorer that asks several verdicts of one answer asks them all before
    giving up (each is kept), so that one batch holds them."""


NOT_JUDGED = "not judged: "  # how a reason line that says why the judge gave no verdict starts (ltm_harness._results.causes)


def not_judged(exc: JudgeUnparseable) -> str:
    """The reason line of a judge's part left unscored by `exc`, naming its cause."""
    if isinstance(exc, JudgeUnavailable):
        return NOT_JUDGED + exc.reason
    return f"{NOT_JUDGED}the judge's verdict could not be read ({exc.reason})"


class Judge(Protocol):
    model: str

    async def grade(self, question: str, expected: str, response: str, *, context: str = "",
                    prompt: "JudgePrompt | None" = None) -> JudgeVerdict:
        """Grade `response` to `question` against `expected`; `context` adds dataset-specific instructions;
        `prompt`, a dataset's own judge prompt, replaces the run's (e.g. one per kind of question).

        Raises JudgeUnparseable when no valid verdict could be had."""
        ...
