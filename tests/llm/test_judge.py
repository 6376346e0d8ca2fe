"""The LLM judge: verdicts with their provenance, unparseable verdicts unscored, prompts checked, cache."""

from __future__ import annotations

import json

import pytest

from ltm_harness._errors import LTMError
from ltm_harness._llm.client import LLMClient, LLMSettings
from ltm_harness._llm.endpoint import resolve_endpoint
from ltm_harness._llm.judge import LLMJudge, load_judge_prompt
from ltm_harness._scoring.judge_prompt import parse_verdict
from ltm_harness.testing import make_config, run_config
from ltm_harness._scoring.verdict import JudgeUnparseable

from .gpt_fixture import write_gpt_dataset


def judge_for(url: str, model: str = "mock-judge") -> LLMJudge:
    client = LLMClient(resolve_endpoint("the judge", url), LLMSettings(backoff_initial=0.01))
    return LLMJudge(client, model, load_judge_prompt("default"))


async def test_a_verdict_keeps_model_prompt_hash_and_raw_reply(mock_llm):
    judge = judge_for(mock_llm.url)
    right = await judge.grade("What is the capital?", "Kestrel", "The capital is Kestrel.")
    wrong = await judge.grade("What is the capital?", "Kestrel", "I think it is Noor.")
    await judge.client.close()
    assert right.score == 1.0 and wrong.score == 0.0
    assert right.model == "mock-judge" and right.prompt_hash == load_judge_prompt("default").sha
    assert json.loads(right.raw)["score"] == 1.0 and "kestrel" in wrong.reason
    sent = mock_llm.requests[0]["messages"]
    assert sent[0]["role"] == "system" and "<expected>Kestrel</expected>" in sent[1]["content"]


async def test_garbage_is_asked_again_then_unparseable(mock_llm):
    judge = judge_for(mock_llm.url, "mock-judge-garbage")
    with pytest.raises(JudgeUnparseable) as info:
        await judge.grade("Q?", "A", "A")
    await judge.client.close()
    assert mock_llm.stats["requests"] == 3  # parse_attempts of the default prompt
    assert "no JSON object" in info.value.reason and "depends" in info.value.raw
    second = mock_llm.requests[1]["messages"]
    assert second[-1]["role"] == "user" and "could not be read" in second[-1]["content"]


def test_verdict_parsing():
    assert parse_verdict('```json\n{"score": 0.5, "reason": "half"}\n```').value == 0.5
    assert parse_verdict('{"correct": true}').value == 1.0
    for bad, why in (('{"score": 3}', "less than or equal to 1"), ('{"reason": "x"}', "neither"), ("yes", "no JSON")):
        with pytest.raises(ValueError, match=why):
            parse_verdict(bad)


def test_judge_prompt_files_are_checked(tmp_path):
    path = tmp_path / "j.json"
    path.write_text(json.dumps({"name": "j", "system": "s", "user": "<q>{question}</q> {response}"}))
    with pytest.raises(LTMError, match=r"j\.json: .*\{expected\}"):
        load_judge_prompt(str(path))
    path.write_text(json.dumps({"name": "j", "system": "s", "user": "{question} {expected} {response} {oops}"}))
    with pytest.raises(LTMError, match="stray brace or unknown field"):
        load_judge_prompt(str(path))
    with pytest.raises(LTMError, match="unknown judge prompt 'nope'; known judge prompts: default"):
        load_judge_prompt("nope")


async def judged_run(tmp_path, url, judge_model, monkeypatch, agents=("oracle", "null")):
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    folder = tmp_path / "ds"
    write_gpt_dataset(folder)
    cfg = make_config(["fictional_facts"], span=1500, examples=2, dataset_dirs=[str(folder)],
                      judge={"model": judge_model}, llm={"backoff_initial": 0.01})
    return await run_config(cfg, tmp_path / "results", list(agents))


async def test_a_run_with_a_judge_stores_verdicts(tmp_path, mock_llm, monkeypatch):
    summary = await judged_run(tmp_path, mock_llm.url, "mock-judge", monkeypatch)
    by_agent = {a.agent: a for a in summary.agents}
    assert summary.judge == "mock-judge"
    assert by_agent["oracle"].benchmark_score == 1.0 and by_agent["null"].benchmark_score == 0.0
    results = json.loads((tmp_path / "results" / "t" / "oracle" / "results.json").read_text())
    assert all(len(r["verdicts"]) == 2 and r["verdicts"][0]["model"] == "mock-judge" for r in results)
    assert by_agent["oracle"].usage.calls["judge"] == 4
    events = [json.loads(line) for line in (tmp_path / "results" / "t" / "oracle" / "events.jsonl").open()]
    judge_calls = [e for e in events if e["type"] == "llm_call" and e["role"] == "judge"]
    assert len(judge_calls) == 4 and all(e["test"].startswith("fictional_facts/") for e in judge_calls)


async def test_garbage_verdicts_leave_tests_unscored_never_zero(tmp_path, mock_llm, monkeypatch):
    summary = await judged_run(tmp_path, mock_llm.url, "mock-judge-garbage", monkeypatch, agents=("oracle",))
    ds = summary.agents[0].datasets[0]
    assert ds.tests == 2 and ds.unscored == 2 and ds.scored == 0
    results = json.loads((tmp_path / "results" / "t" / "oracle" / "results.json").read_text())
    assert {r["status"] for r in results} == {"unscored"}
    assert all("could not be read" in r["reasons"][0] for r in results)


async def test_without_a_judge_keywords_score(tmp_path):
    folder = tmp_path / "ds"
    write_gpt_dataset(folder)
    cfg = make_config(["fictional_facts"], span=1500, examples=2, dataset_dirs=[str(folder)])
    summary = await run_config(cfg, tmp_path / "results", ["oracle", "null"])
    assert [a.benchmark_score for a in summary.agents] == [1.0, 0.0]
