"""Harness overhead with an instant in-process agent, at spans 1k, 32k, 120k and 500k.

Each span runs in a fresh subprocess (so peak RSS is that run's own) on the shipped
benchmark-v3-<span> config. Prints agent turns, harness time per turn (from the first turn to
the last, less the time spent inside the agent), the session's one-time setup (tokenizer load,
filler pool), total wall time of the process including interpreter start, and peak RSS.

    python benchmarks/overhead.py [--spans 1k,32k,120k,500k]

Targets: <= 0.3 ms harness time per turn at every span, flat as the span grows; the 500k run
in <= 3 s wall and <= 150 MB peak RSS.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

CHILD = r"""
import asyncio, json, resource, sys, tempfile, time
t0 = time.perf_counter()
from pathlib import Path
from ltm_harness._agents.base import Agent, Reply
from ltm_harness._runner.config import load_config
from ltm_harness._runner.prepare import prepare
from ltm_harness._runner.run import run_agent

class Instant(Agent):
    spent = 0.0
    async def reply(self, message, oracle_hint=None):
        s = time.perf_counter()
        r = Reply(text="OK.")
        Instant.spent += time.perf_counter() - s
        return r

marks = []
def on_turn(session):
    marks.append((time.perf_counter(), Instant.spent))

cfg = load_config(sys.argv[1])
with tempfile.TemporaryDirectory() as tmp:
    # chapterbreak's data file is user-supplied: a synthetic one in its format stands in.
    from ltm_harness._authoring.catalog import known_datasets
    chapterbreak = sys.modules[known_datasets()["chapterbreak"].__module__]
    (Path(tmp) / chapterbreak.DEFAULT_FILE).write_text(json.dumps(chapterbreak.synthetic_data(books=3, chapters=2)))
    for entry in cfg.datasets.datasets:
        if entry.name == "chapterbreak":
            entry.args["data_dir"] = tmp
    prepared = prepare(cfg, Path(tmp))
    s = time.perf_counter()
    run = asyncio.run(run_agent(prepared, "instant", lambda: Instant("instant"), on_turn))
    session_wall = time.perf_counter() - s
wall = time.perf_counter() - t0
# Per-turn harness time: from the first turn to the last, less the time spent inside the agent.
(first_t, first_spent), (last_t, last_spent) = marks[0], marks[-1]
loop_ms = 1000 * ((last_t - first_t) - (last_spent - first_spent)) / (len(marks) - 1)
summary = run.summary
errs = [abs(g.relative_error) for r in run.results for g in r.gaps if g.relative_error is not None]
print(json.dumps({
    "turns": summary.turns, "filler_turns": summary.filler_turns, "tests": len(run.results),
    "conversation_tokens": summary.conversation_tokens,
    "harness_ms_per_turn": loop_ms, "setup_s": session_wall - (last_t - first_t),
    "session_s": session_wall, "wall_s": wall,
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "gaps": len(errs), "gaps_within_10pct": sum(e <= 0.10 for e in errs), "max_gap_error": max(errs, default=0),
}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", default="1k,32k,120k,500k")
    args = parser.parse_args()
    print(f"{'span':>6} {'tests':>5} {'turns':>6} {'filler':>6} {'conv tokens':>12} {'ms/turn':>8} "
          f"{'setup s':>7} {'session s':>9} {'wall s':>7} {'peak MB':>8} {'gaps ok':>9} {'max err':>8}")
    for span in args.spans.split(","):
        started = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", CHILD, f"benchmark-v3-{span}"], capture_output=True, text=True)
        if out.returncode:
            sys.exit(f"span {span} failed:\n{out.stderr}")
        r = json.loads(out.stdout)
        r["wall_s"] = time.perf_counter() - started  # includes interpreter start and imports
        print(f"{span:>6} {r['tests']:>5} {r['turns']:>6} {r['filler_turns']:>6} {r['conversation_tokens']:>12,} "
              f"{r['harness_ms_per_turn']:>8.3f} {r['setup_s']:>7.2f} {r['session_s']:>9.2f} {r['wall_s']:>7.2f} {r['peak_rss_mb']:>8.1f} "
              f"{r['gaps_within_10pct']:>4}/{r['gaps']:<4} {r['max_gap_error']:>8.3f}")


if __name__ == "__main__":
    main()
