"""Two sets of right/wrong verdicts on the same questions, compared: each one's share right on the questions both
judged, and the exact McNemar test on the questions they disagree on. Used for two publishers' own judges' verdicts
(imported answers, `import-answers`): their J against each other, on their verdicts, never ours."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ltm_harness._stats.resample import mcnemar_exact


@dataclass(frozen=True)
class VerdictPair:
    """A and B on the questions both have a verdict for."""

    questions: int
    right_a: float  # share judged right, over `questions`
    right_b: float
    only_a: int  # questions only A got right
    only_b: int
    p: float  # exact McNemar, two-sided


def verdict_pair(a: Mapping[str, bool], b: Mapping[str, bool]) -> VerdictPair | None:
    """A's and B's verdicts (question id -> judged right) compared on the questions both have (None: none)."""
    common = sorted(set(a) & set(b))
    if not common:
        return None
    va, vb = [a[q] for q in common], [b[q] for q in common]
    only_a, only_b, p = mcnemar_exact(va, vb)
    return VerdictPair(len(common), sum(va) / len(common), sum(vb) / len(common), only_a, only_b, p)
