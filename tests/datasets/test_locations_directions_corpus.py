"""The locations_directions rules on a corpus of realistic answers (tests/data/locations_directions_answers.json):
route descriptions, step lists, tables, arrows, JSON, mixed units, shortcuts, summaries; right and wrong.

The rules must decide at least 85% of them on their own, and every answer they decide must be decided right (the
rest goes to the judge). benchmarks/locations_directions_rules.py prints the same numbers and lists the undecided."""

from __future__ import annotations

import json
from pathlib import Path

from ltm_harness.testing import load_script

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "locations_directions_answers.json"
MIN_CONCLUSIVE = 0.85


def _benchmark():
    return load_script(ROOT / "benchmarks" / "locations_directions_rules.py")


def test_the_corpus_is_large_varied_and_balanced():
    data = json.loads(CORPUS.read_text(encoding="utf-8"))
    answers = data["answers"]
    assert len(answers) >= 100
    assert len({a["style"].split(",")[0] for a in answers}) >= 30
    assert sum(a["right"] for a in answers) >= 30 and sum(not a["right"] for a in answers) >= 30
    assert {a["town"] for a in answers} == set(data["towns"])


def test_rules_are_conclusive_on_most_answers_and_right_when_they_are(capsys):
    judged = _benchmark().judge_corpus(CORPUS)
    conclusive = [j for j in judged if j.conclusive]
    rate = len(conclusive) / len(judged)
    with capsys.disabled():
        print(f"\nlocations_directions rules: conclusive on {len(conclusive)}/{len(judged)} realistic answers ({rate:.1%})")
    wrong = [(j.style, j.reason) for j in conclusive if (j.score == 1.0) != j.right]
    assert not wrong, wrong
    assert rate >= MIN_CONCLUSIVE
