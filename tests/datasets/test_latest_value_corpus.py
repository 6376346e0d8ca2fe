"""The colours/names rule on a corpus of realistic answers (tests/data/latest_value_answers.jsonl): values alone,
statements, the answer then its history, ordered narratives, a statement then a recalled list, "changed to A and
then B", questions back, timestamped and markdown lists, tables, arrows, JSON, denials, corrections, greetings,
hedges and contradictions; for colours and for names.

The rule must decide at least 90% of them on its own, and every answer it decides must be decided right: an answer
labelled "unclear" (it gives the latest and another value as current) must be left to the judge, and every other
answer decided (so a change that leaves more answers to the judge shows here too).
benchmarks/latest_value_corpus.py prints the same numbers by style and lists the undecided."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from ltm_harness.testing import load_script

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "latest_value_answers.jsonl"
MIN_DECIDED = 0.90


def _benchmark():
    return load_script(ROOT / "benchmarks" / "latest_value_corpus.py")


def test_the_corpus_is_large_varied_and_balanced():
    answers = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    assert len(answers) >= 150
    by = Counter(a["dataset"] for a in answers)
    assert by["colours"] >= 60 and by["names"] >= 60
    verdicts = Counter(a["verdict"] for a in answers)
    assert verdicts["right"] >= 50 and verdicts["wrong"] >= 50 and verdicts["unclear"] >= 5
    styles = Counter(a["style"] for a in answers)
    assert len(styles) >= 15
    for style in ("ordered narrative", "statement then recalled list", "changed to A then B", "question back",
                  "timestamped list", "hedge", "contradiction"):
        assert styles[style] >= 5, style
    # wrong answers that name the latest value, not only ones that miss it
    hard = [a for a in answers if a["verdict"] == "wrong" and a["stated"][-1].lower() in a["answer"].lower()]
    assert len(hard) >= 25
    for a in answers:
        assert a["dataset"] in ("colours", "names") and len(a["stated"]) >= 2 and a["answer"].strip()


def test_the_rule_decides_most_answers_and_every_decision_is_right(capsys):
    judged = _benchmark().judge_corpus(CORPUS)
    decided = [j for j in judged if j.decided]
    rate = len(decided) / len(judged)
    with capsys.disabled():
        print(f"\ncolours/names rule: decides {len(decided)}/{len(judged)} realistic answers ({rate:.1%})")
    wrong = [(j.style, j.answer, j.reason) for j in decided if not j.agrees]
    assert not wrong, wrong
    assert rate >= MIN_DECIDED
    # and exactly these: what the corpus calls unclear goes to the judge, everything else is decided
    assert [j.answer for j in judged if j.decided != (j.verdict != "unclear")] == []
