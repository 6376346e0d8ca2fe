"""What the judge costs on a paid run, and what the harness saves of it: LoCoMo (a generated file of its shape, 2
conversations, each question asked once) and BEAM (2 generated 100K chats: a rubric judge, several calls per
question) played by an `openai:` agent, judged by a judge on the mock server priced as gpt-4o-mini, online and through
the Batch API (`--judge-batch`), then re-scored with the judge cache.

Printed, per benchmark: judged verdicts, the judge's requests online and in batches, its cost each way (the run's
summary and its ledger, spend.jsonl) beside the mock's own bill at the same price, whether the verdicts are equal, the
batched run's wall time, and the judge requests two re-scorings make (the cache: want 0) and one with --no-cache.

The data is generated (never the real data), by `locomo_protocol.conversation` and `beam_data.write_dataset`.

Run: `python benchmarks/judge_cost.py [--sessions 20] [--polls 3]`. Not a timed test: numbers to read.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from locomo_protocol import conversation  # noqa: E402

from ltm_harness._api import rescore_async, run_async  # noqa: E402
from ltm_harness._llm.ledger import read_spend  # noqa: E402
from ltm_harness._llm.mock_batch import BatchSettings  # noqa: E402
from ltm_harness._llm.mock_server import MockLLMServer  # noqa: E402
from ltm_harness._llm.pricing import BUILTIN_PRICES, PriceTable  # noqa: E402
from ltm_harness._runner import judge_batch  # noqa: E402
from ltm_harness._runner.estimate import estimate  # noqa: E402
from ltm_harness.testing import load_script, make_config  # noqa: E402

AGENT = "openai:mock"
JUDGE = "mock-judge"
PRICE = BUILTIN_PRICES["gpt-4o-mini"]


def distinct(sample: dict[str, Any]) -> dict[str, Any]:
    """The conversation with each question asked once (the generator draws some twice; LoCoMo asks each once)."""
    seen: set[str] = set()
    sample["qa"] = [q for q in sample["qa"] if not (q["question"] in seen or seen.add(q["question"]))]
    return sample


def judge_numbers(run_dir: Path) -> tuple[int, float]:
    summary = json.loads((run_dir / "openai_mock" / "summary.json").read_text())
    return summary["usage"]["calls"].get("judge", 0), summary["cost_split"].get("judge", 0.0)


def judge_tokens(run_dir: Path) -> int:
    summary = json.loads((run_dir / "openai_mock" / "summary.json").read_text())
    return int(summary["usage"]["prompt_tokens"].get("judge", 0))


def verdicts(run_dir: Path) -> list[list[tuple[float, str]]]:
    results = json.loads((run_dir / "openai_mock" / "results.json").read_text())
    return [[(v["score"], v["raw"]) for v in r["verdicts"]] for r in results]


async def measure(name: str, dataset: dict[str, Any], root: Path, polls: int) -> None:
    """One benchmark judged online, then in batches (another results folder: its own judge cache), then re-scored."""
    cfg = make_config([dataset], span=32000, examples=2, llm={"prices": {JUDGE: PRICE.model_dump()}})
    prices = PriceTable({JUDGE: PRICE})
    async with MockLLMServer(batch=BatchSettings(polls=polls)) as server:
        os.environ["OPENAI_BASE_URL"] = server.url
        online = await run_async(cfg, [AGENT], judge=JUDGE, results=root / name / "online")
        verdicts_online, cost_online = judge_numbers(online.path)
        sent_online = server.stats[f"model:{JUDGE}"]
        bill_online = server.bill.usd(prices, {JUDGE})

        started = time.perf_counter()
        batched = await run_async(cfg, [AGENT], judge=JUDGE, results=root / name / "batch", judge_batch=True,
                                  on_judge_batch=lambda s: print(f"  {s.line()}"))
        batch_wall = time.perf_counter() - started
        verdicts_batch, cost_batch = judge_numbers(batched.path)
        bill_batch = server.bill.usd(prices, {JUDGE}) - bill_online
        same = verdicts(online.path) == verdicts(batched.path)
        ledgers = read_spend(online.path / "spend.jsonl"), read_spend(batched.path / "spend.jsonl")
        online_after = server.stats[f"model:{JUDGE}"] - sent_online

        def judge_requests() -> int:
            return server.stats[f"model:{JUDGE}"] + server.stats["batch_lines"]

        before = judge_requests()
        rescore_calls = []
        for _ in range(2):
            await rescore_async(online.path)
            rescore_calls.append(judge_requests() - before)
            before = judge_requests()
        await rescore_async(online.path, no_cache=True)
        forced = judge_requests() - before
    cfg.config.judge.model = JUDGE
    (guess,), (guess_batch,) = await estimate(cfg, AGENT), await estimate(cfg, AGENT, judge_batch=True)

    print(f"{name}: 2 generated conversations, {len(online.results('openai_mock'))} results, agent {AGENT}, judge "
          f"{JUDGE} priced as gpt-4o-mini (${PRICE.prompt}/${PRICE.completion} per 1M tokens)")
    print(f"  online judge: {verdicts_online} verdicts, {sent_online} requests sent; our cost ${cost_online:.6f}, "
          f"the run's ledger ${ledgers[0]:.6f}, the mock's bill ${bill_online:.6f}")
    print(f"  batch judge:  {verdicts_batch} verdicts, {server.stats['batch_lines']} requests in "
          f"{server.stats['batches_created']} batch(es), {online_after} sent online; our cost ${cost_batch:.6f}, the "
          f"run's ledger ${ledgers[1]:.6f}, the mock's bill ${bill_batch:.6f}: {cost_batch / cost_online:.1%} of "
          f"online; verdicts equal to the online judge's: {same}; the batched run with its wait ({polls} polls): "
          f"{batch_wall:.1f} s")
    print(f"  rescore with the judge cache: {rescore_calls[0]} then {rescore_calls[1]} judge requests; with "
          f"--no-cache: {forced} (every verdict asked again)")
    if guess.judge is not None and guess_batch.judge is not None:
        print(f"  estimate (nothing called): {guess.judge.requests} judge requests, {guess.judge.prompt_tokens:,} "
              f"tokens sent, ${guess.judge.cost_usd or 0:.6f} online, ${guess_batch.judge.cost_usd or 0:.6f} in "
              f"batches; the online run sent {sent_online} requests, {judge_tokens(online.path):,} tokens")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=20, help="dated sessions per LoCoMo conversation")
    parser.add_argument("--polls", type=int, default=3, help="polls before the mock ends a batch")
    args = parser.parse_args()
    judge_batch.POLL_FIRST, judge_batch.POLL_MAX = 0.05, 0.05
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        locomo = root / "locomo.json"
        locomo.write_text(json.dumps([distinct(conversation(k, args.sessions, rng)) for k in range(2)]))
        await measure("LoCoMo", {"name": "locomo", "args": {"data_file": str(locomo)}}, root, args.polls)
        load_script(HERE / "beam_data.py").write_dataset(root / "beam", "100K", 2)
        await measure("BEAM", {"name": "beam", "args": {"data_dir": str(root / "beam")}}, root, args.polls)


if __name__ == "__main__":
    asyncio.run(main())
