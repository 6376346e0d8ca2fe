"""What LLM faults cost a run: the same run fault-free and under faults, against the shipped mock server.

The agent is `openai:mock` and the judge `mock-judge` (so judged datasets make judge calls). The faulty
run gets 429 storms with Retry-After, 500s, dropped connections, malformed bodies and stalled requests
(cut by the client's timeout), each at `--rate`, plus one scripted fault of each kind first. After a
warm-up run (imports, the mock's token counts), it prints the wall time of both runs, the calls and
retries per role, what the mock injected, a lower bound of what the faults must cost (the Retry-After
waits and the timeouts), and whether results.json and the event logs (less the measured latency and
retries) are identical, as they must be.

Run: `python benchmarks/faults.py [--rate 0.05] [--storm 3] [--retry-after 0.05] [--timeout 0.5]
[--span 4000] [--examples 2] [--datasets delayed_recall,jokes,colours,kv,names] [--seed 0]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ltm_harness._runner.config import RunConfig  # noqa: E402
from ltm_harness._llm.mock_server import FaultSettings, MockLLMServer, Outcome  # noqa: E402
from ltm_harness._results.models import RunSummary  # noqa: E402
from ltm_harness._runner.prepare import prepare  # noqa: E402
from ltm_harness._runner.run import run_all  # noqa: E402
from ltm_harness._store.layout import slug  # noqa: E402

AGENT = "openai:mock"
KINDS: tuple[Outcome, ...] = ("429", "500", "drop", "malformed", "timeout")


def make_config(args: argparse.Namespace) -> RunConfig:
    return RunConfig.model_validate({
        "config": {"run_name": "faults", "seed": args.seed, "agents": [AGENT], "judge": {"model": "mock-judge"},
                   "llm": {"timeout": args.timeout, "backoff_initial": 0.01, "backoff_max": 0.1,
                           "max_attempts": 20, "retry_budget": 300}},
        "datasets": {"args": {"memory_span": args.span, "dataset_examples": args.examples},
                     "datasets": [{"name": n} for n in args.datasets.split(",") if n]},
    })


def timed_run(cfg: RunConfig, root: Path) -> tuple[float, RunSummary]:
    """One run in its own thread and event loop (the mock server keeps the main one)."""
    prepared = prepare(cfg, root)
    started = time.perf_counter()
    summary = asyncio.run(run_all(prepared, [AGENT]))
    if summary.errors:
        raise SystemExit(f"the run failed: {summary.errors}")
    return time.perf_counter() - started, summary


def outcome_files(root: Path) -> tuple[bytes, list[dict[str, Any]]]:
    agent_dir = root / "faults" / slug(AGENT)
    events = []
    for line in (agent_dir / "events.jsonl").read_text(encoding="utf-8").splitlines():
        e = json.loads(line)
        if e["type"] == "llm_call":
            e.pop("latency_ms"), e.pop("retries")
        events.append(e)
    return (agent_dir / "results.json").read_bytes(), events


async def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rate", type=float, default=0.05, help="share of requests for each kind of fault")
    p.add_argument("--storm", type=int, default=3, help="429s in a row once one is drawn")
    p.add_argument("--retry-after", type=float, default=0.05, help="seconds the mock asks for with a 429")
    p.add_argument("--timeout", type=float, default=0.5, help="the client's request timeout (llm.timeout)")
    p.add_argument("--span", type=int, default=4000)
    p.add_argument("--examples", type=int, default=2)
    p.add_argument("--datasets", default="delayed_recall,jokes,colours,kv,names")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    cfg = make_config(args)
    async with MockLLMServer() as server:
        os.environ["OPENAI_BASE_URL"] = server.url
        with tempfile.TemporaryDirectory() as tmp:
            clean_dir, faulty_dir = Path(tmp) / "clean", Path(tmp) / "faulty"
            await asyncio.to_thread(timed_run, cfg, Path(tmp) / "warm-up")  # imports, the mock's token counts
            server.stats.clear()
            clean_wall, _ = await asyncio.to_thread(timed_run, cfg, clean_dir)
            clean_requests = server.stats["requests"]
            server.set_faults(FaultSettings(
                rate_429=args.rate, storm_429=args.storm, retry_after=args.retry_after, rate_500=args.rate,
                rate_drop=args.rate, rate_malformed=args.rate, rate_timeout=args.rate,
                timeout_ms=max(1000.0, args.timeout * 4000), seed=args.seed, script=list(KINDS)))
            server.stats.clear()
            faulty_wall, faulty = await asyncio.to_thread(timed_run, cfg, faulty_dir)
            same_results, same_events = (a == b for a, b in zip(outcome_files(clean_dir), outcome_files(faulty_dir)))
    stats = server.stats
    usage = faulty.agents[0].usage
    floor = stats["429"] * args.retry_after + stats["timeout"] * args.timeout
    print(f"datasets {args.datasets}, span {args.span}, {args.examples} examples each; fault rate {args.rate} per "
          f"kind, 429 storms of {args.storm}, Retry-After {args.retry_after} s, client timeout {args.timeout} s")
    print(f"fault-free run: {clean_wall:6.2f} s   {clean_requests} requests")
    print(f"faulty run:     {faulty_wall:6.2f} s   {stats['requests']} requests "
          f"({stats['requests'] / max(1, clean_requests):.2f}x), +{faulty_wall - clean_wall:.2f} s "
          f"(at least {floor:.2f} s of Retry-After waits and timeouts)")
    print("injected:       " + ", ".join(f"{k} {stats[k]}" for k in KINDS) + f", abandoned (client timed out) "
          f"{stats['abandoned']}")
    print("calls per role: " + ", ".join(f"{r} {n}" for r, n in usage.calls.items()))
    print("retries:        " + ", ".join(f"{r} {n}" for r, n in usage.retries.items())
          + f" (total {sum(usage.retries.values())}; failed requests {stats['requests'] - stats['ok']})")
    print(f"identical:      results.json {same_results}, events without latency/retries {same_events}")
    if not (same_results and same_events):
        raise SystemExit("the faulty run's outcomes differ from the fault-free run's")


if __name__ == "__main__":
    asyncio.run(main())
