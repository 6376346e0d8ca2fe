"""Cost per turn as the run grows: the default config at 2, 5, 20 and 50 examples per dataset.

Each size runs in a fresh subprocess: the shipped `default` config with `dataset_examples` set to N, one session
with an instant in-process agent. Prints tests, turns, harness time per turn (from the first turn to the last,
less the time inside the agent: scheduling, the session, the channel and writing the events), the session's wall
time, and the share of it spent in the scheduler's placement (`Scheduler.pick_start` with what it calls, from
cProfile in a second, profiled run; the per-turn time comes from the unprofiled one).

    python benchmarks/scheduler_scale.py                    # 2, 5, 20, 50
    python benchmarks/scheduler_scale.py --examples 2,20 --top 15   # and the profile's 15 costliest functions

Target (issue 27): ms per turn within 1.3x across the sizes (placing a test costs O(log n) or amortised O(1) in
the tests queued).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

CHILD = r"""
import asyncio, cProfile, io, json, math, pstats, sys, tempfile, time
from pathlib import Path
from ltm_harness._agents.base import Agent, Reply
from ltm_harness._runner.config import load_config, resolve_config_path
from ltm_harness._runner.prepare import prepare
from ltm_harness._runner.run import run_agent

examples, top, repeat = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])


class Instant(Agent):
    spent = 0.0

    async def reply(self, message, oracle_hint=None):
        s = time.perf_counter()
        r = Reply(text="OK.")
        Instant.spent += time.perf_counter() - s
        return r


def once(profile):
    cfg = load_config(resolve_config_path("default"))
    cfg.datasets.set_for_all("dataset_examples", examples)
    marks = []
    with tempfile.TemporaryDirectory() as tmp:
        prepared = prepare(cfg, Path(tmp))
        prof = cProfile.Profile() if profile else None
        s = time.perf_counter()
        if prof:
            prof.enable()
        run = asyncio.run(run_agent(prepared, "instant", lambda: Instant("instant"),
                                    lambda p: marks.append((time.perf_counter(), Instant.spent))))
        if prof:
            prof.disable()
        return run, marks, time.perf_counter() - s, prof


ms = math.inf
for _ in range(repeat):  # the fastest of `repeat` runs: the machine's other work only ever adds time
    run, marks, session_s, _ = once(False)
    (first_t, first_spent), (last_t, last_spent) = marks[0], marks[-1]
    ms = min(ms, 1000 * ((last_t - first_t) - (last_spent - first_spent)) / (len(marks) - 1))
_, _, _, prof = once(True)
stats = pstats.Stats(prof)
total = stats.total_tt
placing = sum(v[3] for k, v in stats.stats.items() if k[2] == "pick_start")
out = io.StringIO()
if top:
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(top)
print(json.dumps({"tests": len(run.results), "turns": run.summary.turns, "ms_per_turn": ms, "session_s": session_s,
                  "placing_share": placing / total if total else 0.0, "profile": out.getvalue()}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", default="2,5,20,50", help="examples per dataset, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="runs per size; the fastest counts (default 3)")
    parser.add_argument("--top", type=int, default=0, help="print the profile's N costliest functions per size")
    args = parser.parse_args()
    print(f"{'examples':>8} {'tests':>6} {'turns':>7} {'ms/turn':>8} {'session s':>9} {'placing':>8}")
    rows = []
    for n in args.examples.split(","):
        out = subprocess.run([sys.executable, "-c", CHILD, n, str(args.top), str(args.repeat)], capture_output=True, text=True)
        if out.returncode:
            sys.exit(f"--examples {n} failed:\n{out.stderr[-3000:]}")
        r = json.loads(out.stdout)
        rows.append(r["ms_per_turn"])
        print(f"{n:>8} {r['tests']:>6} {r['turns']:>7,} {r['ms_per_turn']:>8.3f} {r['session_s']:>9.2f} "
              f"{r['placing_share']:>7.0%}")
        if args.top:
            print(r["profile"])
    print(f"largest / smallest ms per turn: {max(rows) / min(rows):.2f}x (target <= 1.3x)")


if __name__ == "__main__":
    started = time.perf_counter()
    main()
    print(f"({time.perf_counter() - started:.0f} s)")
