"""Result models: per test, per dataset, per agent, per run."""

from __future__ import annotations

import statistics
from typing import Any, Callable, Literal, Mapping, Protocol, Sequence

from pydantic import BaseModel, Field, model_validator

from ltm_harness._engine.program import memory_distance
from ltm_harness._results.headline import DatasetHeadline, MetricValue
from ltm_harness._scoring.headline import GOODAI, Headline, Metric
from ltm_harness._scoring.bounds import score_problem
from ltm_harness._scoring.not_answered import REASON as NOT_ANSWERED_REASON
from ltm_harness._store.formats import RESULTS_FORMAT
from ltm_harness._store.records import OmitNone, UsageTotals
from ltm_harness._scoring.verdict import JudgeVerdict


class GapMeasure(BaseModel):
    """Tokens between the end of the answer statement and a question: what the waits asked for and what happened."""

    line: int  # the question's message index in the test
    target_tokens: int | None  # None in isolated mode, where waits on tokens are not honoured
    achieved_tokens: int
    # Tokens from the start of the earliest line the answer depends on to the question (None: results written
    # before memory distances were measured, or a question that needs no earlier line).
    memory_distance: int | None = None

    @property
    def relative_error(self) -> float | None:
        if not self.target_tokens:
            return None
        return (self.achieved_tokens - self.target_tokens) / self.target_tokens


class SaidLine(Protocol):
    """A test's line as said in the conversation."""

    pos: int  # conversation tokens before it
    planned: int  # offset from the test's start that its waits asked for
    tokens: int
    text: str
    is_question: bool


def measure_gaps(lines: Sequence[SaidLine], answer_idx: tuple[int, int] | None, count: Callable[[str], int],
                 isolated: bool, only: set[int] | None = None,
                 needs: Mapping[int, Sequence[int]] | None = None,
                 anchors: Mapping[int, tuple[int, int]] | None = None) -> list[GapMeasure]:
    """Tokens from the end of the answer statement (line, char) to every later question (or to the
    questions whose line numbers are in `only`), and the target; with `needs` (question line -> the lines its
    answer depends on), each question's memory distance too. `anchors` (question line -> its own answer statement)
    replaces `answer_idx` for tests whose questions each draw on other lines (a benchmark conversation)."""
    if anchors is None:
        if answer_idx is None or answer_idx[0] >= len(lines):
            return []
        anchors = {i: answer_idx for i, m in enumerate(lines)
                   if m.is_question and i > answer_idx[0] and (only is None or i in only)}
    gaps = []
    positions = [s.pos for s in lines] if needs else []  # once, not per question
    for index, m in enumerate(lines):
        anchor = anchors.get(index)
        if not m.is_question or anchor is None or not anchor[0] < index:
            continue
        line, char = anchor
        statement = lines[line]
        cut = statement.tokens if char >= len(statement.text) else count(statement.text[:char])
        target = None if isolated else m.planned - statement.planned - cut
        needed = needs.get(index) if needs is not None else None
        distance = memory_distance(positions, needed, m.pos) if needed else None
        gaps.append(GapMeasure(line=index, target_tokens=target, achieved_tokens=m.pos - statement.pos - cut,
                               memory_distance=distance))
    return gaps


class TestResult(BaseModel):
    __test__ = False

    dataset: str
    example_id: str
    status: Literal["ok", "unscored", "errored"]
    score: float
    max_score: float
    reasons: list[str]
    verdicts: list[JudgeVerdict] = Field(default_factory=list)  # the LLM judge's, when it scored
    questions: list[str]
    responses: list[str]
    expected: list[Any]
    memory_span: int
    gaps: list[GapMeasure] = Field(default_factory=list)
    start_turn: int
    end_turn: int
    tokens: int  # conversation tokens from the test's first line to its end
    # the test's own score before normalisation, when it has one (an environment's episode score); AIQ averages it
    raw_score: OmitNone[float] = None
    # what the dataset says the result is about, e.g. {"category": "temporal"} (summed up per label in the summary)
    labels: OmitNone[dict[str, str]] = None
    # the test this result is a part of (a benchmark's conversation: LoCoMo's "conv-26" for "conv-26.q17"); None for a
    # test scored as a whole. Statistics resample conversations by it (ltm_harness/_stats).
    group: OmitNone[str] = None

    @model_validator(mode="after")
    def _score_in_range(self) -> "TestResult":
        """A results file edited by hand (or damaged) cannot hold a score outside its range."""
        if self.status != "unscored":
            problem = score_problem(self.score, self.max_score)
            if problem is not None:
                raise ValueError(problem)
        return self

    @property
    def normalized(self) -> float:
        return self.score / self.max_score if self.max_score > 0 else 0.0

    @property
    def target_gap(self) -> int | None:
        targets = [g.target_tokens for g in self.gaps if g.target_tokens is not None]
        return max(targets) if targets else None

    @property
    def achieved_gap(self) -> int | None:
        return max((g.achieved_tokens for g in self.gaps), default=None)

    @property
    def memory_distance(self) -> int | None:
        """The longest memory distance of its questions (None: none measured)."""
        return max((g.memory_distance for g in self.gaps if g.memory_distance is not None), default=None)

    def distance(self, basis: "DistanceBasis") -> int | None:
        """The achieved gap or the memory distance, by `basis`."""
        return self.achieved_gap if basis == "gap" else self.memory_distance


DistanceBasis = Literal["gap", "memory_distance"]
DISTANCE_BASES: tuple[DistanceBasis, ...] = ("gap", "memory_distance")


class GapPoint(BaseModel):
    """One scored test on its dataset's score-vs-gap curve."""

    example_id: str
    target_gap: int | None
    achieved_gap: int
    score: float  # normalised, 0..1
    memory_distance: int | None = None  # None in results written before memory distances were measured


class GapBin(BaseModel):
    """The scored tests whose achieved gap is in [lo, hi) tokens, and their mean score (bins double in width)."""

    lo: int
    hi: int
    tests: int
    mean_score: float


def gap_bin(gap: int) -> tuple[int, int]:
    """The bin of a gap: [0, 1), [1, 2), [2, 4), ... [2^k, 2^(k+1)); the same edges in every run, so curves of
    several runs (e.g. one per span) can be merged bin by bin."""
    if gap < 1:
        return 0, 1
    lo = 1 << (gap.bit_length() - 1)
    return lo, 2 * lo


def gap_curve(results: Sequence["TestResult"]) -> tuple[list[GapPoint], list[GapBin]]:
    """Score-vs-gap data of one dataset and agent: a point per scored test with a gap (by gap), and binned means."""
    points = sorted((GapPoint(example_id=r.example_id, target_gap=r.target_gap, achieved_gap=r.achieved_gap,
                              score=r.normalized if r.status == "ok" else 0.0, memory_distance=r.memory_distance)
                     for r in results if r.status != "unscored" and r.achieved_gap is not None),
                    key=lambda p: (p.achieved_gap, p.example_id))
    bins: dict[tuple[int, int], list[float]] = {}
    for p in points:
        bins.setdefault(gap_bin(p.achieved_gap), []).append(p.score)
    return points, [GapBin(lo=lo, hi=hi, tests=len(v), mean_score=statistics.fmean(v)) for (lo, hi), v in sorted(bins.items())]


class LabelSummary(BaseModel):
    """The results of a dataset that carry one label value (e.g. category = temporal)."""

    label: str
    value: str
    tests: int
    scored: int
    unscored: int
    errored: int
    score: float  # mean normalised score of the scored ones (errored as 0)
    memory_distance: float | None = None  # their mean memory distance (None: not measured)


def label_breakdown(results: Sequence["TestResult"]) -> list[LabelSummary]:
    """Per label and value, in order of first appearance: the share of results, scored as in the dataset's mean."""
    groups: dict[tuple[str, str], list[TestResult]] = {}
    for r in results:
        for label, value in (r.labels or {}).items():
            groups.setdefault((label, value), []).append(r)
    out = []
    for (label, value), rs in groups.items():
        scored = [r for r in rs if r.status != "unscored"]
        values = [r.normalized if r.status == "ok" else 0.0 for r in scored]
        distances = [r.memory_distance for r in rs if r.memory_distance is not None]
        out.append(LabelSummary(label=label, value=value, tests=len(rs), scored=len(scored),
                                unscored=sum(r.status == "unscored" for r in rs),
                                errored=sum(r.status == "errored" for r in rs),
                                score=statistics.fmean(values) if values else 0.0,
                                memory_distance=statistics.fmean(distances) if distances else None))
    return out


class DatasetSummary(BaseModel):

    dataset: str
    tests: int
    scored: int
    unscored: int
    errored: int
    # mean normalised score of the scored tests, by the headline's rule: None where nothing was scored, or where the
    # dataset's headline has no value (BEAM's mean of ten abilities over the one a rule decided); `score_covers`
    # says what it is over when that is not every test (format 5; before, 0.0 over nothing, read back as None)
    score: float | None
    std: float
    score_covers: OmitNone[str] = None
    target_gap: float | None
    achieved_gap: float | None
    memory_distance: float | None = None  # mean memory distance of its tests (None: not measured)
    curve: list[GapPoint] = Field(default_factory=list)  # score vs achieved gap, one point per scored test
    curve_bins: list[GapBin] = Field(default_factory=list)  # the same, mean score per gap bin
    breakdown: OmitNone[list[LabelSummary]] = None  # per label value (categories, question types), when results carry labels
    metrics: OmitNone[dict[str, float]] = None  # the benchmark's own named numbers (DatasetInterface.summary_metrics)
    # the metrics the dataset is quoted by, declared by it (results/headline.py); None in results before format 4
    headline: OmitNone[DatasetHeadline] = None
    # of the unscored, those an imported answers file has no answer for (None: none, or results before it was counted)
    not_answered: OmitNone[int] = None

    @model_validator(mode="before")
    @classmethod
    def _nothing_scored_is_none(cls, data: Any) -> Any:
        """A summary written before format 5 says 0.0 for a dataset with nothing scored: that is no score."""
        if isinstance(data, dict) and data.get("scored") == 0 and data.get("score") is not None:
            data = {**data, "score": None}
        return data

    def quoted(self, judged: bool) -> DatasetHeadline:
        """Its headline; for results written before headlines (format 3 or older), the mean score as the GoodAI
        benchmark's datasets have it (a benchmark scored question by question: without the GoodAI columns)."""
        if self.headline is not None:
            return self.headline
        spec = GOODAI if self.breakdown is None else Headline(metrics=[Metric(name="score")], question="question")
        value = MetricValue(name="score", value=self.score if self.scored else None, scored=self.scored,
                            tests=self.tests)
        return DatasetHeadline(spec=spec, judged=judged, values=[value])


class QuestionProtocol(BaseModel):
    """How the questions a benchmark asks independently (LoCoMo's and BEAM's reference protocol) were asked."""

    independent: int  # answered, then the agent went back to its state before the question
    in_sequence: int  # the agent cannot go back: asked after the earlier questions and answers

    def warning(self, agent: str) -> str | None:
        """The line the run's warnings and the report show when some were asked in sequence (None: none was)."""
        if not self.in_sequence:
            return None
        return (f"agent {agent} cannot go back to its state before a question (no snapshot/rewind), so "
                f"{self.in_sequence} question{'s' if self.in_sequence != 1 else ''} the benchmark asks independently "
                "were asked in sequence, each after the earlier questions and answers: not the reference protocol")


class AgentSummary(BaseModel):

    format: int = RESULTS_FORMAT
    agent: str
    benchmark_score: float  # sum over datasets of the mean normalised score
    max_benchmark_score: int
    ltm_score: float  # mean achieved gap of the perfectly answered tests (0 if none): GoodAI datasets' number
    # the same on memory distances: mean memory distance of the perfectly answered tests (None: results written
    # before memory distances were measured)
    ltm_score_memory_distance: float | None = None
    datasets: list[DatasetSummary]
    turns: int
    filler_turns: int
    observed_turns: int = 0  # turns of history that needed no reply (an OpenAI-compatible agent made no call)
    conversation_tokens: int
    agent_prompt_tokens: int
    agent_completion_tokens: int
    cost_usd: float  # all roles: the agent, the judge, generation and test programs' LLM calls
    cost_split: dict[str, float] = Field(default_factory=dict)  # role -> USD
    usage: UsageTotals = Field(default_factory=UsageTotals)  # LLM calls, tokens, retries and cache hits per role
    wall_seconds: float
    failed_turns: int = 0  # turns the agent answered in no attempt (their tests are errored)
    error: str | None = None  # why a session stopped early (the watchdog, or the agent failing turn after turn)
    questions: OmitNone[QuestionProtocol] = None  # questions asked independently, if any (left out otherwise)
    usage_note: OmitNone[str] = None  # what the agent's usage leaves out (`Agent.usage_note`; left out when nothing)

    @property
    def scored_datasets(self) -> int:
        """The datasets with a score: the benchmark score's maximum as shown (a dataset with nothing scored has no
        mean, so it adds nothing to the sum and is said apart, never counted as 0)."""
        return sum(1 for d in self.datasets if d.scored and d.score is not None)

    def ltm_score_on(self, basis: DistanceBasis) -> float | None:
        """The LTM score on achieved gaps ("gap") or on memory distances (None: not in this summary's format)."""
        return self.ltm_score if basis == "gap" else self.ltm_score_memory_distance

    def ltm_tests(self, basis: DistanceBasis = "gap") -> int:
        """How many tests the LTM score on `basis` averages: the perfectly answered ones with that distance (read
        from the datasets' curves, which hold a point per scored test)."""
        return sum(1 for d in self.datasets for p in d.curve
                   if p.score >= 1.0 and (basis == "gap" or p.memory_distance is not None))


class RunSummary(BaseModel):
    format: int = RESULTS_FORMAT
    run_name: str
    seed: int
    isolated: bool
    judge: str | None = None  # the judge model, when answers were judged
    agents: list[AgentSummary]
    errors: dict[str, str] = Field(default_factory=dict)  # agent -> why it did not finish


def ltm_score(results: Sequence[TestResult], basis: DistanceBasis = "gap") -> float:
    """The LTM score: the mean distance of the perfectly answered tests (0 if none), the distance being the
    achieved gap (as the reference benchmark) or the memory distance (`basis`). Tests without that distance
    are left out."""
    perfect = [d for r in results if r.status == "ok" and r.normalized >= 1.0 and (d := r.distance(basis)) is not None]
    return statistics.fmean(perfect) if perfect else 0.0


def dataset_score(values: Sequence[float], tests: int, headline: DatasetHeadline | None) -> tuple[float | None, str | None]:
    """A dataset's `score` by the headline's rule, and what it covers when that is not every test: None over nothing
    scored, and None where the headline's leading number has no value over what was scored (it is not quoted)."""
    if not values:
        return None, f"nothing scored of {tests:,} tests" if tests else None
    lead = headline.values[0] if headline is not None and headline.values else None
    if lead is not None and lead.value is None:
        return None, (f"not quoted: its headline ({lead.name}) has no value over the {len(values):,} of {tests:,} "
                      "tests scored")
    covers = None if len(values) == tests else f"{len(values):,} of {tests:,} tests scored"
    return statistics.fmean(values), covers


def benchmark_score(datasets: Sequence[DatasetSummary]) -> float:
    """The sum of the datasets' scores, over those that have one."""
    return float(sum(d.score for d in datasets if d.score is not None))


DatasetMetrics = Callable[[str, list[TestResult]], dict[str, float]]
DatasetHeadlines = Callable[[str, list[TestResult]], DatasetHeadline | None]


def summarize_datasets(results: Sequence[TestResult], metrics: DatasetMetrics | None = None,
                       headlines: DatasetHeadlines | None = None) -> list[DatasetSummary]:
    """Each dataset's summary of an agent's results, in the order of their names (see `summarize_agent`)."""
    by_dataset: dict[str, list[TestResult]] = {}
    for r in results:
        by_dataset.setdefault(r.dataset, []).append(r)
    datasets = []
    for name in sorted(by_dataset):
        rs = by_dataset[name]
        scored = [r for r in rs if r.status != "unscored"]
        values = [r.normalized if r.status == "ok" else 0.0 for r in scored]
        targets = [r.target_gap for r in rs if r.target_gap is not None]
        achieved = [r.achieved_gap for r in rs if r.achieved_gap is not None]
        distances = [r.memory_distance for r in rs if r.memory_distance is not None]
        curve, curve_bins = gap_curve(rs)
        named = metrics(name, rs) if metrics is not None else {}
        datasets.append(DatasetSummary(
            dataset=name,
            tests=len(rs),
            scored=len(scored),
            unscored=sum(r.status == "unscored" for r in rs),
            errored=sum(r.status == "errored" for r in rs),
            score=None,
            std=statistics.pstdev(values) if len(values) > 1 else 0.0,
            target_gap=statistics.fmean(targets) if targets else None,
            achieved_gap=statistics.fmean(achieved) if achieved else None,
            memory_distance=statistics.fmean(distances) if distances else None,
            curve=curve,
            curve_bins=curve_bins,
            breakdown=label_breakdown(rs) or None,
            metrics=named or None,
            headline=headlines(name, rs) if headlines is not None else None,
            not_answered=sum(r.status == "unscored" and NOT_ANSWERED_REASON in r.reasons for r in rs) or None,
        ))
        datasets[-1].score, datasets[-1].score_covers = dataset_score(values, len(rs), datasets[-1].headline)
    return datasets


def summarize_agent(agent: str, results: list[TestResult], metrics: DatasetMetrics | None = None,
                    headlines: DatasetHeadlines | None = None, **stats: Any) -> AgentSummary:
    """An agent's summary; `metrics(dataset, its results)`: the dataset's own named numbers, if any;
    `headlines(dataset, its results)`: the metrics it is quoted by."""
    datasets = summarize_datasets(results, metrics, headlines)
    return AgentSummary(
        agent=agent,
        benchmark_score=benchmark_score(datasets),
        max_benchmark_score=len(datasets),
        ltm_score=ltm_score(results, "gap"),
        ltm_score_memory_distance=ltm_score(results, "memory_distance"),
        datasets=datasets,
        **stats,
    )
