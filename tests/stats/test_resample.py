"""The statistics' numbers checked against independent computations: every sign flip enumerated in plain Python,
McNemar's p from the binomial by hand, the bootstrap against its textbook normal approximation and against itself
(clusters of one question are questions)."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from ltm_harness._stats.resample import (EXACT_FLIPS, bootstrap_mean, cluster_bootstrap_mean, mcnemar_exact,
                                         sign_flip_test)


def slow_sign_flip_p(d: list[float]) -> float:
    """Every one of the 2^n sign assignments, in plain Python: the share with |sum| at least the observed one."""
    observed = abs(sum(d))
    hits = sum(abs(sum(s * x for s, x in zip(signs, d))) >= observed - 1e-9
               for signs in itertools.product((1, -1), repeat=len(d)))
    return hits / 2 ** len(d)


def test_exact_sign_flips_equal_a_slow_enumeration():
    rnd = random.Random(7)
    for n in (1, 3, 8, 12):
        d = [round(rnd.uniform(-1, 1), 3) for _ in range(n)]
        got = sign_flip_test(d, np.random.default_rng(0))
        assert got.exact and got.p_value == pytest.approx(slow_sign_flip_p(d), abs=1e-12)
    # zeros are ties: they do not change the test, and all-zero differences give p = 1
    assert sign_flip_test([0.5, 0.0, 0.25, 0.0], np.random.default_rng(0)).p_value == slow_sign_flip_p([0.5, 0.25])
    assert sign_flip_test([0.0, 0.0], np.random.default_rng(0)).p_value == 1.0
    # by hand: all of 4 differences positive: only the two all-same-sign flips reach |sum| -> 2/16
    assert sign_flip_test([0.1, 0.2, 0.3, 0.4], np.random.default_rng(0)).p_value == 2 / 16


def test_monte_carlo_sign_flips_approach_the_exact_p_and_are_seeded():
    rnd = random.Random(3)
    d = [round(rnd.uniform(-0.6, 1), 2) for _ in range(EXACT_FLIPS + 2)]  # 18: just over the exact limit
    exact = slow_sign_flip_p(d)
    got = sign_flip_test(d, np.random.default_rng(11), permutations=20000)
    assert not got.exact and got.flips == 20000
    assert got.p_value == pytest.approx(exact, abs=0.01)
    again = sign_flip_test(d, np.random.default_rng(11), permutations=20000)
    assert again == got  # same seed, same p


def binomial_p_by_hand(b: int, c: int) -> float:
    n, k = b + c, min(b, c)
    return min(1.0, 2 * sum(math.comb(n, i) * 0.5 ** n for i in range(k + 1)))


def test_mcnemar_is_the_exact_binomial_tail_on_the_discordant_pairs():
    # A right on 3 that B missed, B right on 1 that A missed, 2 concordant: p = 2 (1 + 4) / 16
    a = [True, True, True, False, True, False]
    b = [False, False, False, True, True, False]
    assert mcnemar_exact(a, b) == (3, 1, 0.625)
    rnd = random.Random(5)
    for _ in range(20):
        n = rnd.randint(1, 60)
        a = [rnd.random() < 0.6 for _ in range(n)]
        b = [rnd.random() < 0.4 for _ in range(n)]
        bb, cc, p = mcnemar_exact(a, b)
        assert bb == sum(x and not y for x, y in zip(a, b)) and cc == sum(y and not x for x, y in zip(a, b))
        assert p == pytest.approx(binomial_p_by_hand(bb, cc), rel=1e-12)
    assert mcnemar_exact([True, False], [True, False]) == (0, 0, 1.0)
    # a large imbalance: far below 0.05 (20 vs 2 discordant): 2 (C(22,0) + C(22,1) + C(22,2)) / 2^22
    assert mcnemar_exact([True] * 20 + [False] * 2, [False] * 20 + [True] * 2)[2] == 2 * (1 + 22 + 231) / 2 ** 22


def test_bootstrap_of_right_wrong_scores_matches_the_normal_approximation():
    values = [1.0] * 600 + [0.0] * 400
    lo, hi = bootstrap_mean(values, np.random.default_rng(1)) or (0, 0)
    half = 1.96 * math.sqrt(0.6 * 0.4 / 1000)
    assert lo == pytest.approx(0.6 - half, abs=0.006) and hi == pytest.approx(0.6 + half, abs=0.006)
    assert bootstrap_mean(values, np.random.default_rng(1)) == (lo, hi)  # seeded
    assert bootstrap_mean([0.4] * 5, np.random.default_rng(1)) == pytest.approx((0.4, 0.4))
    assert bootstrap_mean([], np.random.default_rng(1)) is None


def test_clusters_of_one_question_are_questions_and_correlated_clusters_widen_the_interval():
    rnd = random.Random(2)
    values = [rnd.random() for _ in range(200)]
    by_question = bootstrap_mean(values, np.random.default_rng(4))
    alone = cluster_bootstrap_mean(values, [str(i) for i in range(200)], np.random.default_rng(4))
    assert alone == by_question  # the same draws: a cluster of one is a question
    # 10 conversations of 20 questions each, every question of a conversation scored alike
    per_conversation = [rnd.random() for _ in range(10)]
    values = [per_conversation[i // 20] for i in range(200)]
    clusters = [f"conv-{i // 20}" for i in range(200)]
    q_lo, q_hi = bootstrap_mean(values, np.random.default_rng(4)) or (0, 0)
    c_lo, c_hi = cluster_bootstrap_mean(values, clusters, np.random.default_rng(4)) or (0, 0)
    assert c_hi - c_lo > 2.5 * (q_hi - q_lo)  # 10 independent units, not 200
    # unequal clusters: each resample is the drawn questions' mean (total over count), not a mean of means
    lo, hi = cluster_bootstrap_mean([1.0, 1.0, 1.0, 0.0], ["a", "a", "a", "b"], np.random.default_rng(0)) or (0, 0)
    assert lo == 0.0 and hi == 1.0 and cluster_bootstrap_mean([], [], np.random.default_rng(0)) is None
