"""The mock judge and BEAM's rule agree on a clear abstention (issue 32, docs): without a judge the rule scores a
declining reply to an abstention question 1; `mock-judge` must not score the same reply 0."""

from __future__ import annotations

import json
from pathlib import Path

from ltm_harness._api import run_async
from ltm_harness._llm.mock_beam import rubric_reply
from ltm_harness._llm.mock_server import MockLLMServer
from ltm_harness.testing import load_script, make_config

ROOT = Path(__file__).resolve().parents[2]
ITEM = "LLM response should state: there is no information related to the garden plan"


def _prompt(item: str, response: str) -> str:
    return f"<rubric_item>{item}</rubric_item>\n<response>{response}</response>"


def test_a_declining_reply_meets_an_item_that_asks_to_decline():
    assert json.loads(rubric_reply(_prompt(ITEM, "I don't know.")) or "")["score"] == 1.0
    assert json.loads(rubric_reply(_prompt(ITEM, "The garden plan was approved.")) or "")["score"] < 1.0
    # an item that asks for a fact is not met by declining
    assert json.loads(rubric_reply(_prompt("LLM response should state: the budget is 40", "I don't know.")) or ""
                      )["score"] == 0.0


async def test_null_scores_the_same_on_abstention_by_the_rule_and_by_the_mock_judge(tmp_path, monkeypatch):
    gen = load_script(ROOT / "benchmarks" / "beam_data.py")
    gen.write_dataset(tmp_path / "data", "100K", 1)
    config = make_config([{"name": "beam", "args": {"data_dir": str(tmp_path / "data")}}], span=32000, examples=1)

    def abstention(out) -> float | None:
        d = out.agent_summary("null").datasets[0]
        return next(b.score for b in d.breakdown or [] if b.label == "ability" and b.value == "abstention")

    by_rule = await run_async(config, ["null"], results=tmp_path / "rule")
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        judged = await run_async(config, ["null"], results=tmp_path / "judge", judge="mock-judge")
    assert abstention(by_rule) == abstention(judged) == 1.0
