"""BEAM's scoring arithmetic: rubric items to a question's score, event ordering by alignment, Kendall tau-b and F1,
the abstention rule, in our default form and in the reference's (`variant="reference"`), side by side.

Rubric questions (nine abilities): a judge scores each rubric item 1 (fully there), 0.5 (partly) or 0 (not there);
the question's score is the mean over its items. As the published code is written it adds `int(score)`, so a 0.5
counts as 0 (`variant="reference"` does the same).

Event ordering: the answer is split into lines (ours: its non-blank lines; the reference: `split("\\n")`, blank
lines included), each line aligned to the first still-unused gold event a judge says is the same event and replaced
by it (`align`); then, as the reference's `event_ordering_score`: precision, recall and F1 of the aligned set, and
Kendall tau-b between the ranks of the union of items in the gold order and in the answer's order (an item missing
from one side takes the shared last rank), normalised as (tau + 1) / 2. Our question score is tau_norm x F1 (the
reference's `final_score`: the right events in the right order); the published tables use tau_norm alone
(`variant="reference"`). tau-b is undefined when a side's ranks are all equal (a union of one item): ours then
scores the order 1 when the one event is named, else 0; the reference's scipy call gives NaN (left unscored here).

scipy is not a dependency of the harness, so tau-b is computed here (`kendall_tau_b`, scipy's variant "b": ties
corrected in both rankings); tests check it against a brute-force count of pairs and scipy's documented values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Awaitable, Callable, Literal, Sequence

from ltm_harness._interop.longmemeval.scoring import abstains

Variant = Literal["ours", "reference"]


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's tau-b of two equally long rankings: (sum of sign products over pairs) / sqrt((n0 - n1)(n0 - n2)),
    n0 the pairs, n1/n2 the pairs tied in x/y. None when undefined (fewer than 2 items, or a ranking all ties)."""
    n = len(x)
    if n != len(y):
        raise ValueError("the two rankings differ in length")
    s = 0
    for i in range(n):
        for j in range(i + 1, n):
            s += _sign(x[i] - x[j]) * _sign(y[i] - y[j])
    n0 = n * (n - 1) // 2
    n1 = sum(t * (t - 1) // 2 for t in _ties(x))
    n2 = sum(t * (t - 1) // 2 for t in _ties(y))
    denominator = (n0 - n1) * (n0 - n2)
    if denominator <= 0:
        return None
    return s / math.sqrt(denominator)


def _sign(v: float) -> int:
    return (v > 0) - (v < 0)


def _ties(values: Sequence[float]) -> list[int]:
    counts: dict[float, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return [c for c in counts.values() if c > 1]


def order_ranks(gold: Sequence[str], answer: Sequence[str]) -> tuple[list[int], list[int]]:
    """The ranks the reference compares: over the union of both lists (gold first, each item once), each item's
    position (1-based; a repeated item's last) in each list, or the shared last rank (union size + 1) when missing."""
    union = list(dict.fromkeys([*gold, *answer]))
    tie = len(union) + 1

    def ranks(seq: Sequence[str]) -> list[int]:
        at = {item: i + 1 for i, item in enumerate(seq)}
        return [at.get(u, tie) for u in union]

    return ranks(gold), ranks(answer)


@dataclass(frozen=True)
class OrderScore:
    precision: float
    recall: float
    f1: float
    tau_norm: float | None  # None: tau-b undefined (see the module docstring)

    def score(self, variant: Variant) -> float | None:
        """The question's score: tau_norm x F1 (ours), tau_norm (the reference's tables); None: unscored."""
        if variant == "reference":
            return self.tau_norm
        tau = self.tau_norm if self.tau_norm is not None else (1.0 if self.f1 == 1.0 else 0.0)
        return tau * self.f1


def order_score(gold: Sequence[str], aligned: Sequence[str]) -> OrderScore:
    """Precision, recall, F1 and normalised tau-b of an aligned answer against the gold events (as the reference's
    `event_ordering_score` counts them: the set of shared items, answer items not in the gold, gold items missing)."""
    shared = len(set(gold) & set(aligned))
    extra = len([x for x in aligned if x not in gold])
    missing = len([x for x in gold if x not in aligned])
    precision = shared / (shared + extra) if shared + extra else 0.0
    recall = shared / (shared + missing) if shared + missing else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    tau = kendall_tau_b(*order_ranks(gold, aligned))
    return OrderScore(precision, recall, f1, None if tau is None else (tau + 1) / 2)


def answer_lines(response: str, variant: Variant) -> list[str]:
    """The answer's items: its non-blank lines, stripped (ours); every line, as is (the reference)."""
    if variant == "reference":
        return response.split("\n")
    return [line.strip() for line in response.split("\n") if line.strip()]


async def align(gold: Sequence[str], lines: Sequence[str],
                same_event: Callable[[str, str], Awaitable[bool]]) -> list[str]:
    """Each line replaced by the first still-unused gold event that `same_event(gold_event, line)` matches (the
    reference's `align_with_llm`: lines in order, gold events in order, one judge call per pair tried)."""
    used: set[int] = set()
    out: list[str] = []
    for line in lines:
        match = None
        for k, event in enumerate(gold):
            if k not in used and await same_event(event, line):
                match = k
                break
        if match is None:
            out.append(line)
        else:
            used.add(match)
            out.append(gold[match])
    return out


def rubric_score(item_scores: Sequence[float], variant: Variant) -> float:
    """The mean of the items' scores; the reference's arithmetic truncates each with int() first (0.5 -> 0)."""
    if not item_scores:
        raise ValueError("a question with no rubric item has no score")
    values = [float(int(s)) for s in item_scores] if variant == "reference" else list(item_scores)
    return sum(values) / len(values)


def rule_verdict(ability: str, response: str) -> float | None:
    """Without a judge: 1.0 for a clear abstention on an abstention question; None (unscored) otherwise."""
    if ability == "abstention" and response.strip() and abstains(response):
        return 1.0
    return None


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None
