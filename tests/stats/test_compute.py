"""Statistics computed from results: which questions count, which test is chosen, the conversations, the seeds."""

from __future__ import annotations

from ltm_harness._results.models import TestResult
from ltm_harness._scoring.verdict import JudgeVerdict
from ltm_harness._stats import Scored, compute_statistics
from ltm_harness._stats.resample import mcnemar_exact


def result(example_id: str, score: float, status: str = "ok", category: str = "single-hop",
           group: str | None = None, dataset: str = "locomo") -> TestResult:
    return TestResult(dataset=dataset, example_id=example_id, status=status, score=score, max_score=1.0,  # type: ignore[arg-type]
                      reasons=[], questions=["q"], responses=["r"], expected=["e"], memory_span=0, start_turn=0,
                      end_turn=0, tokens=0, labels={"category": category}, group=group)


def test_only_questions_scored_for_both_agents_are_compared_and_the_counts_say_so():
    a = [result(f"c{i // 5}.q{i}", float(i % 2), group=f"c{i // 5}") for i in range(20)]
    b = [result(f"c{i // 5}.q{i}", float(i % 3 == 0), group=f"c{i // 5}") for i in range(20)]
    b[0] = result("c0.q0", 0.0, status="unscored", group="c0")  # not compared, and not in B's mean
    a[19] = result("c3.q19", 0.0, status="errored", group="c3")  # errored: counts 0, as in the dataset's mean
    stats = compute_statistics([Scored("A", "run", "a", a), Scored("B", "run", "b", b)])
    overall = next(p for p in stats.pairs if p.by == "")
    assert overall.questions == 19 and overall.conversations == 4 and overall.test == "exact McNemar"
    va = [r.normalized if r.status == "ok" else 0.0 for r in a[1:]]
    vb = [r.normalized for r in b[1:]]
    assert overall.wins == sum(x > y for x, y in zip(va, vb)) and overall.losses == sum(x < y for x, y in zip(va, vb))
    assert overall.wins + overall.losses + overall.ties == 19
    assert overall.p_value == mcnemar_exact([x == 1 for x in va], [y == 1 for y in vb])[2]
    assert overall.difference is not None and abs(overall.difference - (sum(va) - sum(vb)) / 19) < 1e-12
    lo, hi = overall.question_low, overall.question_high
    assert lo is not None and hi is not None and lo <= overall.difference <= hi
    assert overall.conversation_low is not None  # 4 conversations of several questions each
    assert len([o for o in stats.outcomes]) == 19 and {o.outcome for o in stats.outcomes} <= {"win", "loss", "tie"}
    b_row = next(r for r in stats.intervals if r.agent == "b" and r.by == "")
    assert b_row.questions == 19 and b_row.conversations == 4
    assert b_row.mean is not None and abs(b_row.mean - sum(vb) / 19) < 1e-12


def test_graded_scores_get_the_permutation_test_and_nothing_scored_is_none_not_zero():
    a = [result(f"q{i}", (i % 7) / 7, category="multi-hop") for i in range(30)]
    b = [result(f"q{i}", (i % 5) / 5, category="multi-hop") for i in range(30)]
    a.append(result("q99", 0.0, status="unscored", category="adversarial"))
    stats = compute_statistics([Scored("A", "r", "a", a), Scored("B", "r", "b", b)])
    pair = next(p for p in stats.pairs if p.by == "")
    assert pair.test.startswith("sign-flip permutation") and pair.p_value is not None
    # results of a benchmark with no conversations (each question its own test): no interval by conversation
    assert pair.conversation_low is None and pair.conversations == 30
    empty = next(r for r in stats.intervals if r.agent == "a" and r.value == "adversarial")
    assert empty.questions == 0 and empty.mean is None and empty.question_low is None
    # seeded by what the number is about: the same whatever else is compared
    alone = compute_statistics([Scored("A", "r", "a", a)])
    assert alone.intervals == [r for r in stats.intervals if r.agent == "a"]
    assert compute_statistics([Scored("A", "r", "a", a), Scored("B", "r", "b", b)]) == stats


def verdict(score: float) -> JudgeVerdict:
    return JudgeVerdict(question="q", score=score, reason="", model="judge", prompt_hash="0" * 16, raw="")


def test_verdicts_beside_an_f1_score_get_rows_of_their_own_and_mcnemar_on_the_questions_judged_for_both():
    # LoCoMo's J: F1 is the score, the judge's CORRECT/WRONG is beside it (category 5 is not judged)
    a = [result(f"q{i}", 0.5) for i in range(12)]
    b = [result(f"q{i}", 0.25) for i in range(12)]
    for i in range(10):
        a[i].verdicts = [verdict(1.0 if i < 8 else 0.0)]
        if i < 9:
            b[i].verdicts = [verdict(1.0 if i < 3 else 0.0)]
    stats = compute_statistics([Scored("A", "r", "a", a), Scored("B", "r", "b", b)])
    row = next(r for r in stats.intervals if r.agent == "a" and r.by == "judge")
    assert (row.value, row.questions, row.mean) == ("verdicts", 10, 0.8)
    pair = next(p for p in stats.pairs if p.by == "judge")
    assert pair.questions == 9 and pair.test == "exact McNemar"  # judged for both: q0..q8
    assert (pair.wins, pair.losses) == (5, 0) and pair.p_value == 2 / 2 ** 5
    # where the verdict is the score (LongMemEval's judged accuracy), no extra rows
    c = [result(f"q{i}", float(i % 2)) for i in range(6)]
    for r in c:
        r.verdicts = [verdict(r.score)]
    assert not [r for r in compute_statistics([Scored("C", "r", "c", c)]).intervals if r.by == "judge"]


def test_one_conversation_gives_no_interval_by_conversation_and_two_or_three_say_they_are_few():
    from ltm_harness._report.stats_section import pair_lines, statistics_section
    one = [result(f"c0.q{i}", float(i % 3 == 0), group="c0") for i in range(15)]
    other = [result(f"c0.q{i}", float(i % 2 == 0), group="c0") for i in range(15)]
    stats = compute_statistics([Scored("A", "r", "a", one), Scored("B", "r", "b", other)])
    row = next(r for r in stats.intervals if r.agent == "a" and r.by == "")
    assert row.conversations == 1 and row.conversation_low is None and row.conversation_high is None
    assert row.conversation_note.startswith("one conversation")
    pair = next(p for p in stats.pairs if p.by == "")
    assert pair.conversation_low is None and pair.conversation_note.startswith("one conversation")
    assert "– (one conversation)" in statistics_section(stats)
    assert "by conversation - (one conversation)" in pair_lines(stats)[0]
    for k in (2, 3):
        few = [result(f"c{i % k}.q{i}", float(i % 3 == 0), group=f"c{i % k}") for i in range(15)]
        row = next(r for r in compute_statistics([Scored("A", "r", "a", few)]).intervals if r.by == "")
        assert row.conversation_low is not None and row.conversation_note == f"only {k} conversations: an interval over few conversations"
    many = [result(f"c{i % 4}.q{i}", float(i % 3 == 0), group=f"c{i % 4}") for i in range(16)]
    assert next(r for r in compute_statistics([Scored("A", "r", "a", many)]).intervals if r.by == "").conversation_note == ""
