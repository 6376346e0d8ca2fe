"""What the judge costs on a paid run, and what the harness saves of it: LoCoMo (a generated file of its shape, 2
conversations, each question asked once) played by an `openai:` agent, judged by a judge on the mock server priced
as gpt-4o-mini, online and through the Batch API (`--judge-batch`), then re-scored with the judge cache.

Printed: judged questions, the judge's requests online and in the batch, its cost each way (the run's summary and
its ledger, spend.jsonl) beside the mock's own bill at the same price, whether the verdicts are equal, the batch's
wall time, and the judge requests two re-scorings make (the cache: want 0) and one with --no-cache.

The data is generated (never the real LoCoMo data, CC BY-NC), by `locomo_protocol.conversation`.

Run: `python benchmarks/judge_cost.py [--sessions 10] [--polls 3]`.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo_protocol import conversation  # noqa: E402

from ltm_harness._api import rescore_async, run_async  # noqa: E402
from ltm_harness._llm.mock_batch import BatchSettings  # noqa: E402
from ltm_harness._llm.mock_server import MockLLMServer  # noqa: E402
from ltm_harness._llm.ledger import read_spend  # noqa: E402
from ltm_harness._llm.pricing import BUILTIN_PRICES, PriceTable  # noqa: E402
from ltm_harness._runner import judge_batch  # noqa: E402
from ltm_harness.testing import make_config  # noqa: E402

JUDGE = "mock-judge"
PRICE = BUILTIN_PRICES["gpt-4o-mini"]


def distinct(sample: dict) -> dict:
    """The conversation with each question asked once (the generator draws some twice; LoCoMo asks each once)."""
    seen: set[str] = set()
    sample["qa"] = [q for q in sample["qa"] if not (q["question"] in seen or seen.add(q["question"]))]
    return sample


def judge_numbers(run_dir: Path) -> tuple[int, float]:
    summary = json.loads((run_dir / "openai_mock" / "summary.json").read_text())
    return summary["usage"]["calls"].get("judge", 0), summary["cost_split"].get("judge", 0.0)


def spend(run_dir: Path) -> float:
    """The run folder's ledger: what its paid calls were billed (USD)."""
    return read_spend(run_dir / "spend.jsonl")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=20, help="dated sessions per conversation")
    parser.add_argument("--polls", type=int, default=3, help="polls before the mock ends a batch")
    args = parser.parse_args()
    judge_batch.POLL_FIRST, judge_batch.POLL_MAX = 0.05, 0.05
    rng = random.Random(0)
    prices = PriceTable({JUDGE: PRICE})
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data = root / "locomo.json"
        data.write_text(json.dumps([distinct(conversation(k, args.sessions, rng)) for k in range(2)]))
        cfg = make_config([{"name": "locomo", "args": {"data_file": str(data)}}], span=4000, examples=2,
                          llm={"prices": {JUDGE: PRICE.model_dump()}})
        async with MockLLMServer(batch=BatchSettings(polls=args.polls)) as server:
            os.environ["OPENAI_BASE_URL"] = server.url
            online = await run_async(cfg, ["openai:mock"], judge=JUDGE, results=root / "online")
            verdicts_online, cost_online = judge_numbers(online.path)
            sent_online = server.stats[f"model:{JUDGE}"]
            bill_online = server.bill.usd(prices, {JUDGE})
            questions = len(online.results("openai_mock"))

            started = time.perf_counter()
            batched = await run_async(cfg, ["openai:mock"], judge=JUDGE, results=root / "batch", judge_batch=True,
                                      on_judge_batch=lambda s: print(f"  {s.line()}"))
            batch_wall = time.perf_counter() - started
            verdicts_batch, cost_batch = judge_numbers(batched.path)
            bill_batch = server.bill.usd(prices, {JUDGE}) - bill_online
            same = _verdicts(online.path) == _verdicts(batched.path)
            ledgers = spend(online.path), spend(batched.path)  # before the re-scorings add theirs

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

    print(f"LoCoMo, 2 generated conversations, {questions} questions, agent openai:mock, judge {JUDGE} priced as "
          f"gpt-4o-mini (${PRICE.prompt}/${PRICE.completion} per 1M tokens)")
    print(f"online judge: {verdicts_online} verdicts, {sent_online} requests sent; our cost ${cost_online:.6f}, "
          f"the run's ledger ${ledgers[0]:.6f}, the mock's bill ${bill_online:.6f}")
    print(f"batch judge:  {verdicts_batch} verdicts, {server.stats['batch_lines']} requests in "
          f"{server.stats['batches_created']} batch; our cost ${cost_batch:.6f}, the run's ledger ${ledgers[1]:.6f}, "
          f"the mock's bill ${bill_batch:.6f}: {cost_batch / cost_online:.1%} of online; verdicts equal to the "
          f"online judge's: {same}; the run with the batch's wait ({args.polls} polls): {batch_wall:.1f} s")
    print(f"rescore with the judge cache: {rescore_calls[0]} then {rescore_calls[1]} judge requests; with --no-cache: "
          f"{forced} (every verdict asked again)")


def _verdicts(run_dir: Path) -> list[list[tuple[float, str]]]:
    results = json.loads((run_dir / "openai_mock" / "results.json").read_text())
    return [[(v["score"], v["raw"]) for v in r["verdicts"]] for r in results]


if __name__ == "__main__":
    asyncio.run(main())
