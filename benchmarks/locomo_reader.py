"""LoCoMo's reader and reference scorer on the real data file: time to read and check it, its quirks, its
questions per category, and the scorer's speed (every gold answer scored against itself, which gives 1.0 unless the
answer normalises to no words, and against another question's answer).

The file is never shipped (CC BY-NC 4.0): give its path, or let it be read from the cache (downloaded there on
first use; `LTM_LOCOMO_URL` for a mirror).

Run: `python benchmarks/locomo_reader.py [path/to/locomo10.json]`.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from collections import Counter
from pathlib import Path

from ltm_harness._authoring.datafiles import read_json
from ltm_harness._interop.locomo.data import CATEGORY_NAMES, parse_locomo
from ltm_harness._interop.locomo.fetch import REMOTE, load_locomo
from ltm_harness._interop.locomo.scoring import score_answer


def gold_as_scored(category: int, gold: str | None) -> str:
    """The answer that must score 1.0: the gold (before its ';' in category 3), or the phrase of category 5."""
    if gold is None or category == 5:
        return "Not mentioned in the conversation"
    return gold.split(";")[0] if category == 3 else gold


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_file", nargs="?", type=Path, help="locomo10.json (default: the cached download)")
    args = parser.parse_args()
    path = args.data_file or REMOTE.path
    if not path.is_file():
        load_locomo(None)  # downloads it into the cache
    start = time.perf_counter()
    raw = read_json(path, "none", REMOTE.max_json_bytes)
    read = time.perf_counter() - start
    start = time.perf_counter()
    data = parse_locomo(raw, str(path))
    first = time.perf_counter() - start
    start = time.perf_counter()
    parse_locomo(raw, str(path))
    again = time.perf_counter() - start
    questions = [q for s in data.samples for q in s.questions]
    print(f"file: {path} ({path.stat().st_size:,} bytes)")
    print(f"read JSON {read * 1000:.1f} ms; parse + checks {first * 1000:.1f} ms (first, schemas built), "
          f"{again * 1000:.1f} ms (again)")
    print(f"samples {len(data.samples)}, sessions {sum(len(s.sessions) for s in data.samples)}, "
          f"turns {sum(len(s.turns()) for s in data.samples)}, questions {len(questions)}")
    counts = Counter(q.category for q in questions)
    print("per category: " + ", ".join(f"{c} {CATEGORY_NAMES[c]} {counts[c]}" for c in sorted(counts)))
    print(f"quirks: {data.quirks.summary()}")
    for example in data.quirks.examples:
        print(f"  {example}")
    start = time.perf_counter()
    self_scores = [score_answer(q.category, gold_as_scored(q.category, q.answer), q.answer) for q in questions]
    first_pass = time.perf_counter() - start
    start = time.perf_counter()
    others = [score_answer(q.category, questions[(i + 1) % len(questions)].answer or "", q.answer)
              for i, q in enumerate(questions)]
    second_pass = time.perf_counter() - start
    below = [(q.category, q.answer) for q, s in zip(questions, self_scores) if s < 1.0]
    print(f"scoring {len(questions)} answers: {first_pass * 1000:.1f} ms (first, nltk imported), "
          f"{second_pass * 1000:.1f} ms (again); gold vs itself below 1.0: {len(below)} {below[:5]}; "
          f"mean vs another question's gold {sum(others) / len(others):.3f}")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
