"""Harness overhead with an instant in-process agent, at spans 1k, 32k, 120k and 500k.

Each span runs in a fresh subprocess (so peak RSS is that run's own) on the shipped
benchmark-v3-<span> config. Prints agent turns, harness time per turn (from the first turn to
the last, less the time spent inside the agent), the session's one-time setup (tokenizer load,
filler pool), total wall time of the process including interpreter start, and peak RSS.

    python benchmarks/overhead.py [--spans 1k,32k,120k,500k]

Targets: <= 0.3 ms harness time per turn at every span, flat as the span grows; the 500k run
in <= 3 s wall and <= 150 MB peak RSS.

    python benchmarks/overhead.py --marginal [--code /path/to/other/checkout]

The marginal CPU per turn as the run grows: `run -a null --examples N` (the default config) at N = 10 and 20, each a
child process timed by its own CPU seconds (`_timing`), best of three, interleaved, after one untimed run of each (so
both find their definitions kept); (CPU at 20 - CPU at 10) / (turns at 20 - turns at 10). Everything that grows with
the run counts: sessions, results, summaries. `--code` measures another checkout of the harness (e.g. main) the same
way, in the same rounds. Target (issue 35): <= 0.3 ms per turn.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def marginal(repeats: int, other: Path | None) -> None:
    """Marginal CPU per turn between 10 and 20 examples per dataset, of this checkout (and of `other`)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _timing import ROOT, best, interleaved, load

    codes = {"this": ROOT, **({"other": other.resolve()} if other else {})}
    with tempfile.TemporaryDirectory(prefix="ltm-marginal-") as tmp:
        results = Path(tmp) / "results"

        def argv(code: str, n: int, k: int | str) -> list[str]:
            return [sys.executable, "-m", "ltm_harness", "run", "-a", "null", "--examples", str(n), "--results",
                    str(results), "--run-name", f"{code}-{n}-{k}", "--quiet", "--no-report"]

        cases = {(code, n): argv(code, n, "warm") for code in codes for n in (10, 20)}
        names = {f"{code}/{n}": a for (code, n), a in cases.items()}
        where = {f"{code}/{n}": codes[code] for code, n in cases}
        env = {"LTM_HARNESS_CACHE": str(Path(tmp) / "cache")}
        interleaved(names, 1, env, where)  # untimed: definitions made (and kept where the harness keeps them)
        runs: dict[str, list] = {name: [] for name in names}
        for k in range(repeats):
            one = interleaved({name: argv(*name.split("/"), k) for name in names}, 1, env, where)
            for name in names:
                runs[name] += one[name]
        for code in codes:
            cpu = {n: best(runs[f"{code}/{n}"]).cpu for n in (10, 20)}
            turns = {n: json.loads((results / f"{code}-{n}-0" / "summary.json").read_text())["agents"][0]["turns"]
                     for n in (10, 20)}
            ms = 1000 * (cpu[20] - cpu[10]) / (turns[20] - turns[10])
            print(f"{code} ({codes[code]}): 10 examples {turns[10]:,} turns {cpu[10]:.2f} CPU s; 20 examples "
                  f"{turns[20]:,} turns {cpu[20]:.2f} CPU s; marginal {ms:.3f} ms per turn (best of {repeats}; "
                  f"target <= 0.3; {load()})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", default="1k,32k,120k,500k")
    parser.add_argument("--marginal", action="store_true", help="marginal CPU per turn, 10 vs 20 examples")
    parser.add_argument("--code", type=Path, help="with --marginal: another checkout measured beside this one")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.marginal:
        marginal(args.repeats, args.code)
        return
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
