"""The shipped benchmark-v3-500k config end to end with an instant in-process agent.

Runs in a fresh subprocess (so peak RSS is the run's own): definitions generated from scratch, one
session, results written. chapterbreak gets a synthetic data file in ChapterBreak's format (chapter
ends of ~8k tokens, as in the real `chapterbreak_ctx_8192.json`), since the real one is user-supplied.
Prints wall time (process, including interpreter start and imports), session time, peak RSS, agent
calls, filler calls, conversation tokens, and the distribution of the achieved-gap error
(achieved - target) / target over every measured gap.

    python benchmarks/v3_500k.py [--config benchmark-v3-500k] [--seed 0] [--agent instant|oracle]

The reference benchmark's runner, on the same shape (its numbers, REFERENCE.md): 615 agent calls,
19.5 s loop, 464 MB peak RSS; spans overran by 7x to 20x at 1k.
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
from ltm_harness._agents.baselines import OracleAgent
from ltm_harness._runner.config import load_config
from ltm_harness._authoring.catalog import known_datasets
from ltm_harness._runner.prepare import prepare
from ltm_harness._runner.run import run_agent

config, seed, agent_kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]

class Instant(Agent):
    async def reply(self, message, oracle_hint=None):
        return Reply(text="OK.")

chapterbreak = sys.modules[known_datasets()["chapterbreak"].__module__]
with tempfile.TemporaryDirectory() as tmp:
    data = Path(tmp) / "chapterbreak"
    data.mkdir()
    (data / chapterbreak.DEFAULT_FILE).write_text(json.dumps(chapterbreak.synthetic_data(seed=seed, books=3, chapters=2)))
    cfg = load_config(config)
    cfg.config.seed = seed
    for entry in cfg.datasets.datasets:
        if entry.name == "chapterbreak":
            entry.args["data_dir"] = str(data)
    s = time.perf_counter()
    prepared = prepare(cfg, Path(tmp) / "results")
    generate_s = time.perf_counter() - s
    make = (lambda: OracleAgent("oracle")) if agent_kind == "oracle" else (lambda: Instant("instant"))
    s = time.perf_counter()
    run = asyncio.run(run_agent(prepared, agent_kind, make))
    session_s = time.perf_counter() - s
errors = sorted((g.achieved_tokens - g.target_tokens) / g.target_tokens
                for r in run.results for g in r.gaps if g.target_tokens)
summary = run.summary
print(json.dumps({
    "tests": len(run.results), "datasets": len(summary.datasets), "agent_calls": summary.turns,
    "filler_calls": summary.filler_turns, "conversation_tokens": summary.conversation_tokens,
    "benchmark_score": summary.benchmark_score, "max_score": summary.max_benchmark_score,
    "generate_s": generate_s, "session_s": session_s, "in_process_s": time.perf_counter() - t0,
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "gap_errors": errors,
}))
"""


def quantile(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="benchmark-v3-500k")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--agent", choices=["instant", "oracle"], default="instant")
    args = parser.parse_args()
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILD, args.config, str(args.seed), args.agent],
                         capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"{args.config} failed:\n{out.stderr}")
    r = json.loads(out.stdout)
    wall = time.perf_counter() - started
    errors = r["gap_errors"]
    absolute = sorted(abs(e) for e in errors)
    print(f"{args.config}, seed {args.seed}, agent {args.agent}")
    print(f"  tests {r['tests']} in {r['datasets']} datasets; score {r['benchmark_score']:.2f}/{r['max_score']}")
    print(f"  agent calls {r['agent_calls']} (filler {r['filler_calls']}), conversation {r['conversation_tokens']:,} tokens")
    print(f"  wall {wall:.2f} s (process, with imports); definitions {r['generate_s']:.2f} s; session {r['session_s']:.2f} s")
    print(f"  peak RSS {r['peak_rss_mb']:.1f} MB")
    if errors:
        print(f"  achieved-gap error over {len(errors)} gaps: min {errors[0]:+.4f}, median {quantile(errors, 0.5):+.4f}, "
              f"max {errors[-1]:+.4f}; |error| p95 {quantile(absolute, 0.95):.4f}, max {absolute[-1]:.4f}")
        for limit in (0.001, 0.01, 0.05, 0.10):
            print(f"    within {limit:>5.1%}: {sum(e <= limit for e in absolute):>3}/{len(absolute)}")


if __name__ == "__main__":
    main()
