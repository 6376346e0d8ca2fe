"""`estimate` prices the LLM judge: as many requests as a real run's judge gets (the `llm_call` events with role judge
of its event log), the same prompts, priced with the price table (half with --judge-batch), an unpriced judge one
line. Data: the small LoCoMo- and LongMemEval-shaped test files; the real run's judge is the mock on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from ltm_harness._api import run_async
from ltm_harness._cli.main import main as cli
from ltm_harness._llm.judge_count import TYPICAL_VERDICT
from ltm_harness._llm.pricing import PriceTable
from ltm_harness._runner.estimate import SimulatedChatAgent, estimate
from ltm_harness._store.records import LLMCall
from ltm_harness._tokens import get_tokenizer
from ltm_harness.testing import make_config

DATA = Path(__file__).resolve().parents[1] / "data"
LOCOMO = DATA / "locomo" / "synthetic.json"
LONGMEMEVAL = DATA / "longmemeval" / "tiny.json"
PRICES = {"mock-judge": {"prompt": 2.0, "completion": 8.0}, "gpt-4o-mini": {"prompt": 0.15, "completion": 0.6}}


def config(judge: str | None = "mock-judge"):
    cfg = make_config([{"name": "locomo", "args": {"data_file": str(LOCOMO), "dataset_examples": 2}},
                       {"name": "longmemeval", "args": {"data_file": str(LONGMEMEVAL), "dataset_examples": 9}}],
                      span=4000, llm={"prices": PRICES})
    cfg.config.judge.model = judge
    return cfg


async def test_the_judge_is_estimated_as_a_real_run_judges(tmp_path, mock_llm, monkeypatch):
    """A real run whose agent gives the simulated answers: the estimate's judge requests and tokens sent are those of
    the run's judge calls; the price is the tokens at the table's price, half with the Batch API's."""
    monkeypatch.setenv("OPENAI_BASE_URL", mock_llm.url)
    out = await run_async(config(), [("sim", lambda: SimulatedChatAgent("sim"))], results=tmp_path,
                          judge="mock-judge")
    calls = [e for events in out.events("sim").values() for e in events
             if isinstance(e, LLMCall) and e.role == "judge"]
    (row,) = await estimate(config(), "openai:gpt-4o-mini")
    judge = row.judge
    assert judge is not None and judge.model == "mock-judge"
    # every LoCoMo question of categories 1-4 (8 of 11) and every LongMemEval question (9)
    assert judge.requests == len(calls) == 8 + 9 and judge.by_dataset == {"locomo": 8, "longmemeval": 9}
    assert judge.by_prompt["locomo-lenient"] == 8 and sum(judge.by_prompt.values()) == 17
    assert judge.prompt_tokens == sum(c.prompt_tokens for c in calls)  # the same prompts, counted as the mock bills
    # replies: LongMemEval's prompts cap them at 10 tokens; LoCoMo's at a typical JSON verdict
    typical = get_tokenizer().count(TYPICAL_VERDICT["json"])
    assert judge.completion_tokens == 9 * 10 + 8 * typical
    price = PriceTable(config().config.llm.prices)
    assert judge.cost_usd is not None and abs(
        judge.cost_usd - price.cost("mock-judge", judge.prompt_tokens, judge.completion_tokens)) < 1e-9
    assert row.cost_usd is not None and row.total_usd == round(row.cost_usd + judge.cost_usd, 10)
    (batched,) = await estimate(config(), "openai:gpt-4o-mini", judge_batch=True)
    assert batched.judge is not None and batched.judge.batch and batched.judge.requests == judge.requests
    assert batched.judge.cost_usd is not None and abs(batched.judge.cost_usd - judge.cost_usd / 2) < 1e-9
    assert batched.cost_usd == row.cost_usd  # the agent's price is not the judge's discount


async def test_without_a_judge_there_is_no_judge_part():
    (row,) = await estimate(config(judge=None), "openai:gpt-4o-mini")
    assert row.judge is None and row.total_usd == row.cost_usd


async def test_the_command_shows_the_judge_row_and_an_unpriced_judge_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    base = ["estimate", "-c", "locomo", "--set", f"datasets.locomo.args.data_file={LOCOMO}", "--examples", "2",
            "-a", "openai:gpt-4o-mini"]
    code = await asyncio.to_thread(cli, base + ["--judge", "gpt-4o-mini", "--judge-batch"])
    out, err = capsys.readouterr()
    assert code == 0 and err.count("\n") == 0
    assert "judge gpt-4o-mini" in out and "total" in out
    assert "judge gpt-4o-mini: 8 requests for each agent's answers (locomo 8; prompts: locomo-lenient 8)" in out
    assert "Batch API's price (half)" in out
    code = await asyncio.to_thread(cli, base + ["--judge", "judge-x", "--json"])
    out, err = capsys.readouterr()
    (row,) = json.loads(out)
    assert code == 0 and row["judge"]["requests"] == 8 and row["judge"]["cost_usd"] is None
    assert row["total_usd"] is None and row["cost_usd"] > 0
    assert err.count("\n") == 1 and err.startswith("warning: judge judge-x has no known price") \
        and "llm.prices" in err and "Traceback" not in err
    code = await asyncio.to_thread(cli, base + ["--judge", "judge-x"])
    out, err = capsys.readouterr()
    assert code == 0 and "unpriced" in out and err.count("\n") == 1 and "judge judge-x has no known price" in err
    code = await asyncio.to_thread(cli, base + ["--judge-batch"])
    out, err = capsys.readouterr()
    assert code != 0 and err.count("\n") == 1 and "--judge-batch needs a judge" in err
