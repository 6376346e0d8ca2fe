"""How often the locations_directions rules decide a realistic answer on their own, and whether they decide right.

Reads the corpus tests/data/locations_directions_answers.json (answers in many styles, right and wrong, each
labelled with what following its words on the town's map gives), scores each answer with the rules alone (no
judge), and prints the share of answers the rules decide (conclusive), how many of those verdicts agree with the
label, and each inconclusive or wrong one. tests/datasets/test_locations_directions_corpus.py holds the targets
(at least 85% conclusive, every conclusive verdict right).

Run: `python benchmarks/locations_directions_rules.py [--verbose]`.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CORPUS = ROOT / "tests" / "data" / "locations_directions_answers.json"


@dataclass
class Judged:
    style: str
    answer: str
    right: bool
    score: float
    conclusive: bool
    reason: str


def judge_corpus(path: Path = CORPUS) -> list[Judged]:
    from ltm_harness._authoring.catalog import known_datasets

    data = json.loads(path.read_text(encoding="utf-8"))
    ds = known_datasets()["locations_directions"]()
    out = []
    for a in data["answers"]:
        town = data["towns"][a["town"]]
        target = ds._target({"moves": town["moves"]}, [])
        verdict = ds.rule_verdict(a["answer"], target)
        out.append(Judged(a["style"], a["answer"], a["right"], verdict.score, verdict.conclusive, verdict.reason))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="print every inconclusive or wrong verdict")
    args = parser.parse_args()
    judged = judge_corpus()
    conclusive = [j for j in judged if j.conclusive]
    agree = [j for j in conclusive if (j.score == 1.0) == j.right]
    n = len(judged)
    print(f"answers: {n} ({sum(j.right for j in judged)} right, {sum(not j.right for j in judged)} wrong)")
    print(f"conclusive: {len(conclusive)}/{n} = {len(conclusive) / n:.1%}")
    print(f"conclusive verdicts that agree with the label: {len(agree)}/{len(conclusive)}")
    inconclusive_best = sum((j.score == 1.0) == j.right for j in judged if not j.conclusive)
    print(f"inconclusive answers whose best reading (no judge) agrees anyway: {inconclusive_best}/{n - len(conclusive)}")
    if args.verbose:
        for j in judged:
            if not j.conclusive or (j.score == 1.0) != j.right:
                tag = "INCONCLUSIVE" if not j.conclusive else "WRONG"
                print(f"\n[{tag}] {j.style} (label {'right' if j.right else 'wrong'}, score {j.score:g}): {j.reason}\n  "
                      + j.answer.replace("\n", "\n  "))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
