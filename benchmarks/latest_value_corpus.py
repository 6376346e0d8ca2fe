"""How often the colours/names rule decides a realistic answer on its own, and whether it decides right, by style.

Reads the corpus tests/data/latest_value_answers.jsonl (one answer a line: the dataset, the values the user stated
in order, the answer, its verdict and its style; the verdict is "right" or "wrong" when the answer gives one value
as the current one, hedges included, and "unclear" when it gives the latest and another value as current, which
only a judge can settle), scores each answer with the dataset's rule alone (no judge), and prints per style and in
all: how many answers, the share the rule decides, and how many of its decisions agree with the verdict (an
"unclear" answer the rule decides counts as a wrong decision). tests/datasets/test_latest_value_corpus.py holds the
targets (at least 90% decided, every decision right).

Run: `python benchmarks/latest_value_corpus.py [--verbose]`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CORPUS = ROOT / "tests" / "data" / "latest_value_answers.jsonl"


@dataclass
class Judged:
    dataset: str
    style: str
    answer: str
    verdict: str  # the corpus's: right, wrong or unclear
    decided: bool
    score: float
    reason: str

    @property
    def agrees(self) -> bool:
        return self.decided and self.verdict == ("right" if self.score == 1.0 else "wrong")


def judge_corpus(path: Path = CORPUS) -> list[Judged]:
    from ltm_harness._authoring.catalog import known_datasets
    from ltm_harness._scoring.current_value import read_latest

    datasets = known_datasets()
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        a = json.loads(line)
        noun = datasets[a["dataset"]].noun
        v = read_latest(a["answer"], a["stated"][-1], a["stated"], noun)
        out.append(Judged(a["dataset"], a["style"], a["answer"], a["verdict"], v.conclusive, v.score, v.reason))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="print every undecided or wrongly decided answer")
    args = parser.parse_args()
    judged = judge_corpus()
    by_style: dict[str, list[Judged]] = defaultdict(list)
    for j in judged:
        by_style[j.style].append(j)
    print(f"{'style':<30} {'answers':>7} {'decided':>8} {'right':>9}")
    for style, js in sorted(by_style.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        _row(style, js)
    print("-" * 57)
    for name in sorted({j.dataset for j in judged}):
        _row(name, [j for j in judged if j.dataset == name])
    _row("all", judged)
    if args.verbose:
        for j in judged:
            if not j.agrees:
                tag = "UNDECIDED" if not j.decided else "WRONG"
                print(f"\n[{tag}] {j.dataset}, {j.style} (verdict {j.verdict}): {j.reason}\n  " + j.answer.replace("\n", "\n  "))
    return 0


def _row(label: str, js: list[Judged]) -> None:
    decided = [j for j in js if j.decided]
    right = sum(j.agrees for j in decided)
    accuracy = f"{right}/{len(decided)}" if decided else "-"
    print(f"{label:<30} {len(js):>7} {len(decided) / len(js):>8.1%} {accuracy:>9}")


if __name__ == "__main__":
    raise SystemExit(main())
