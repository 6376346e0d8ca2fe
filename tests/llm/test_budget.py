"""A budget (`--max-cost`, config.max_cost): every paid call reserves its worst case first, the run stops before the
budget could be passed (resumable, one line with the spend), and a resume with a higher budget goes on to the
uninterrupted run's results with nothing paid twice; the ledger is kept in the run folder; unpriced models are said
once."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from ltm_harness._api import rescore_async, run_async
from ltm_harness._cli.main import main as cli
from ltm_harness._llm.contexts import ContextTable
from ltm_harness._llm.ledger import BudgetReached, Ledger, read_spend
from ltm_harness._llm.mock_server import MockLLMServer
from ltm_harness._llm.pricing import Price, PriceTable
from ltm_harness.testing import make_config

DATA = Path(__file__).resolve().parents[1] / "data" / "locomo" / "synthetic.json"
PRICES = {"mock": {"prompt": 10.0, "completion": 20.0}}  # USD per 1M tokens, for every mock model
AGENT = "openai:mock"


def config(max_cost: float | None = None, **extra: Any) -> Any:
    cfg = make_config([{"name": "locomo", "args": {"data_file": str(DATA)}}], span=4000, examples=2,
                      llm={"prices": PRICES, "contexts": {"mock": 3000}}, openai={"max_tokens": 64},
                      judge={"model": "mock-judge"}, **extra)
    cfg.config.max_cost = max_cost
    return cfg


def paid(server: MockLLMServer) -> int:
    return sum(line.requests for line in server.bill.online.values())


# -- the ledger ------------------------------------------------------------------------------------------------------

def test_a_call_is_refused_when_its_worst_case_could_pass_the_budget_and_every_later_one_too(tmp_path: Path) -> None:
    ledger = Ledger(PriceTable({"m": Price(prompt=1.0, completion=2.0)}), budget=0.01)
    ledger.keep(tmp_path / "spend.jsonl", carry=False)
    first = ledger.reserve("agent", "m", 1000, 1000)  # worst case 0.001 + 0.002
    assert ledger.in_flight == pytest.approx(0.003)
    second = ledger.reserve("judge", "m", 1000, 1000)  # both in flight: 0.006 reserved
    ledger.settle(first, 0.0015)  # billed less than its worst case
    ledger.release(second)  # failed: nothing billed
    assert ledger.spent == pytest.approx(0.0015) and ledger.in_flight == pytest.approx(0.0)
    with pytest.raises(BudgetReached, match=r"\$0\.001500 spent of the \$0\.0100 allowed \(max_cost\)"):
        ledger.reserve("agent", "m", 1000, 5000)  # 0.0015 + 0.011 > 0.01
    with pytest.raises(BudgetReached):  # once stopped, nothing more starts, however small
        ledger.reserve("agent", "m", 1, 1)
    ledger.close()
    assert read_spend(tmp_path / "spend.jsonl") == pytest.approx(0.0015)


def test_worst_case_output_is_max_tokens_else_the_models_limit_else_its_context(tmp_path: Path) -> None:
    ledger = Ledger(PriceTable(), contexts=ContextTable({"local": 8000}))
    assert ledger.max_output("gpt-4o-mini", 50, 1000) == 50
    assert ledger.max_output("gpt-4o-mini", None, 1000) == 16_384
    assert ledger.max_output("local", None, 1000) == 7000
    said: list[str] = []
    ledger.on_note = said.append
    assert ledger.max_output("unknown", None, 10) == 16_384 and ledger.max_output("unknown", None, 10) == 16_384
    assert len(said) == 1 and "config.openai.max_tokens" in said[0]


def test_an_unpriced_model_is_said_once_with_the_way_to_price_it() -> None:
    said: list[str] = []
    ledger = Ledger(PriceTable(), budget=1.0, on_note=said.append)
    for _ in range(3):
        ledger.settle(ledger.reserve("agent", "my-model", 100, 10), None)
    assert len(said) == 1 and "my-model has no known price" in said[0]
    assert "--set config.llm.prices.my-model.prompt=" in said[0] and ledger.spent == 0


def test_the_ledger_file_carries_to_a_resume_and_skips_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "spend.jsonl"
    path.write_text('{"role": "agent", "model": "m", "usd": 0.25}\n{"role": "judge", "model": "m", "usd": 0.5}\n'
                    '{"role": "age', encoding="utf-8")
    resumed = Ledger(PriceTable(), budget=1.0)
    resumed.keep(path, carry=True)
    assert resumed.spent == pytest.approx(0.75) and resumed.carried == pytest.approx(0.75)
    fresh = Ledger(PriceTable())
    fresh.keep(path, carry=False)
    assert fresh.spent == 0 and not path.exists()


# -- whole runs ------------------------------------------------------------------------------------------------------

async def test_a_run_stops_within_its_budget_and_a_resume_with_more_ends_as_an_uninterrupted_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        whole = await run_async(config(), [AGENT], results=tmp_path / "whole")
        whole_calls, total = paid(server), whole.summary.agents[0].cost_usd
        assert read_spend(whole.folder.spend) == pytest.approx(total)  # the ledger is the summary's cost

        server.bill.online.clear()
        budget = total / 2
        with pytest.raises(BudgetReached) as stopped:
            await run_async(config(budget), [AGENT], results=tmp_path / "cut")
        folder = tmp_path / "cut" / "t"
        at_stop = read_spend(folder / "spend.jsonl")
        assert 0 < at_stop <= budget and stopped.value.spent == pytest.approx(at_stop)
        assert server.bill.usd(PriceTable({m: Price(**p) for m, p in PRICES.items()})) == pytest.approx(at_stop)
        assert not (folder / "summary.json").exists()  # interrupted, resumable

        with pytest.raises(BudgetReached):  # the same budget: nothing more can be paid
            await run_async(config(budget), [AGENT], results=tmp_path / "cut", resume=True)
        resumed = await run_async(config(total * 4), [AGENT], results=tmp_path / "cut", resume=True)
        assert paid(server) == whole_calls  # every call paid once, over the two parts
    assert resumed.summary.agents[0].cost_usd == pytest.approx(total)
    assert read_spend(folder / "spend.jsonl") == pytest.approx(total)
    assert [r.score for r in resumed.results(AGENT)] == [r.score for r in whole.results(AGENT)]


def test_the_command_line_says_the_stop_in_one_line_and_how_to_go_on(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    async def main() -> None:
        async with MockLLMServer() as server:
            monkeypatch.setenv("OPENAI_BASE_URL", server.url)
            path = tmp_path / "run.yml"
            cfg = config()
            path.write_text(json.dumps(json.loads(cfg.model_dump_json())), encoding="utf-8")
            code = await asyncio.to_thread(cli, ["run", "-c", str(path), "-a", AGENT, "--results", str(tmp_path),
                                                 "--quiet", "--max-cost", "0.0001"])
            assert code == 1

    asyncio.run(main())
    err = capsys.readouterr().err
    assert "budget reached: $0.0000 spent of the $0.000100 allowed (--max-cost); the next call (agent, mock)" in err
    higher = re.search(r"-a openai:mock .*--max-cost ([0-9.]+) --quiet --resume$", err.strip())
    assert higher and float(higher.group(1)) > 0.004 and "Traceback" not in err  # room for the call refused


async def test_a_rescore_has_its_own_budget_and_leaves_the_run_as_it_was(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        cfg = config()
        cfg.config.llm.cache = False  # every verdict paid again
        out = await run_async(cfg, [AGENT], results=tmp_path)
        before = out.folder.agent(AGENT).results.read_bytes()
        with pytest.raises(BudgetReached):
            await rescore_async(out.path, max_cost=0.0005)
        assert out.folder.agent(AGENT).results.read_bytes() == before
        again = await rescore_async(out.path, max_cost=1.0)
    assert again.summary.agents[0].cost_usd == pytest.approx(out.summary.agents[0].cost_usd)


async def test_import_answers_stops_at_its_budget_and_goes_on_with_resume(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from ltm_harness._api import import_answers_async

    samples = json.loads(DATA.read_text(encoding="utf-8"))
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"sample_id": s["sample_id"], "question_index": i, "response": "Pepper"})
                               + "\n" for s in samples for i in range(len(s["qa"]))), encoding="utf-8")
    bench = tmp_path / "locomo.yml"
    bench.write_text(json.dumps({"config": {"run_name": "imp", "llm": {"prices": PRICES, "contexts": {"mock": 1000},
                                                                        "cache": False}},
                                 "datasets": {"args": {"memory_span": 4000, "dataset_examples": 2},
                                              "datasets": [{"name": "locomo", "args": {"data_file": str(DATA)}}]}}),
                     encoding="utf-8")
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        with pytest.raises(BudgetReached):
            await import_answers_async(str(bench), answers, name="pub", results=tmp_path, judge="mock-judge",
                                       max_cost=0.02)
        stopped = paid(server)
        out = await import_answers_async(str(bench), answers, name="pub", results=tmp_path, judge="mock-judge",
                                         max_cost=1.0, resume=True)
        assert 0 < stopped < paid(server) == 8  # the 8 judged questions, each paid once over the two parts
    assert sum(1 for r in out.results("pub") if r.verdicts) == 8
