"""The statistics of two agents on a LoCoMo-shaped file (made up by benchmarks/locomo_stats.py: conversations of
dated sessions, questions of every category), checked against independent computations from the same results:
McNemar by hand from the binomial, the sign-flip p by slow enumeration, the cluster bootstrap redone in plain Python
on the same draws, and the shown means equal to the run's own."""

from __future__ import annotations

import itertools
import math
import statistics
from pathlib import Path

import pytest

from ltm_harness._api import run_async
from ltm_harness._stats import Scored, compute_statistics
from ltm_harness._stats.compute import _rng
from ltm_harness._stats.resample import BOOTSTRAP, EXACT_FLIPS
from ltm_harness.testing import load_script

ROOT = Path(__file__).resolve().parents[2]
shaped = load_script(ROOT / "benchmarks" / "locomo_stats.py", "locomo_stats")


@pytest.fixture(scope="module")
def two_agents(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("locomo-stats")
    data = shaped.write_file(tmp / "locomo-shaped.json", conversations=6, questions=16, seed=3)
    cfg = {"config": {"run_name": "stats", "seed": 0},
           "datasets": {"args": {"memory_span": 4000, "dataset_examples": 6},
                        "datasets": [{"name": "locomo", "args": {"mode": "reference", "data_file": str(data)}}]}}
    import asyncio

    out = asyncio.run(run_async(cfg, ["oracle@700", "recent:400"], results=tmp / "results"))
    return {a: out.results(a) for a in ("oracle@700", "recent:400")}


def value(r) -> float:
    return r.normalized if r.status == "ok" else 0.0


def test_the_means_and_the_conversations_are_those_of_the_run(two_agents):
    stats = compute_statistics([Scored(a, "stats", a, rs) for a, rs in two_agents.items()])
    for agent, results in two_agents.items():
        row = next(r for r in stats.intervals if r.agent == agent and r.by == "")
        scored = [r for r in results if r.status != "unscored"]
        assert row.questions == len(scored) and row.conversations == 6
        assert row.mean == pytest.approx(statistics.fmean(value(r) for r in scored))
        assert row.question_low <= row.mean <= row.question_high
        assert row.conversation_low is not None and row.conversation_high is not None


def test_the_cluster_bootstrap_is_the_ratio_of_drawn_conversations_totals_redone_in_plain_python(two_agents):
    results = [r for r in two_agents["recent:400"] if r.status != "unscored"]
    stats = compute_statistics([Scored("recent:400", "stats", "recent:400", two_agents["recent:400"])])
    row = next(r for r in stats.intervals if r.by == "")
    # the same draws (same seed, same chunks), the arithmetic and the percentiles in plain Python
    conversations = list(dict.fromkeys(r.group for r in results))
    totals = {c: sum(value(r) for r in results if r.group == c) for c in conversations}
    counts = {c: sum(1 for r in results if r.group == c) for c in conversations}
    rng = _rng("conversation", "stats", "recent:400", "locomo", "", "all")
    means = []
    for start in range(0, BOOTSTRAP, 250):
        for drawn in rng.integers(0, len(conversations), size=(min(250, BOOTSTRAP - start), len(conversations))):
            picked = [conversations[i] for i in drawn]
            means.append(sum(totals[c] for c in picked) / sum(counts[c] for c in picked))
    cuts = statistics.quantiles(means, n=40, method="inclusive")
    assert (row.conversation_low, row.conversation_high) == pytest.approx((cuts[0], cuts[-1]), abs=1e-12)


def test_the_paired_difference_and_its_tests_against_independent_computations(two_agents):
    a, b = two_agents["oracle@700"], two_agents["recent:400"]
    stats = compute_statistics([Scored("A", "stats", "oracle@700", a), Scored("B", "stats", "recent:400", b)])
    theirs = {r.example_id: r for r in b if r.status != "unscored"}
    for pair in stats.pairs:
        mine = [r for r in a if r.status != "unscored" and r.example_id in theirs
                and (pair.by == "" or (r.labels or {}).get(pair.by) == pair.value)]
        va = [value(r) for r in mine]
        vb = [value(theirs[r.example_id]) for r in mine]
        assert pair.questions == len(mine)
        if not mine:
            continue
        d = [x - y for x, y in zip(va, vb)]
        assert pair.difference == pytest.approx(sum(d) / len(d))
        assert (pair.wins, pair.losses) == (sum(x > 1e-9 for x in d), sum(x < -1e-9 for x in d))
        if pair.test == "exact McNemar":  # by hand: the binomial tail on the discordant questions
            assert set(va) | set(vb) <= {0.0, 1.0}
            n, k = pair.wins + pair.losses, min(pair.wins, pair.losses)
            assert pair.p_value == pytest.approx(min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n) if n else 1.0)
        elif pair.test == "sign-flip permutation (exact)":  # every sign flip, slowly
            nonzero = [x for x in d if abs(x) > 1e-9]
            assert len(nonzero) <= EXACT_FLIPS
            hits = sum(abs(sum(s * x for s, x in zip(signs, nonzero))) >= abs(sum(nonzero)) - 1e-9
                       for signs in itertools.product((1, -1), repeat=len(nonzero)))
            assert pair.p_value == pytest.approx(hits / 2 ** len(nonzero))
        else:
            assert pair.test.startswith("sign-flip permutation (10000 random flips)") and 0 < pair.p_value <= 1
    overall = next(p for p in stats.pairs if p.by == "")
    assert overall.conversations == 6 and overall.conversation_low is not None
    assert overall.question_low <= overall.difference <= overall.question_high


async def test_j_from_a_judged_locomo_run_has_its_interval_equal_to_the_summary_s_j(tmp_path, monkeypatch):
    from ltm_harness._llm.mock_server import MockLLMServer

    data = ROOT / "tests" / "data" / "locomo" / "synthetic.json"
    cfg = {"config": {"run_name": "judged", "seed": 0},
           "datasets": {"args": {"memory_span": 4000, "dataset_examples": 2},
                        "datasets": [{"name": "locomo", "args": {"data_file": str(data), "judge": "strict"}}]}}
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        out = await run_async(cfg, ["oracle", "null"], results=tmp_path, judge="mock-judge")
    stats = compute_statistics([Scored(a, "judged", a, out.results(a)) for a in ("oracle", "null")])
    for agent in ("oracle", "null"):
        j = next(r for r in stats.intervals if r.agent == agent and r.by == "judge")
        headline = out.agent_summary(agent).datasets[0].headline
        assert headline is not None
        quoted = next(v for v in headline.values if v.name.startswith("J ("))
        assert j.mean == pytest.approx(quoted.value) and j.questions == quoted.scored == 8
    pair = next(p for p in stats.pairs if p.by == "judge")
    assert pair.test == "exact McNemar" and pair.questions == 8 and pair.wins == 7
