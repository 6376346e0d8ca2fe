"""Statistics of results: for each agent, dataset and label value (overall, per category or question type) the mean
score with its 95% bootstrap intervals, by question and by conversation; for each pair of agents the paired
difference on the questions scored for both, with its intervals, a paired test and the per-question wins, losses and
ties. Computed from `TestResult`s only (never from report text), seeded by what each number is about, so the same
results always give the same numbers, whatever else is in the report.

A question's score is its normalised score; an errored question counts 0 and an unscored one is left out, as in the
dataset's mean. A result's conversation is its `group` (the benchmark test it is a part of: a LoCoMo or BEAM
conversation); a result with none is a conversation of its own, and where every conversation holds one question
there is no interval by conversation (it would be the one by question).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from itertools import combinations
from typing import Collection, Literal, Mapping, Sequence

import numpy as np
from pydantic import BaseModel

from ltm_harness._results.models import TestResult
from ltm_harness._stats.resample import (BOOTSTRAP, EXACT_FLIPS, LEVEL, PERMUTATIONS, bootstrap_mean,
                                         cluster_bootstrap_mean, mcnemar_exact, sign_flip_test)

ALL = "all"  # the `value` of a dataset's overall row
JUDGE, VERDICTS = "judge", "verdicts"  # (by, value) of the row over the judge's verdicts (LoCoMo's J)
MAX_PAIRED_AGENTS = 8  # pairs are formed among the first 8 agents of a report (28 pairs)
_TIE = 1e-9


@dataclass(frozen=True)
class Scored:
    """One agent's results as a report shows them: its label (unique in the report), run and spec."""

    label: str
    run: str
    agent: str
    results: Sequence[TestResult]
    # per dataset, its label values in the benchmark's own order (LoCoMo's categories 1 to 5); others after, as found
    orders: Mapping[str, Sequence[str]] = field(default_factory=dict)


class IntervalRow(BaseModel):
    """An agent's mean on a dataset (by = "", value = "all") or on one label value, with both 95% intervals."""

    run: str
    agent: str
    label: str
    dataset: str
    by: str  # the label's name (category, type, ...); "" for the dataset's overall mean; "judge" (value "verdicts"):
    # the share judged correct, over the judged questions (LoCoMo's J), when the verdicts are not the score itself
    value: str
    questions: int  # scored questions the mean is over
    conversations: int  # the conversations they come from
    mean: float | None  # None: nothing scored
    question_low: float | None  # 95% bootstrap interval, resampling questions
    question_high: float | None
    conversation_low: float | None  # 95% bootstrap interval, resampling conversations (None: one question each)
    conversation_high: float | None


class PairRow(BaseModel):
    """Agent A against agent B on the questions of a dataset (or label value) scored for both."""

    dataset: str
    by: str
    value: str
    a: str  # labels as in the report
    b: str
    questions: int  # scored for both: the only ones compared
    conversations: int
    mean_a: float | None
    mean_b: float | None
    difference: float | None  # mean of A - B
    question_low: float | None  # 95% paired bootstrap interval of the difference, resampling questions
    question_high: float | None
    conversation_low: float | None  # the same resampling conversations (None: one question each)
    conversation_high: float | None
    test: str  # "exact McNemar", "sign-flip permutation (exact)", "sign-flip permutation (10000 random flips)", ""
    p_value: float | None
    wins: int  # questions where A scored higher
    losses: int  # where B scored higher
    ties: int


class OutcomeRow(BaseModel):
    """One question scored for both agents of a pair: who scored higher."""

    dataset: str
    example_id: str
    a: str
    b: str
    score_a: float
    score_b: float
    outcome: Literal["win", "loss", "tie"]  # from A's side


@dataclass
class Statistics:
    intervals: list[IntervalRow]
    pairs: list[PairRow]
    outcomes: list[OutcomeRow]

    def __bool__(self) -> bool:
        return bool(self.intervals)


def _rng(*key: str) -> np.random.Generator:
    """A generator seeded by what the number is about (not by its place in the report)."""
    digest = hashlib.sha256("\x1f".join(key).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def _value(r: TestResult, by: str = "") -> float:
    if by == JUDGE:
        return r.verdicts[0].score if r.verdicts else 0.0
    return r.normalized if r.status == "ok" else 0.0


def _judged(results: Sequence[TestResult]) -> list[TestResult]:
    return [r for r in results if r.status != "unscored" and len(r.verdicts) == 1]


def judged_apart(agents: Sequence["Scored"]) -> set[str]:
    """The datasets whose questions are judged beside their score (LoCoMo's J: a CORRECT/WRONG verdict on F1-scored
    questions), told by a verdict that differs from its question's score for some agent; not those where the verdict
    is the score itself (LongMemEval's judged accuracy), which the other rows already cover."""
    return {r.dataset for s in agents for r in _judged(s.results) if abs(r.verdicts[0].score - _value(r)) > _TIE}


def _cluster(r: TestResult) -> str:
    return r.group if r.group is not None else f"\x00{r.example_id}"


def _groups(results: Sequence[TestResult], apart: bool = False,
            order: Sequence[str] = ()) -> dict[tuple[str, str], list[TestResult]]:
    """The scored results of one dataset: overall, then per label value (labels in order of first appearance, each
    label's values in `order` first, the benchmark's own, then in order of first appearance)."""
    scored = [r for r in results if r.status != "unscored"]
    found: dict[tuple[str, str], list[TestResult]] = {}
    for r in scored:
        for name, value in (r.labels or {}).items():
            found.setdefault((name, value), []).append(r)
    labels = list(dict.fromkeys(name for name, _ in found))
    rank = {v: i for i, v in enumerate(order)}
    out: dict[tuple[str, str], list[TestResult]] = {("", ALL): scored}
    for name in labels:
        mine = [key for key in found if key[0] == name]
        for key in sorted(mine, key=lambda k: (rank.get(k[1], len(rank)), mine.index(k))):
            out[key] = found[key]
    if apart and (judged := _judged(scored)):
        out[(JUDGE, VERDICTS)] = judged
    return out


def _by_dataset(results: Sequence[TestResult]) -> dict[str, list[TestResult]]:
    out: dict[str, list[TestResult]] = {}
    for r in results:
        out.setdefault(r.dataset, []).append(r)
    return dict(sorted(out.items()))


def _has_conversations(clusters: Sequence[str]) -> bool:
    return len(set(clusters)) < len(clusters)


def interval_rows(s: Scored, apart: Collection[str] = ()) -> list[IntervalRow]:
    rows = []
    for dataset, results in _by_dataset(s.results).items():
        labelled = {(name, value) for r in results for name, value in (r.labels or {}).items()}
        for (by, value), rs in _groups(results, dataset in apart, s.orders.get(dataset, ())).items():
            values = [_value(r, by) for r in rs]
            clusters = [_cluster(r) for r in rs]
            key = (s.run, s.agent, dataset, by, value)
            q = bootstrap_mean(values, _rng("question", *key))
            c = cluster_bootstrap_mean(values, clusters, _rng("conversation", *key)) \
                if _has_conversations(clusters) else None
            rows.append(IntervalRow(run=s.run, agent=s.agent, label=s.label, dataset=dataset, by=by, value=value,
                                    questions=len(values), conversations=len(set(clusters)),
                                    mean=float(np.mean(values)) if values else None,
                                    question_low=q[0] if q else None, question_high=q[1] if q else None,
                                    conversation_low=c[0] if c else None, conversation_high=c[1] if c else None))
        # a label value none of whose questions was scored: shown as nothing scored, never as 0
        seen = {(r.by, r.value) for r in rows if r.dataset == dataset}
        for by, value in sorted(labelled - seen):
            rows.append(IntervalRow(run=s.run, agent=s.agent, label=s.label, dataset=dataset, by=by, value=value,
                                    questions=0, conversations=0, mean=None, question_low=None, question_high=None,
                                    conversation_low=None, conversation_high=None))
    return rows


def _binary(values: Sequence[float]) -> bool:
    return all(v in (0.0, 1.0) for v in values)


def _test_name(binary: bool, exact: bool, flips: int) -> str:
    if binary:
        return "exact McNemar"
    return "sign-flip permutation (exact)" if exact else f"sign-flip permutation ({flips} random flips)"


def pair_rows(a: Scored, b: Scored, apart: Collection[str] = ()) -> tuple[list[PairRow], list[OutcomeRow]]:
    """A against B on every dataset both have, on the questions scored for both (by dataset and test id)."""
    rows: list[PairRow] = []
    outcomes: list[OutcomeRow] = []
    a_sets, b_sets = _by_dataset(a.results), _by_dataset(b.results)
    for dataset in [d for d in a_sets if d in b_sets]:
        theirs = {r.example_id: r for r in b_sets[dataset] if r.status != "unscored"}
        for (by, value), rs in _groups(a_sets[dataset], dataset in apart, a.orders.get(dataset, ())).items():
            both = [(r, theirs[r.example_id]) for r in rs if r.example_id in theirs]
            if by == JUDGE:  # verdicts only where both were judged
                both = [(x, y) for x, y in both if y.verdicts]
            va = [_value(x, by) for x, _ in both]
            vb = [_value(y, by) for _, y in both]
            diffs = [x - y for x, y in zip(va, vb)]
            clusters = [_cluster(x) for x, _ in both]
            key = (a.run, a.agent, b.run, b.agent, dataset, by, value)
            q = bootstrap_mean(diffs, _rng("pair-question", *key))
            c = cluster_bootstrap_mean(diffs, clusters, _rng("pair-conversation", *key)) \
                if _has_conversations(clusters) else None
            wins = sum(d > _TIE for d in diffs)
            losses = sum(d < -_TIE for d in diffs)
            test, p = "", None
            if both:
                if _binary(va) and _binary(vb):
                    p = mcnemar_exact([x == 1.0 for x in va], [y == 1.0 for y in vb])[2]
                    test = _test_name(True, True, 0)
                else:
                    flip = sign_flip_test(diffs, _rng("pair-test", *key))
                    p, test = flip.p_value, _test_name(False, flip.exact, flip.flips)
            rows.append(PairRow(dataset=dataset, by=by, value=value, a=a.label, b=b.label, questions=len(both),
                                conversations=len(set(clusters)),
                                mean_a=float(np.mean(va)) if va else None, mean_b=float(np.mean(vb)) if vb else None,
                                difference=float(np.mean(diffs)) if diffs else None,
                                question_low=q[0] if q else None, question_high=q[1] if q else None,
                                conversation_low=c[0] if c else None, conversation_high=c[1] if c else None,
                                test=test, p_value=p, wins=wins, losses=losses, ties=len(diffs) - wins - losses))
            if by == "":
                outcomes += [OutcomeRow(dataset=dataset, example_id=x.example_id, a=a.label, b=b.label, score_a=sa,
                                        score_b=sb, outcome="win" if sa - sb > _TIE else "loss" if sb - sa > _TIE else "tie")
                             for (x, _), sa, sb in zip(both, va, vb)]
    return rows, outcomes


def compute_statistics(agents: Sequence[Scored]) -> Statistics:
    """Intervals for every agent; pairs among the first MAX_PAIRED_AGENTS agents (in the order given)."""
    apart = judged_apart(agents)
    intervals = [row for s in agents for row in interval_rows(s, apart)]
    pairs: list[PairRow] = []
    outcomes: list[OutcomeRow] = []
    for a, b in combinations(agents[:MAX_PAIRED_AGENTS], 2):
        p, o = pair_rows(a, b, apart)
        pairs += p
        outcomes += o
    return Statistics(intervals, pairs, outcomes)


METHOD = (f"{LEVEL:.0%} percentile bootstrap intervals ({BOOTSTRAP} resamples, seeded): 'by question' resamples the "
          "scored questions, 'by conversation' resamples whole conversations (questions of one conversation are not "
          "independent, so this one is the honest interval where a benchmark has few conversations). Paired tests on "
          "the questions scored for both agents: exact McNemar (binomial) when both scored right/wrong, else a "
          f"sign-flip permutation test (exact up to {EXACT_FLIPS} differing questions, else {PERMUTATIONS} seeded "
          "random flips). They measure these questions, not all conversations one might have.")
