"""The `locomo` dataset and config end to end, on a small synthetic file in LoCoMo's shape (never the real data):
history that needs no reply, dated sessions, one result per question by category, the reference's scores for the
calibration agents, memory distance in interleaved mode, J with a judge, and one line when the data is missing."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from ltm_harness._api import run_async
from ltm_harness._llm.mock_server import MockLLMServer
from ltm_harness._store.events import TurnEvent
from ltm_harness.testing import make_config

DATA = Path(__file__).resolve().parents[1] / "data" / "locomo" / "synthetic.json"
ROOT = Path(__file__).resolve().parents[2]
CATEGORIES = {"multi-hop", "temporal", "open-domain", "single-hop", "adversarial"}


def config(examples: int = 2, span: int = 4000, **args):
    return make_config([{"name": "locomo", "args": {"data_file": str(DATA), **args}}], span=span, examples=examples)


async def test_reference_mode_the_calibration_agents_and_the_shape_of_the_results(tmp_path):
    out = await run_async(config(), ["oracle", "null", "retrieval"], results=tmp_path)
    results = out.results("oracle")
    # one result per question of the file (a category-4 question without an answer is left out), each labelled
    assert len(results) == 11 and [r.example_id for r in results[:2]] == ["synthetic-1.q0", "synthetic-1.q1"]
    assert {r.labels["category"] for r in results if r.labels} == CATEGORIES
    assert all(r.status == "ok" and r.score == 1.0 for r in results)  # oracle: 1.0 in every category
    by_agent = {a.agent: a for a in out.summary.agents}
    for agent in ("oracle", "null"):
        rows = {b.value: b.score for b in by_agent[agent].datasets[0].breakdown or []}
        assert set(rows) == CATEGORIES and set(rows.values()) == ({1.0} if agent == "oracle" else {0.0})
    # "I don't know." shares no stemmed word with any gold answer here and never says "not mentioned"
    assert by_agent["null"].datasets[0].score == 0.0
    assert 0.0 < by_agent["retrieval"].datasets[0].score < 1.0
    metrics = by_agent["oracle"].datasets[0].metrics or {}
    assert metrics["data: int answers"] == 1 and metrics["data: evidence dropped"] == 2
    assert metrics["data: sessions without turns"] == 1 and "J (lenient judge, categories 1-4)" not in metrics
    # the conversation: the benchmark's own turns only, history heard without replies, each session at its date
    events = out.events("oracle")["locomo__synthetic-1"]
    turns = [e for e in events if isinstance(e, TurnEvent)]
    assert not any(t.kind in ("intro", "filler") for t in turns)
    heard = [t for t in turns if t.observed]
    assert len(heard) == 6 and all(t.reply == "" for t in heard)
    assert heard[0].user.startswith("Ada: Hi Bruno!") and "[shares a photo of a painting of a sunset" in heard[1].user
    assert heard[0].time == datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    assert heard[3].time == datetime(2023, 6, 27, 10, 37, tzinfo=timezone.utc)
    assert [t.question for t in turns] == [False] * 6 + [True] * 9
    assert out.agent_summary("oracle").observed_turns == 6 + 3
    # memory distance of a question: from the start of its earliest evidence turn to the question
    q0 = next(t for t in turns if t.question)
    assert results[0].gaps[0].memory_distance == q0.pos - heard[0].pos


async def test_interleaved_mode_puts_each_question_past_the_distance_and_oracle_at_n_steps_there(tmp_path):
    out = await run_async(config(mode="interleaved", distance=60), ["oracle", "oracle@59"], results=tmp_path)
    measured = [r.gaps[0].memory_distance for r in out.results("oracle") if r.gaps]
    assert measured and all(d is not None and d >= 60 for d in measured)
    assert all(r.score == 1.0 for r in out.results("oracle"))
    window = out.results("oracle@59")
    # every question with evidence is beyond the window (it says "I don't know."); those without evidence are not
    assert all(r.score == 0.0 for r in window if r.gaps and r.gaps[0].memory_distance is not None
               and r.labels != {"category": "adversarial"})
    turns = [e for e in out.events("oracle")["locomo__synthetic-1"] if isinstance(e, TurnEvent)]
    first_q = next(i for i, t in enumerate(turns) if t.question)
    assert any(t.observed for t in turns[first_q:])  # questions come in the middle of the history


async def test_an_openai_agent_makes_one_call_per_question(tmp_path, monkeypatch):
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        out = await run_async(config(), ["openai:mock"], results=tmp_path)
        assert len(server.requests) == 11  # 9 history turns, 11 questions: one call each
    assert out.agent_summary("openai:mock").usage.calls["agent"] == 11


async def test_a_judge_gives_j_over_categories_1_to_4_beside_the_reference_score(tmp_path, monkeypatch):
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        out = await run_async(config(judge="strict"), ["oracle", "null"], results=tmp_path, judge="mock-judge")
        judged = [r for r in server.requests if r["model"] == "mock-judge"]
    oracle = out.agent_summary("oracle").datasets[0]
    null = out.agent_summary("null").datasets[0]
    # the mock judge wants every word of the gold in the response; the oracle answers the open-domain question with
    # the part of its gold the reference's F1 scores (before ';'), so the judge, given the whole gold, says WRONG
    j = "J (strict judge, categories 1-4)"
    oracle_j = {v.name: v for v in oracle.headline.values}[j] if oracle.headline else None
    null_j = {v.name: v for v in null.headline.values}[j] if null.headline else None
    assert oracle_j is not None and oracle_j.value == 7 / 8
    assert null_j is not None and null_j.value == 0.0
    assert oracle_j.scored == 8  # categories 1-4 with a gold answer
    assert oracle_j.tests == 8 and oracle.headline and oracle.headline.values[0].name == "F1"
    assert len(judged) == 2 * 8
    # judged with LoCoMo's strict prompt (the dataset's own, whatever the run's judge prompt is), the whole gold
    assert "CORRECT only when it states the facts" in judged[0]["messages"][0]["content"]
    assert "<expected>Pepper</expected>" in judged[0]["messages"][1]["content"]
    results = out.results("oracle")
    assert all(len(r.verdicts) == (r.labels != {"category": "adversarial"}) for r in results)
    assert oracle.score == 1.0  # the reference score stays the F1's


def test_without_the_data_file_the_shipped_config_stops_with_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "ltm_harness", "run", "-c", "locomo", "--results", str(tmp_path),
                           "--quiet", "-a", "null"], capture_output=True, text=True, cwd=tmp_path,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert "locomo: cannot reach" in lines[0] and "data_file" in lines[0] and "--exclude locomo" in lines[0]


@pytest.mark.parametrize("bad, says", [
    ({"categories": [6]}, "args.categories: 6 is not a LoCoMo category"),
    ({"conversations": ["conv-99"]}, "args.conversations: 'conv-99' is not in the data file"),
])
async def test_wrong_arguments_are_one_line(tmp_path, bad, says):
    from ltm_harness import LTMError

    with pytest.raises(LTMError, match=says):
        await run_async(config(**bad), ["null"], results=tmp_path)


async def test_more_conversations_than_the_file_has_is_one_line(tmp_path):
    from ltm_harness import LTMError

    with pytest.raises(LTMError, match="3 conversations asked for .* but the data has 2; ask for at most 2"):
        await run_async(config(examples=3), ["null"], results=tmp_path)


def test_results_keep_the_reference_category_names():
    from ltm_harness._interop.locomo.data import CATEGORY_NAMES

    assert CATEGORY_NAMES == {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
    assert json.loads(DATA.read_text())[0]["sample_id"] == "synthetic-1"
