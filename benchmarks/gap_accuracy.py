"""Gap accuracy when replies vary: the shipped v3 config at spans 4k, 8k and 32k, played by a mock agent whose
replies are padded with 0-300 random words (`ltm_harness.testing.PaddedReplies`, one seed per run).

Prints, per span, the number of measured gaps, the share within 10% of their target and the worst relative
error (over all seeds), for the gaps of the reference (from the answer statement); then the same for the gaps whose
target is at least 2,000 and 4,000 tokens (10% of a shorter gap is less than the spread of the replies: the last reply before
a question, whose length is known only once it is given, decides where the question falls).

    python benchmarks/gap_accuracy.py [--spans 4k,8k,32k] [--seeds 3] [--max-words 300]

Target: at least 95% of gaps within 10% of their target at every span of 4k and above.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

from ltm_harness._authoring.catalog import known_datasets
from ltm_harness._runner.config import load_config
from ltm_harness.testing import PaddedReplies, run_config
from ltm_harness import read_run


def tokens(text: str) -> int:
    return int(text.lower().removesuffix("k")) * (1000 if text.lower().endswith("k") else 1)


async def measure(span: int, seed: int, max_words: int, root: Path) -> list[tuple[int, float]]:
    cfg = load_config("benchmark-v3-32k")
    cfg.config.seed = seed
    cfg.config.run_name = f"gaps-{span}-{seed}"
    cfg.datasets.args.memory_span = span
    mod = sys.modules[known_datasets()["chapterbreak"].__module__]
    data = root / "chapterbreak"
    data.mkdir(exist_ok=True)
    (data / mod.DEFAULT_FILE).write_text(json.dumps(mod.synthetic_data(seed=0, books=2, chapters=2)))
    for entry in cfg.datasets.datasets:
        if entry.name == "chapterbreak":
            entry.args["data_dir"] = str(data)
    if span < 16000:  # as published for small spans: chapterbreak's chapters alone are ~10k tokens
        cfg.datasets.datasets = [d for d in cfg.datasets.datasets if d.name != "chapterbreak"]
    agent = PaddedReplies(max_words=max_words, seed=seed)
    await run_config(cfg, root, [("padded", agent)])  # type: ignore[list-item]
    results = read_run(root / cfg.config.run_name).results("padded")
    return [(g.target_tokens, g.relative_error) for r in results for g in r.gaps
            if g.relative_error is not None and g.target_tokens is not None]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spans", default="4k,8k,32k")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--max-words", type=int, default=300)
    args = parser.parse_args()
    print(f"{'span':>6} {'gaps':>5} {'within 10%':>11} {'worst error':>12}   {'gaps>=2k':>8} {'within 10%':>11} "
          f"{'worst error':>12}   {'gaps>=4k':>8} {'within 10%':>11} {'worst error':>12}")

    def stats(errors: list[float]) -> str:
        if not errors:
            return f"{0:>5} {'-':>11} {'-':>12}"
        within = sum(abs(e) <= 0.10 for e in errors) / len(errors)
        return f"{len(errors):>5} {within:>10.1%} {max(errors, key=abs):>+12.1%}"

    with tempfile.TemporaryDirectory() as tmp:
        for text in args.spans.split(","):
            span = tokens(text)
            gaps: list[tuple[int, float]] = []
            for seed in range(args.seeds):
                gaps += asyncio.run(measure(span, seed, args.max_words, Path(tmp)))
            print(f"{text:>6} {stats([e for _, e in gaps])}   {stats([e for t, e in gaps if t >= 2000]):>34}   "
                  f"{stats([e for t, e in gaps if t >= 4000]):>34}")


if __name__ == "__main__":
    main()
