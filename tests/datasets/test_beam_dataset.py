"""The `beam` dataset end to end on small files of the real shapes (benchmarks/beam_data.py; never the real data):
each chat a conversation of its own, its messages heard as history at their batches' dates, then the probing
questions; per-ability results and the headline; without a judge only clear abstentions decided; with the mock
judge the oracle at 1.0 in every ability; one call per question for an OpenAI-compatible agent; the reference's
arithmetic; exact prompt parity with a BEAM checkout's prompts (built here independently); memory distance in
interleaved mode; a 10M chat assembled from its sub-plans."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from ltm_harness._api import run_async
from ltm_harness._errors import DefinitionError
from ltm_harness._llm.mock_server import MockLLMServer
from ltm_harness._store.events import TurnEvent
from ltm_harness.testing import load_script, make_config

ROOT = Path(__file__).resolve().parents[2]
gen = load_script(ROOT / "benchmarks" / "beam_data.py")
ABILITIES = {"abstention", "contradiction resolution", "event ordering", "information extraction",
             "instruction following", "knowledge update", "multi session reasoning", "preference following",
             "summarization", "temporal reasoning"}
HEADLINE = "average of the ten abilities (our arithmetic)"


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("beam")
    gen.write_dataset(root, "100K", 2)
    gen.write_dataset(root, "10M", 1, batches=2, turns=2)
    return root


def config(data: Path, examples: int = 2, span: int = 32000, **args):
    return make_config([{"name": "beam", "args": {"data_dir": str(data), **args}}], span=span, examples=examples)


async def test_each_chat_is_played_as_history_at_its_dates_then_its_questions(data, tmp_path):
    out = await run_async(config(data), ["oracle", "null", "retrieval"], results=tmp_path)
    events = out.events("oracle")
    assert sorted(events) == ["beam__100K-1", "beam__100K-2"]
    turns = [e for e in events["beam__100K-1"] if isinstance(e, TurnEvent)]
    history, questions = turns[:60], turns[60:]  # chat 1 is played from its truncated file: 60 messages
    assert all(t.observed and t.reply == "" for t in history) and len(questions) == 20
    # every message in its own role, its content as the file has it (the assistant's replies are the agent's own)
    assert [t.role or "user" for t in history[:4]] == ["user", "assistant", "user", "assistant"]
    assert history[0].user.startswith("Note 0: ")
    # each question answered from the memory the history left, as the reference answers (the agent goes back)
    assert all(t.went_back for t in questions)
    assert history[0].time == datetime(2024, 3, 15, tzinfo=timezone.utc)
    assert history[24].time >= datetime(2024, 3, 22, tzinfo=timezone.utc)  # the second batch at its date
    results = out.results("oracle")
    assert {(r.labels or {})["ability"] for r in results} == ABILITIES and len(results) == 40
    # without a judge a rule decides only clear abstentions on abstention questions; the rest is unscored
    decided = {r.example_id for r in results if r.status == "ok"}
    assert decided == {f"100K-{n}.abstention.{k}" for n in (1, 2) for k in (0, 1)}
    assert all(r.score == 1.0 for r in results if r.status == "ok")
    assert all("--judge" in r.reasons[0] for r in results if r.status == "unscored")
    metrics = out.agent_summary("null").datasets[0].metrics or {}
    quoted = out.agent_summary("null").datasets[0].headline
    assert quoted is not None and not quoted.judged
    values = {v.name: v for v in quoted.values}
    # an average of the ten abilities is not quoted over the one ability the rule decided: "-", with what it decided
    average = values[f"{HEADLINE} (rule-decided)"]
    assert (average.value, average.scored, average.tests) == (None, 4, 40)
    assert metrics["data: evidence nested"] == 2 and metrics["data: evidence missing"] == 2
    measured = [r for r in results if r.gaps and r.gaps[0].memory_distance is not None]
    assert len(measured) == 32  # every question with evidence (not abstention, not the empty/missing ones)


async def test_with_the_mock_judge_the_oracle_scores_1_in_every_ability(data, tmp_path, monkeypatch):
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        out = await run_async(config(data), ["oracle", "null"], results=tmp_path, judge="mock-judge")
        asked = [r for r in server.requests if r["model"] == "mock-judge"]
    oracle = out.agent_summary("oracle").datasets[0]
    assert oracle.score == 1.0 and oracle.scored == 40
    assert {b.value: b.score for b in oracle.breakdown or [] if b.label == "ability"} == dict.fromkeys(ABILITIES, 1.0)
    assert oracle.headline is not None and oracle.headline.judged
    values = {v.name: v.value for v in oracle.headline.values}
    assert values[HEADLINE] == 1.0 and len(values) == 11  # the average, then each of the ten abilities
    assert oracle.metrics is not None
    assert oracle.metrics["event ordering: F1"] == 1.0 and oracle.metrics["event ordering: tau_norm"] == 1.0
    # one judge verdict per rubric item (nine abilities); for event ordering one per (line, event) pair tried: the
    # oracle's lines are the gold events in order, each matched at its first try (the mock server's disk cache may
    # answer repeated prompts, so verdicts are counted, not requests)
    per_chat = 2 * (1 + 2 + 1 + 1 + 1 + 2 + 1 + 2 + 1)
    results = out.results("oracle")
    assert sum(len(r.verdicts) for r in results if "event_ordering" not in r.example_id) == 2 * per_chat
    assert [len(r.verdicts) for r in results if "event_ordering" in r.example_id] == [3, 3, 3, 3]
    assert any("<rubric_item>" in r["messages"][-1]["content"] for r in asked)
    assert any("<event>" in r["messages"][-1]["content"] for r in asked)
    null = out.agent_summary("null").datasets[0].headline
    # null declines everything: right on abstention alone (as the rule without a judge has it), so 1 of 10 abilities
    assert null is not None and null.values[0].name == HEADLINE and null.values[0].value == 0.1


async def test_an_openai_agent_makes_one_call_per_question(data, tmp_path, monkeypatch):
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        out = await run_async(config(data), ["openai:mock"], results=tmp_path)
        assert len(server.requests) == 40
    summary = out.agent_summary("openai:mock")
    assert summary.usage.calls["agent"] == 40 and summary.observed_turns == 60 + 72


def checkout(folder: Path) -> Path:
    """A BEAM checkout of the reference's form (its prompt text and alignment function in the same shape; our own
    words): `unified_llm_judge_base_prompt` with its three slots and a literal JSON brace, and `llm_equivalence` with
    a system message and an f-string of the two snippets. Running either file would leave a mark."""
    (folder / "src" / "evaluation").mkdir(parents=True)
    mark = f"open({str(folder / 'EXECUTED')!r}, 'w').write('x')\n"
    (folder / "src" / "prompts.py").write_text(
        mark + 'other_prompt = "unused"\n'
        'unified_llm_judge_base_prompt = """RUBRIC JUDGE\nQuestion: <question>\nItem: <rubric_item>\n'
        'Response: <llm_response>\nReturn {"score": 1.0, "reason": "..."} only."""\n')
    (folder / "src" / "evaluation" / "compute_metrics.py").write_text(
        mark + "from src.prompts import *\n\n\n"
        "def llm_equivalence(first_paragraph: str, second_paragraph: str, llm) -> bool:\n"
        "    system_msg = {\"role\": \"system\", \"content\": \"\"\"\n        SAME EVENT? reply YES or NO.\n    \"\"\"}\n"
        "    user_msg = {\"role\": \"user\", \"content\": f\"\"\"First snippet: {first_paragraph} \\n\n"
        "                 Second snippet: {second_paragraph}\n              \"\"\"}\n"
        "    return 'yes' in llm.invoke([system_msg, user_msg]).content.lower()\n")
    return folder


@pytest.mark.parametrize("scoring", ["reference", "ours"])
async def test_with_the_reference_prompts_the_judge_receives_exactly_the_references_messages(
        data, tmp_path, monkeypatch, scoring):
    folder = checkout(tmp_path / "checkout")
    template = 'RUBRIC JUDGE\nQuestion: <question>\nItem: <rubric_item>\nResponse: <llm_response>\n' \
               'Return {"score": 1.0, "reason": "..."} only.'
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        out = await run_async(config(data, examples=1, scoring=scoring), ["oracle"], results=tmp_path / "r",
                              judge="mock-judge", reference_prompts=folder)
        asked = [r["messages"] for r in server.requests if r["model"] == "mock-judge"]
    assert not (folder / "EXECUTED").exists()  # read with ast, never run
    (example,) = [e for e in out.events("oracle").values()]
    questions = [e for e in example if isinstance(e, TurnEvent) and e.question]
    spec = json.loads((data / "chats/100K/1/probing_questions/probing_questions.json").read_text())
    expected_rubric, expected_align = [], []
    asked_in_order = [(a, q) for a, qs in spec.items() for q in qs]  # ability by ability, as the reference asks
    assert [q["question"] for _, q in asked_in_order] == [t.user for t in questions]
    for turn, (ability, item_question) in zip(questions, asked_in_order):
        if ability == "event_ordering":
            lines = turn.reply.split("\n") if scoring == "reference" else [x.strip() for x in turn.reply.split("\n")
                                                                            if x.strip()]
            used: set[int] = set()
            for line in lines:  # the oracle's lines are the gold events in order: each matches at its first try
                k = next(k for k in range(len(item_question["rubric"])) if k not in used)
                used.add(k)
                first_paragraph, second_paragraph = item_question["rubric"][k], line
                expected_align.append([
                    {"role": "system", "content": "\n        SAME EVENT? reply YES or NO.\n    "},
                    {"role": "user", "content": f"""First snippet: {first_paragraph} \n
                 Second snippet: {second_paragraph}
              """}])
            continue
        for item in item_question["rubric"]:
            text = template if scoring == "reference" else template.replace("<question>", turn.user)
            expected_rubric.append([{"role": "user", "content": text.replace("<rubric_item>", item)
                                     .replace("<llm_response>", turn.reply)}])
    # the run's LLM cache answers a prompt it has already sent (the reference's unfilled question makes two
    # questions' prompts the same): the prompts sent are the expected ones, each once, in order
    assert [m for m in asked if m[0]["role"] == "user"] == once(expected_rubric)
    assert [m for m in asked if m[0]["role"] == "system"] == once(expected_align)


def once(messages: list) -> list:
    return [json.loads(m) for m in dict.fromkeys(json.dumps(m) for m in messages)]


async def test_reference_arithmetic_truncates_half_points_and_scores_order_by_tau_alone(data, tmp_path,
                                                                                      monkeypatch):
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        ours = await run_async(config(data), ["retrieval"], results=tmp_path / "a", judge="mock-judge")
        theirs = await run_async(config(data, scoring="reference"), ["retrieval"], results=tmp_path / "b",
                                 judge="mock-judge")
    a = {r.example_id: r for r in ours.results("retrieval")}
    b = {r.example_id: r for r in theirs.results("retrieval")}
    assert a.keys() == b.keys()
    halves = [k for k, r in a.items() if any("items" in x and "0.5" in x.split("items")[1].split(";")[0]
                                             for x in r.reasons)]
    assert halves  # the mock judge gave partial credit somewhere
    assert all(b[k].score < a[k].score for k in halves)  # int(0.5) == 0 in the published arithmetic
    for k, r in b.items():
        if "event_ordering" in k:
            tau = float(r.reasons[0].split("tau_norm ")[1].split(",")[0])
            assert r.score == pytest.approx(tau, abs=1e-4)
    quoted = theirs.agent_summary("retrieval").datasets[0].headline
    assert quoted is not None and quoted.values[0].name == "average of the ten abilities (the reference's arithmetic)"


async def test_interleaved_mode_asks_each_question_at_the_distance_from_its_evidence(data, tmp_path):
    out = await run_async(config(data, mode="interleaved", distance=300), ["oracle", "oracle@200"],
                          results=tmp_path)
    measured = [r for r in out.results("oracle") if r.gaps and r.gaps[0].memory_distance is not None]
    assert measured and all(r.gaps[0].memory_distance >= 300 for r in measured)


async def test_a_10m_chat_assembled_from_its_sub_plans_is_played_whole(data, tmp_path):
    out = await run_async(config(data, examples=1, scale="10M"), ["null"], results=tmp_path)
    summary = out.agent_summary("null")
    assert summary.observed_turns == 10 * 2 * 2 * 4  # ten sub-plans of 2 batches of 2 turns of 4 messages
    assert len(out.results("null")) == 20


def test_without_the_data_the_shipped_configs_stop_with_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "ltm_harness", "run", "-c", "beam-500k", "--limit", "2",
                           "--results", str(tmp_path), "--quiet", "-a", "null"], capture_output=True, text=True,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT), "LTM_HARNESS_CACHE":
                                             str(tmp_path / "cache"), "LTM_BEAM_URL": "http://127.0.0.1:9"})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "beam: cannot reach" in lines[0] and "data_dir" in lines[0]


def test_a_copy_of_ones_own_decides_the_tests(data):
    from ltm_harness._authoring.catalog import known_datasets

    beam = known_datasets()["beam"](memory_span=32000, data_dir=str(data), scale="100K")
    files = {p.relative_to(data).as_posix() for p in beam.source_files()}
    assert files == {"chats/100K/1/probing_questions/probing_questions.json", "chats/100K/1/chat_trunecated.json",
                     "chats/100K/2/probing_questions/probing_questions.json", "chats/100K/2/chat.json"}
    assert known_datasets()["beam"](memory_span=32000).source_files() == []  # fetched files are pinned


async def test_questions_in_sequence_when_asked_and_never_independent_in_interleaved_mode(data, tmp_path):
    from ltm_harness import LTMError

    out = await run_async(config(data, examples=1, questions="sequential"), ["oracle"], results=tmp_path / "a")
    (events,) = out.events("oracle").values()
    assert not any(e.went_back for e in events if isinstance(e, TurnEvent) and e.question)
    with pytest.raises(LTMError, match="independent questions are the reference mode's protocol"):
        await run_async(config(data, mode="interleaved", questions="independent"), ["oracle"], results=tmp_path / "b")


# -- a hostile checkout: the same bounds as LongMemEval's (one reader of reference sources, _interop/reference_source)

def _beam_line(folder: Path) -> str:
    from ltm_harness._interop.beam.reference_prompts import load_reference_prompts

    with pytest.raises(DefinitionError) as caught:
        load_reference_prompts(folder)
    return str(caught.value)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_beam_checkout_whose_prompts_file_is_a_fifo_is_one_line_and_never_blocks(tmp_path):
    folder = checkout(tmp_path / "checkout")
    prompts = folder / "src" / "prompts.py"
    prompts.unlink()
    os.mkfifo(prompts)
    line = _beam_line(folder)  # a blocking open would hang the test here
    assert line == f"{prompts}: cannot be read (it is a FIFO (named pipe), not a regular file); name a BEAM checkout"


@pytest.mark.parametrize("hostile", ["x = " + "-" * 200_000 + "1\n", "x = " + "1+" * 200_000 + "1\n"])
def test_a_beam_prompts_file_nested_past_the_parser_is_one_line(tmp_path, hostile):
    folder = checkout(tmp_path / "checkout")
    prompts = folder / "src" / "prompts.py"
    prompts.write_text(hostile + prompts.read_text())
    assert "nested too deeply for Python's parser" in _beam_line(folder)


def test_in_a_beam_checkout_the_last_definition_wins_as_in_python(tmp_path):
    from ltm_harness._interop.beam.reference_prompts import load_reference_prompts

    folder = checkout(tmp_path / "checkout")
    prompts = folder / "src" / "prompts.py"
    prompts.write_text('unified_llm_judge_base_prompt = "FIRST <rubric_item> <llm_response>"\n' + prompts.read_text())
    metrics = folder / "src" / "evaluation" / "compute_metrics.py"
    metrics.write_text(metrics.read_text() + "\n\ndef llm_equivalence(a, b, llm):\n"
                       "    return [{\"role\": \"system\", \"content\": \"LAST SYSTEM\"},\n"
                       "            {\"role\": \"user\", \"content\": f\"one {a} two {b}\"}]\n")
    prompts_read = load_reference_prompts(folder)
    assert "RUBRIC JUDGE" in prompts_read.rubric.user and "FIRST" not in prompts_read.rubric.user
    assert prompts_read.same_event.system == "LAST SYSTEM"
    assert not (folder / "EXECUTED").exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_data_dir_whose_files_are_not_regular_files_says_what_they_are(tmp_path):
    from ltm_harness._interop.beam.fetch import local_source

    chat = tmp_path / "chats" / "100K" / "1"
    chat.mkdir(parents=True)
    (chat / "probing_questions").mkdir()
    os.mkfifo(chat / "probing_questions" / "probing_questions.json")
    with pytest.raises(DefinitionError) as caught:
        local_source(tmp_path, "100K", 1)
    assert "probing_questions.json cannot be read (it is a FIFO (named pipe), not a regular file)" in str(caught.value)
    os.unlink(chat / "probing_questions" / "probing_questions.json")
    (chat / "probing_questions" / "probing_questions.json").write_text("{}")
    (chat / "chat.json").mkdir()
    with pytest.raises(DefinitionError) as caught:
        local_source(tmp_path, "100K", 1)
    assert str(caught.value).startswith(f"beam: {chat / 'chat.json'} cannot be read (it is a folder, not a regular file)")
