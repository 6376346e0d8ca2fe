"""A paid run rehearsed on the mock provider: LoCoMo-shaped data (2 generated conversations, never the real data) played
by an `openai:` agent and judged by an LLM, priced as gpt-4o-mini, (1) calm, (2) under a real rate limit below the
calm run's pace, (3) under a 30% fault rate (drawn; 429 storms of 5 make the share of faulted requests larger) and
the rate limit, (4) with a budget of half the `estimate`, then resumed to the end.

Prints: tests errored under the storm (want 0), requests refused by the rate limit, wall time against the calm run;
the spend at the budget's stop (want <= the budget), and the calls paid over the stop and the resume against the
calm run's (want equal: nothing paid twice); and the run's reported cost against the mock's own bill.

Run: `python benchmarks/paid_storm.py [--sessions 20] [--rpm 3000]`. Not a timed test: numbers to read.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from locomo_protocol import conversation  # noqa: E402

from ltm_harness._api import run_async  # noqa: E402
from ltm_harness._llm.ledger import BudgetReached, read_spend  # noqa: E402
from ltm_harness._llm.mock_server import FaultSettings, MockLLMServer  # noqa: E402
from ltm_harness._llm.pricing import Price, PriceTable  # noqa: E402
from ltm_harness._runner.estimate import estimate_many  # noqa: E402
from ltm_harness.testing import make_config  # noqa: E402

AGENT = "openai:mock"
PRICE = {"prompt": 0.15, "completion": 0.60}  # gpt-4o-mini's list price, USD per 1M tokens, for every mock model
FAST = {"timeout": 1.0, "backoff_initial": 0.01, "backoff_max": 0.2, "max_attempts": 10, "retry_budget": 120.0,
        "prices": {"mock": PRICE}, "cache": False}  # no judge cache: every call counted is a call made
STORM = dict(rate_429=0.06, storm_429=5, retry_after=0.05, rate_500=0.05, rate_502=0.04, rate_503=0.04,
             rate_timeout=0.02, timeout_ms=1500, rate_cut=0.05, rate_drop=0.02, rate_malformed=0.02)  # 30% in all


def config(data: Path, run_name: str, max_cost: float | None = None) -> Any:
    cfg = make_config([{"name": "locomo", "args": {"data_file": str(data)}}], span=4000, examples=2,
                      run_name=run_name, llm=FAST, openai={"max_tokens": 64}, judge={"model": "mock-judge"})
    cfg.config.max_cost = max_cost
    return cfg


def billed_calls(server: MockLLMServer) -> int:
    return sum(line.requests for line in server.bill.online.values())


async def play(server: MockLLMServer, data: Path, results: Path, run_name: str, faults: FaultSettings,
               max_cost: float | None = None, resume: bool = False) -> tuple[Any, float]:
    server.set_faults(faults)
    started = time.perf_counter()
    out = await run_async(config(data, run_name, max_cost), [AGENT], results=results, resume=resume)
    return out, time.perf_counter() - started


def errored(out: Any) -> int:
    return sum(d.errored for a in out.summary.agents for d in a.datasets)


async def main(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    samples = [conversation(k, args.sessions, rng) for k in range(2)]
    prices = PriceTable({"mock": Price(**PRICE)})
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "locomo-shaped.json"
        data.write_text(json.dumps(samples))
        questions = sum(len(s["qa"]) for s in samples)
        print(f"data: 2 generated LoCoMo-shaped conversations, {args.sessions} sessions each, {questions} questions; "
              f"agent {AGENT} (max_tokens 64), judge mock-judge; priced as gpt-4o-mini")
        results = Path(tmp) / "results"
        async with MockLLMServer() as server:
            import os

            os.environ["OPENAI_BASE_URL"] = server.url
            calm, calm_wall = await play(server, data, results, "calm", FaultSettings())
            calm_calls = billed_calls(server)
            summary = calm.summary.agents[0]
            print(f"calm:  {calm_wall:6.1f} s, {calm_calls} calls paid, cost ${summary.cost_usd:.4f} (agent "
                  f"${summary.cost_split['agent']:.4f}, judge ${summary.cost_split.get('judge', 0):.4f}); mock's bill "
                  f"${server.bill.usd(prices):.4f}; errored {errored(calm)}")

            server.bill = type(server.bill)()
            server.stats.clear()
            limited, limited_wall = await play(server, data, results, "limited",
                                               FaultSettings(rpm=args.rpm, limit_window=1.0))
            s = server.stats
            print(f"limit: {limited_wall:6.1f} s ({limited_wall / calm_wall:.2f}x calm) under a rate limit of "
                  f"{args.rpm} requests/s (calm went {calm_calls / calm_wall:.0f}/s): {s['requests']} requests, "
                  f"{s['over_limit']} over the limit ({s['over_limit'] / max(s['requests'], 1):.1%}); tests errored "
                  f"{errored(limited)}; calls paid {billed_calls(server)}")

            server.bill = type(server.bill)()
            server.stats.clear()
            storm = FaultSettings(**STORM, rpm=args.rpm, limit_window=1.0, seed=7)
            stormy, storm_wall = await play(server, data, results, "storm", storm)
            s = server.stats
            faults = sum(s[k] for k in ("429", "500", "502", "503", "timeout", "cut", "drop", "malformed"))
            print(f"storm: {storm_wall:6.1f} s ({storm_wall / calm_wall:.2f}x calm), {s['requests']} requests, "
                  f"{faults} faulted ({faults / max(s['requests'], 1):.0%}: 429 {s['429']}, 5xx "
                  f"{s['500'] + s['502'] + s['503']}, timeout {s['timeout']}, cut {s['cut']}, drop {s['drop']}, "
                  f"malformed {s['malformed']}), over the rate limit ({args.rpm}/s) {s['over_limit']}; "
                  f"tests errored {errored(stormy)}; calls paid {billed_calls(server)} (calm {calm_calls}); "
                  f"same scores as calm: {[r.score for r in stormy.results(AGENT)] == [r.score for r in calm.results(AGENT)]}")

            estimate = (await estimate_many(config(data, "estimate"), [AGENT]))[0]
            judged = estimate.judge
            if judged is not None and judged.cost_usd is not None and estimate.total_usd is not None:
                print(f"estimate: agent ${estimate.cost_usd:.4f} (calm paid ${summary.cost_split['agent']:.4f}), judge "
                      f"{judged.requests} requests, {judged.prompt_tokens:,} tokens sent, ${judged.cost_usd:.4f} (calm: "
                      f"{summary.usage.calls.get('judge', 0)}, {summary.usage.prompt_tokens.get('judge', 0):,}, "
                      f"${summary.cost_split.get('judge', 0):.4f}), total ${estimate.total_usd:.4f} (calm "
                      f"${summary.cost_usd:.4f})")
            budget = (estimate.cost_usd or 0.0) / 2
            server.bill = type(server.bill)()
            server.stats.clear()
            try:
                await play(server, data, results, "budget", FaultSettings(), max_cost=budget)
                print("budget: the run did not stop")
            except BudgetReached as stop:
                at_stop = read_spend(results / "budget" / "spend.jsonl")
                stopped_calls = billed_calls(server)
                print(f"budget: estimate ${estimate.cost_usd:.4f} (agent calls only), budget ${budget:.4f}: stopped "
                      f"at ${at_stop:.4f} spent ({at_stop / budget:.0%} of it; ledger = bill: "
                      f"${server.bill.usd(prices):.4f}) after {stopped_calls} calls")
                resumed, _ = await play(server, data, results, "budget", FaultSettings(), max_cost=stop.higher * 4,
                                        resume=True)
                total = billed_calls(server)
                print(f"resume: to the end with --max-cost ${stop.higher * 4:.4f}: {total} calls paid in all "
                      f"(uninterrupted: {calm_calls}); spend ${read_spend(results / 'budget' / 'spend.jsonl'):.4f} "
                      f"(uninterrupted ${summary.cost_usd:.4f}); same scores: "
                      f"{[r.score for r in resumed.results(AGENT)] == [r.score for r in calm.results(AGENT)]}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20, help="sessions per conversation (LoCoMo has 19 to 32)")
    parser.add_argument("--rpm", type=int, default=20, help="the mock's rate limit: requests per second per model")
    parser.add_argument("--seed", type=int, default=1)
    asyncio.run(main(parser.parse_args()))
