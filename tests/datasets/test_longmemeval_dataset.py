"""The `longmemeval` dataset and its configs end to end, on the small synthetic file of tests/data/longmemeval (never
the real data): each question a conversation of its own, its haystack heard at its dates, the question at its date,
results by type and abstention, the rule without a judge (unscored where it cannot tell), the judge per kind, the
reference's metrics, memory distance in interleaved mode, and one line when the data is missing."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from ltm_harness._api import run_async
from ltm_harness._llm.mock_server import MockLLMServer
from ltm_harness._store.events import TurnEvent
from ltm_harness._tokens import get_tokenizer
from ltm_harness.testing import make_config

DATA = Path(__file__).resolve().parents[1] / "data" / "longmemeval" / "tiny.json"
ROOT = Path(__file__).resolve().parents[2]
TYPES = {"single-session-user", "single-session-assistant", "single-session-preference", "temporal-reasoning",
         "knowledge-update", "multi-session"}


def config(examples: int = 9, span: int = 4000, **args):
    return make_config([{"name": "longmemeval", "args": {"data_file": str(DATA), **args}}], span=span,
                       examples=examples)


async def test_each_question_is_a_conversation_of_its_own_heard_at_its_dates(tmp_path):
    out = await run_async(config(), ["oracle", "null", "retrieval"], results=tmp_path)
    logs = out.events("oracle")
    assert len(logs) == 9 and "longmemeval__2dd272d1" in logs
    turns = [e for e in logs["longmemeval__2dd272d1"] if isinstance(e, TurnEvent)]
    history, (question,) = turns[:-1], turns[-1:]
    assert len(history) == 6 and all(t.observed and t.reply == "" for t in history)
    assert not history[0].user.startswith(("User: ", "Assistant: "))  # each turn in its role
    assert {t.role for t in history} == {None, "assistant"}  # the user's (left out), the assistant's
    # each line's tokens were counted once, when the test was made, and the session played with those counts
    count = get_tokenizer().count
    assert all(t.user_tokens == count(t.user) for log in logs.values() for t in log if isinstance(t, TurnEvent))
    assert question.question and question.time == datetime(2023, 5, 19, 9, 58, tzinfo=timezone.utc)
    results = {r.example_id: r for r in out.results("oracle")}
    assert {r.labels["type"] for r in results.values() if r.labels} == TYPES
    assert results["e9cb0eb5_abs"].labels == {"type": "multi-session", "abstention": "yes"}
    # without a judge the rule decides what it safely can: the oracle's answers (the gold, or a plain "I don't
    # know" on an abstention question) are all decided right, but a preference question (a rubric) is unscored
    assert results["1bed440e"].status == "unscored" and "--judge" in results["1bed440e"].reasons[0]
    assert all(r.score == 1.0 for r in results.values() if r.status == "ok") and len(results) == 9
    null = {r.example_id: r for r in out.results("null")}
    # "I don't know." is a right answer to an abstention question by the rule, and a wrong one to every other
    # question (the history holds its answer), the preference one too: every reply of null is decided
    assert all(r.status == "ok" for r in null.values())
    assert {k for k, r in null.items() if r.score == 1.0} == {"e9cb0eb5_abs", "ba41eccc_abs", "243a8f50_abs"}
    quoted = out.agent_summary("null").datasets[0].headline
    assert quoted is not None and not quoted.judged
    values = {v.name: (v.value, v.scored, v.tests) for v in quoted.values}
    assert values["abstention accuracy (rule-decided)"] == (1.0, 3, 3)
    assert values["accuracy (rule-decided)"] == (3 / 9, 9, 9)
    assert out.agent_summary("oracle").observed_turns == 56  # every haystack turn of the 9 questions


async def test_with_a_judge_every_type_is_scored_and_the_reference_metrics_are_reported(tmp_path, monkeypatch):
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        out = await run_async(config(), ["oracle", "null"], results=tmp_path, judge="mock-judge")
        asked = [r for r in server.requests if r["model"] == "mock-judge"]
    oracle = out.agent_summary("oracle").datasets[0]
    assert oracle.scored == 9 and oracle.score == 1.0  # 1.0 in every type under the judge
    assert {b.value: b.score for b in oracle.breakdown or [] if b.label == "type"} == dict.fromkeys(TYPES, 1.0)
    assert oracle.headline is not None and oracle.headline.judged
    assert [(v.name, v.value) for v in oracle.headline.values[:3]] == [
        ("accuracy", 1.0), ("task-averaged accuracy", 1.0), ("abstention accuracy", 1.0)]
    null_quoted = out.agent_summary("null").datasets[0].headline
    null = {v.name: v.value for v in null_quoted.values} if null_quoted else {}
    assert null["abstention accuracy"] == 1.0 and null["accuracy"] == 3 / 9
    # one user message, capped at 10 tokens, the prompt of the question's kind (abstention by the `_abs` id)
    assert all(len(r["messages"]) == 1 and r["max_tokens"] == 10 for r in asked)
    assert sum("cannot be answered" in r["messages"][0]["content"] for r in asked) == 2 * 3


async def test_an_openai_agent_makes_one_call_per_question(tmp_path, monkeypatch):
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        out = await run_async(config(), ["openai:mock"], results=tmp_path)
        assert len(server.requests) == 9
        # the haystack in its roles: the assistant's turns as the model's own replies (as said, no timestamp)
        events = [e for e in out.events("openai:mock")["longmemeval__2dd272d1"] if isinstance(e, TurnEvent)]
        said = [m for m in next(r for r in server.requests if events[-1].user in r["messages"][-1]["content"])
                ["messages"] if m["role"] != "system"]
        assert [m["role"] for m in said] == ["assistant" if e.role == "assistant" else "user" for e in events]
        assert all(m["content"] == e.user for m, e in zip(said, events) if e.role == "assistant")
        server.requests.clear()
        await run_async(config(history="text"), ["openai:mock"], results=tmp_path / "text")
        assert all(m["role"] in ("system", "user") for r in server.requests for m in r["messages"])
        assert any("] Assistant: " in m["content"] for r in server.requests for m in r["messages"])
    summary = out.agent_summary("openai:mock")
    assert summary.usage.calls["agent"] == 9 and summary.observed_turns == 56


async def test_interleaved_mode_asks_at_the_distance_and_plays_no_history_after_the_question(tmp_path):
    out = await run_async(config(mode="interleaved", distance=40), ["oracle"], results=tmp_path)
    for example_id, events in out.events("oracle").items():
        turns = [e for e in events if isinstance(e, TurnEvent)]
        assert turns[-1].question  # the conversation ends with its question
    measured = [r.gaps[0].memory_distance for r in out.results("oracle") if r.gaps]
    assert measured and all(d is not None and d >= 40 for d in measured)


async def test_limit_takes_questions_stratified_by_type(tmp_path):
    out = await run_async(config(), ["null"], results=tmp_path, limit=7)
    kinds = [(r.labels or {}).get("abstention") or (r.labels or {})["type"] for r in out.results("null")]
    assert len(kinds) == 7 and len(set(kinds)) == 7  # six types and abstention, one each


async def test_asking_for_more_questions_than_the_file_holds_is_one_line(tmp_path):
    from ltm_harness import LTMError

    with pytest.raises(LTMError, match="10 questions asked for .* holds 9; ask for at most 9"):
        await run_async(config(examples=10), ["null"], results=tmp_path)


@pytest.mark.parametrize("variant", ["oracle", "s", "m"])
def test_without_the_data_the_shipped_configs_stop_with_one_line(tmp_path, variant):
    done = subprocess.run([sys.executable, "-m", "ltm_harness", "run", "-c", f"longmemeval-{variant}", "--results",
                           str(tmp_path), "--quiet", "-a", "null"], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "longmemeval: cannot reach" in lines[0] and "data_file" in lines[0]


async def test_rescoring_with_the_reference_prompts_judges_with_their_texts_and_keeps_the_tests(tmp_path, monkeypatch):
    import ltm_harness
    from ltm_harness import LTMError

    from .test_longmemeval_judge import checkout

    folder = checkout(tmp_path / "checkout")
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        out = await run_async(config(), ["oracle"], results=tmp_path / "results", judge="mock-judge")
        ours = [r["messages"][0]["content"] for r in server.requests]
        server.requests.clear()
        again = await ltm_harness.rescore_async(out.path, reference_prompts=folder)
        theirs = [r["messages"][0]["content"] for r in server.requests  # not the judge's retries: the mock honours
                  if not r["messages"][-1]["content"].startswith("Your reply could not be read")]  # max_tokens
    assert len(ours) == len(theirs) == 9
    assert not any(t.startswith(("DEFAULT", "TEMPORAL", "UPDATE", "PREFERENCE", "ABSTENTION")) for t in ours)
    assert sorted(t.split()[0] for t in theirs) == sorted(
        ["ABSTENTION"] * 3 + ["DEFAULT"] * 3 + ["TEMPORAL", "UPDATE", "PREFERENCE"])
    assert not (folder / "src" / "evaluation" / "EXECUTED").exists()  # read, never run
    # the tests are the same (the prompts only change the scoring); the mock judge cannot read these texts
    assert [r.example_id for r in again.results("oracle")] == [r.example_id for r in out.results("oracle")]
    with pytest.raises(LTMError, match="the run has no longmemeval dataset"):
        await run_async(make_config(["colours"], span=1000), ["null"], results=tmp_path / "other",
                        reference_prompts=folder)


async def test_the_estimate_counts_the_assistants_turns_as_the_agent_sends_them(tmp_path, monkeypatch):
    """History in its roles (assistant messages with no timestamp) is priced exactly as the `openai:` agent sends it."""
    from ltm_harness._runner.estimate import estimate

    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        out = await run_async(config(), ["openai:mock", "openai:mock@600"], results=tmp_path)
    for agent in ("openai:mock", "openai:mock@600"):
        est = (await estimate(config(), agent))[-1]
        assert est.prompt_tokens == out.agent_summary(agent).agent_prompt_tokens, agent
