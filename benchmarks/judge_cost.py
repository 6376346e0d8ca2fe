"""What the judge costs on a paid run, and what the harness saves of it: LoCoMo (a generated file of its shape, 2
conversations of about 200 questions each) played by an `openai:` agent, judged by a judge on the mock server priced
as gpt-4o-mini, online and through the Batch API (`--judge-batch`), then re-scored with the judge cache.

Printed: judged questions, the judge's calls online and in the batch, its cost each way (our ledger: the run's
summary) beside what the mock's own count of tokens bills at the same price, the batch's wall time, and the calls
two re-scorings make (the cache: want 0) and one with --no-cache.

The data is generated (never the real LoCoMo data, CC BY-NC), by `locomo_protocol.conversation`.

Run: `python benchmarks/judge_cost.py [--sessions 10] [--polls 3]`.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo_protocol import conversation  # noqa: E402

from ltm_harness._api import rescore_async, run_async  # noqa: E402
from ltm_harness._llm.mock_batch import BatchSettings  # noqa: E402
from ltm_harness._llm.mock_server import MockLLMServer  # noqa: E402
from ltm_harness._llm.pricing import BUILTIN_PRICES  # noqa: E402
from ltm_harness._runner import judge_batch  # noqa: E402
from ltm_harness.testing import make_config  # noqa: E402

JUDGE = "mock-judge"
PRICE = BUILTIN_PRICES["gpt-4o-mini"]


def bill(prompt_tokens: int, completion_tokens: int, discount: float = 1.0) -> float:
    """What the mock's token counts cost at the judge's price."""
    return (prompt_tokens * PRICE.prompt + completion_tokens * PRICE.completion) / 1_000_000 * discount


def judge_numbers(run_dir: Path) -> tuple[int, float]:
    summary = json.loads((run_dir / "openai_mock" / "summary.json").read_text())
    return summary["usage"]["calls"].get("judge", 0), summary["cost_split"].get("judge", 0.0)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=10, help="dated sessions per conversation")
    parser.add_argument("--polls", type=int, default=3, help="polls before the mock ends a batch")
    args = parser.parse_args()
    judge_batch.POLL_FIRST, judge_batch.POLL_MAX = 0.05, 0.05
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data = root / "locomo.json"
        data.write_text(json.dumps([conversation(k, args.sessions, rng) for k in range(2)]))
        cfg = make_config([{"name": "locomo", "args": {"data_file": str(data)}}], span=4000, examples=2,
                          llm={"prices": {JUDGE: PRICE.model_dump()}})
        async with MockLLMServer(batch=BatchSettings(polls=args.polls)) as server:
            import os

            os.environ["OPENAI_BASE_URL"] = server.url
            online = await run_async(cfg, ["openai:mock"], judge=JUDGE, results=root / "online")
            calls_online, cost_online = judge_numbers(online.path)
            sent = [r for r in server.requests if r.get("model") == JUDGE]
            online_bill = bill(*_tokens(server, sent))
            questions = len(online.results("openai_mock"))

            started = time.perf_counter()
            batched = await run_async(cfg, ["openai:mock"], judge=JUDGE, results=root / "batch", judge_batch=True,
                                      on_judge_batch=lambda s: print(f"  {s.line()}"))
            batch_wall = time.perf_counter() - started
            calls_batch, cost_batch = judge_numbers(batched.path)
            batch_bill = bill(server.stats["batch_prompt_tokens"], server.stats["batch_completion_tokens"], 0.5)

            before = server.stats[f"model:{JUDGE}"] + server.stats["batch_lines"]
            rescore_calls = []
            for _ in range(2):
                await rescore_async(online.path)
                now = server.stats[f"model:{JUDGE}"] + server.stats["batch_lines"]
                rescore_calls.append(now - before)
                before = now
            await rescore_async(online.path, no_cache=True)
            forced = server.stats[f"model:{JUDGE}"] + server.stats["batch_lines"] - before

    print(f"LoCoMo, 2 generated conversations, {questions} questions, agent openai:mock, judge {JUDGE} priced as "
          f"gpt-4o-mini (${PRICE.prompt}/${PRICE.completion} per 1M tokens)")
    print(f"online judge: {calls_online} verdicts, {len(sent)} requests sent (the same question, gold and answer are "
          f"judged once: the cache answers the others), ${cost_online:.6f} (the mock's tokens at that price: "
          f"${online_bill:.6f})")
    print(f"batch judge:  {calls_batch} verdicts, {server.stats['batch_lines']} requests in "
          f"{server.stats['batches_created']} batch, ${cost_batch:.6f} (the mock's batch tokens at half that price: "
          f"${batch_bill:.6f}); {cost_batch / cost_online:.1%} of online; the run with the batch's wait "
          f"({args.polls} polls): {batch_wall:.1f} s")
    print(f"rescore with the judge cache: {rescore_calls[0]} then {rescore_calls[1]} judge calls; with --no-cache: "
          f"{forced}")


def _tokens(server: MockLLMServer, bodies: list[dict]) -> tuple[int, int]:
    """The mock's own token count of the judge requests it answered online (prompt, completion)."""
    from ltm_harness._llm.mock_server import reply_for

    prompt = completion = 0
    for body in bodies:
        p, c = server._count(body["messages"], reply_for(JUDGE, body["messages"]) or "")
        prompt, completion = prompt + p, completion + c
    return prompt, completion


if __name__ == "__main__":
    asyncio.run(main())
