"""What updating `results/index.html` costs a run when the results folder holds earlier runs.

Makes one LoCoMo run (the synthetic file of tests/data/locomo, oracle and null) and copies it N times (default 20)
into a fresh results folder, then times, in this process, the index refresh a run does when it ends:

- first: no index yet (every summary.json is read and validated);
- after a run: the index is there, and one more run folder has just finished (what every run's end does);
- nothing changed: the index is there and no folder changed.

    python benchmarks/index_scale.py [--runs 20] [--repeat 5]

Before issue 27 every refresh read and validated every summary (all three cost about the same); now a refresh
reads only the summaries that changed (`ltm_harness/_report/index_rows.py` has the rule).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from ltm_harness._report.index import refresh_index
from ltm_harness.testing import make_config, run_config

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "locomo" / "synthetic.json"


def timed(root: Path) -> float:
    start = time.perf_counter()
    problem = refresh_index(root)
    if problem:
        raise SystemExit(problem)
    return 1000 * (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20, help="earlier runs in the results folder")
    ap.add_argument("--repeat", type=int, default=5, help="measurements of each case; the median is shown")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ltm-index-") as tmp:
        made = Path(tmp) / "made"
        cfg = make_config([{"name": "locomo", "args": {"data_file": str(DATA)}}], span=4000, examples=2,
                          run_name="locomo")
        asyncio.run(run_config(cfg, made, ["oracle", "null"]))
        results = Path(tmp) / "results"
        for i in range(args.runs):
            shutil.copytree(made / "locomo", results / f"locomo-{i}")
        first, after_run, unchanged = [], [], []
        for k in range(args.repeat):
            (results / "index.html").unlink(missing_ok=True)
            first.append(timed(results))
            shutil.copytree(made / "locomo", results / f"new-{k}")  # a run that just finished
            after_run.append(timed(results))
            unchanged.append(timed(results))
            shutil.rmtree(results / f"new-{k}")
        summary_kib = (made / "locomo" / "summary.json").stat().st_size / 1024
        print(f"{args.runs} earlier LoCoMo runs (summary.json {summary_kib:.0f} KiB each); median of {args.repeat}:")
        print(f"  first index (every summary read): {statistics.median(first):7.1f} ms")
        print(f"  after a run (one new folder):      {statistics.median(after_run):7.1f} ms")
        print(f"  nothing changed:                   {statistics.median(unchanged):7.1f} ms")


if __name__ == "__main__":
    main()
