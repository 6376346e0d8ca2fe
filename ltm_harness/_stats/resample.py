"""The numbers behind the statistics: bootstrap intervals of a mean (over questions, or over conversations), the
paired difference of two agents with its intervals, exact McNemar for right/wrong scores and a paired sign-flip
permutation test for graded ones. Pure functions of plain sequences; every random draw comes from a numpy Generator
seeded by the caller, so the same scores always give the same numbers.

numpy (not scipy): the resampling is a few vectorised lines with numpy, and the exact parts need no library at all
(McNemar's binomial tail is summed in integers with `math.comb`; the exact sign-flip distribution is enumerated),
so scipy would add ~40 MB for nothing the numbers need.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

import numpy as np

LEVEL = 0.95  # every interval is a 95% percentile interval
BOOTSTRAP = 2000  # resamples per interval
PERMUTATIONS = 10000  # random sign flips when the exact enumeration is too large
EXACT_FLIPS = 16  # up to this many non-zero differences, every sign flip is enumerated (2^16 = 65,536)
_CHUNK = 250  # resamples drawn at a time, so memory stays bounded (~250 x n indices)
_EPS = 1e-9  # scores are means of floats: differences this small are ties


def _bounds(draws: np.ndarray) -> tuple[float, float]:
    tail = (1.0 - LEVEL) / 2
    lo, hi = np.quantile(draws, [tail, 1.0 - tail])
    return float(lo), float(hi)


def _cluster_sums(values: np.ndarray, clusters: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per cluster (in order of first appearance): the sum of its values and how many it has."""
    index: dict[str, int] = {}
    ids = np.fromiter((index.setdefault(c, len(index)) for c in clusters), dtype=np.int64, count=len(clusters))
    sums = np.bincount(ids, weights=values, minlength=len(index))
    counts = np.bincount(ids, minlength=len(index)).astype(float)
    return sums, counts


def bootstrap_mean(values: Sequence[float], rng: np.random.Generator, resamples: int = BOOTSTRAP) -> tuple[float, float] | None:
    """95% percentile interval of the mean, resampling the values (questions) with replacement. None for no values."""
    x = np.asarray(values, dtype=float)
    n = len(x)
    if n == 0:
        return None
    means = np.empty(resamples)
    for start in range(0, resamples, _CHUNK):
        rows = min(_CHUNK, resamples - start)
        means[start:start + rows] = x[rng.integers(0, n, size=(rows, n))].mean(axis=1)
    return _bounds(means)


def cluster_bootstrap_mean(values: Sequence[float], clusters: Sequence[str], rng: np.random.Generator,
                           resamples: int = BOOTSTRAP) -> tuple[float, float] | None:
    """95% percentile interval of the mean over questions, resampling whole clusters (conversations) with replacement:
    each resample is the total of the drawn clusters' values over their total count. None for no values."""
    x = np.asarray(values, dtype=float)
    if len(x) == 0:
        return None
    sums, counts = _cluster_sums(x, clusters)
    k = len(sums)
    means = np.empty(resamples)
    for start in range(0, resamples, _CHUNK):
        rows = min(_CHUNK, resamples - start)
        drawn = rng.integers(0, k, size=(rows, k))
        means[start:start + rows] = sums[drawn].sum(axis=1) / counts[drawn].sum(axis=1)
    return _bounds(means)


def mcnemar_exact(right_a: Sequence[bool], right_b: Sequence[bool]) -> tuple[int, int, float]:
    """Exact McNemar test on paired right/wrong scores: (b, c, two-sided p), b the questions only A got right, c those
    only B got right; p = min(1, 2 P(X <= min(b, c))) with X ~ Binomial(b + c, 1/2), summed exactly in integers."""
    b = sum(1 for x, y in zip(right_a, right_b) if x and not y)
    c = sum(1 for x, y in zip(right_a, right_b) if y and not x)
    n = b + c
    if n == 0:
        return b, c, 1.0
    tail = Fraction(sum(math.comb(n, i) for i in range(min(b, c) + 1)), 2 ** n)
    return b, c, float(min(Fraction(1), 2 * tail))


@dataclass(frozen=True)
class SignFlip:
    p_value: float
    exact: bool  # every sign flip enumerated (else `flips` random ones)
    flips: int


def sign_flip_test(differences: Sequence[float], rng: np.random.Generator,
                   permutations: int = PERMUTATIONS) -> SignFlip:
    """Paired permutation test of "no difference": under it each paired difference is as likely negated, so the
    observed |sum| is compared with the |sum| under every (or `permutations` random) sign flips. Exact when at most
    EXACT_FLIPS differences are non-zero (p = share of flips at least as extreme); otherwise Monte Carlo with the
    add-one estimate (1 + hits) / (1 + flips), which never gives 0."""
    d = np.asarray([x for x in differences if abs(x) > _EPS], dtype=float)
    m = len(d)
    if m == 0:
        return SignFlip(1.0, True, 1)
    observed = abs(d.sum())
    if m <= EXACT_FLIPS:
        bits = (np.arange(2 ** m)[:, None] >> np.arange(m)[None, :]) & 1
        sums = np.abs(((1 - 2 * bits) * d[None, :]).sum(axis=1))
        hits = int((sums >= observed - _EPS).sum())
        return SignFlip(hits / 2 ** m, True, 2 ** m)
    hits = 0
    for start in range(0, permutations, _CHUNK):
        rows = min(_CHUNK, permutations - start)
        signs = (1 - 2 * rng.integers(0, 2, size=(rows, m), dtype=np.int8)).astype(float)
        hits += int((np.abs(signs @ d) >= observed - _EPS).sum())
    return SignFlip((1 + hits) / (1 + permutations), False, permutations)
