"""What a benchmark is quoted by: the declaration a dataset makes of its headline metrics (names, and how each
aggregates per-question results). Pure data; ltm_harness/_results/headline.py computes the numbers from it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol, Sequence

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

if TYPE_CHECKING:  # pragma: no cover
    from ltm_harness._scoring.verdict import JudgeVerdict

Basis = Literal["score", "verdict"]


class Metric(BaseModel):
    """One number a benchmark is quoted by (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    of: Basis = "score"
    where: dict[str, str] = Field(default_factory=dict)
    unless: dict[str, list[str]] = Field(default_factory=dict)
    by: str | None = None
    per: str | None = None
    order: list[str] = Field(default_factory=list)  # the values of `by`/`per` in this order first (others after)


class Headline(BaseModel):
    """A benchmark's headline: its metrics, the first one leading (the dataset's score cell everywhere)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    metrics: list[Metric]
    # The GoodAI benchmark's own numbers (benchmark score, LTM score, target and achieved gaps) belong to it.
    goodai: bool = False
    # Without a judge the rule decides only some answers: score metrics are then named "<name> (<unjudged>)" and
    # count "decided" rather than "scored" (LongMemEval: "rule-decided").
    unjudged: str | None = None
    question: str = "test"  # what one result is: "question"
    conversation: str | None = None  # what one test is when each is a conversation of its own
    # The judge model the benchmark's reference (or its published numbers) judges with: a run judged by another
    # carries the "judge" protocol mark (ltm_harness/_results/marks.py). Left out of the JSON while None.
    judge: str | None = None

    @model_serializer(mode="wrap")
    def _omit_judge(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict) and data.get("judge", "") is None:
            del data["judge"]
        return data


GOODAI = Headline(metrics=[Metric(name="score")], goodai=True)  # the default: every dataset of the GoodAI benchmark


class HeadlineResult(Protocol):
    """What a headline reads of a test's result (a `TestResult`); datasets' own metrics read a little more
    (`ResultView`)."""

    @property
    def example_id(self) -> str: ...
    @property
    def status(self) -> Literal["ok", "unscored", "errored"]: ...
    @property
    def score(self) -> float: ...
    @property
    def max_score(self) -> float: ...
    @property
    def labels(self) -> dict[str, str] | None: ...
    @property
    def verdicts(self) -> Sequence["JudgeVerdict"]: ...
