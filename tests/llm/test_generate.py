"""GPT-generated datasets: prompt files are datasets; `generate` makes checked sets that runs reuse."""

from __future__ import annotations

import asyncio
import json

import pytest

from ltm_harness._cli.main import main as cli
from ltm_harness._errors import LTMError
from ltm_harness._authoring.gpt_generated import load_prompt_file
from ltm_harness._llm.counted import asked_count
from ltm_harness._authoring.catalog import known_datasets
from ltm_harness.testing import make_config, run_config

from .gpt_fixture import write_gpt_dataset


async def generate(argv: list[str]) -> int:
    return await asyncio.to_thread(cli, ["generate", *argv])


def test_asked_count():
    assert asked_count("Generate a comprehensive list of ten distinct facts spanning various subjects") == 10
    assert asked_count("There needs to be 7 answers.") == 7
    assert asked_count("Generate questions about the content above.") is None


async def test_generate_appends_checked_sets_that_runs_use(tmp_path, mock_llm, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", mock_llm.url)
    prompt = write_gpt_dataset(tmp_path / "ds", sets=[])
    cache = str(tmp_path / "cache")
    assert await generate([str(prompt), "--model", "mock-generator", "-n", "3", "--cache-dir", cache]) == 0
    stored = json.loads((tmp_path / "ds" / "fictional_facts.examples.json").read_text())
    assert stored["generated_by"] == ["hand-written", "mock-generator"] and len(stored["sets"]) == 3
    for s in stored["sets"]:
        assert len(s["content"]) == len(s["questions"]) == len(s["answers"]) == 2
        assert all(a in " ".join(s["content"]) for a in s["answers"])  # each answer is a stated fact
    assert len({json.dumps(s) for s in stored["sets"]}) == 3  # distinct sets
    assert mock_llm.stats["requests"] == 9  # three steps per set
    assert await generate([str(prompt), "--model", "mock-generator", "-n", "1", "--cache-dir", cache]) == 0
    assert len(json.loads((tmp_path / "ds" / "fictional_facts.examples.json").read_text())["sets"]) == 4
    # the dataset shows up and runs: the oracle gets everything right, keyword scoring offline
    assert "fictional_facts" in known_datasets([tmp_path / "ds"])
    cfg = make_config(["fictional_facts"], span=1500, examples=4, dataset_dirs=[str(tmp_path / "ds")])
    summary = await run_config(cfg, tmp_path / "results", ["oracle", "null"])
    assert [a.benchmark_score for a in summary.agents] == [1.0, 0.0]


async def test_generation_rejects_mismatched_counts(tmp_path, mock_llm, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_BASE_URL", mock_llm.url)
    prompt = write_gpt_dataset(tmp_path / "ds", sets=[])
    code = await generate([str(prompt), "--model", "mock-generator-short", "-n", "2", "--attempts", "2",
                           "--cache-dir", str(tmp_path / "cache")])
    err = capsys.readouterr().err
    assert code == 2 and "gave no valid set 1 in 2 attempts" in err and "asks for 2" in err
    assert mock_llm.stats["requests"] == 6  # two attempts of three steps, then it stops
    assert json.loads((tmp_path / "ds" / "fictional_facts.examples.json").read_text())["sets"] == []


def test_sets_with_unequal_counts_are_refused(tmp_path):
    bad = {"content": ["A fact."], "questions": ["Q1?", "Q2?"], "answers": ["a1"]}
    write_gpt_dataset(tmp_path / "ds", sets=[bad])
    with pytest.raises(LTMError, match=r"fictional_facts\.examples\.json: sets\.0: .*2 questions but 1 answers"):
        known_datasets([tmp_path / "ds"])["fictional_facts"](memory_span=1000).generate_examples(1)


@pytest.mark.parametrize("change, message", [
    (lambda d: d.pop("answer"), "answer: Field required"),
    (lambda d: d.update(scoring="vibes"), "scoring: Input should be 'judge' or 'keywords'"),
    (lambda d: d.update(colour="red"), "colour: Extra inputs are not permitted; remove it"),
    (lambda d: d.update(content=""), "content: String should have at least 1 character"),
])
def test_an_invalid_prompt_file_names_file_and_field(tmp_path, change, message):
    prompt = write_gpt_dataset(tmp_path / "ds")
    data = json.loads(prompt.read_text())
    change(data)
    prompt.write_text(json.dumps(data))
    with pytest.raises(LTMError) as info:
        load_prompt_file(prompt)
    assert str(info.value).startswith(f"{prompt}: ") and message in str(info.value)


def test_no_stored_sets_says_how_to_make_them(tmp_path):
    write_gpt_dataset(tmp_path / "ds", sets=[])
    with pytest.raises(LTMError, match="python -m ltm_harness generate .*fictional_facts.json --model"):
        known_datasets([tmp_path / "ds"])["fictional_facts"](memory_span=1000).generate_examples(1)


def test_new_sets_regenerate_definitions(tmp_path):
    from ltm_harness._authoring.definitions import fingerprint

    write_gpt_dataset(tmp_path / "ds")
    cls = known_datasets([tmp_path / "ds"])["fictional_facts"]
    before = fingerprint([(cls(memory_span=1000), 1)])
    path = tmp_path / "ds" / "fictional_facts.examples.json"
    data = json.loads(path.read_text())
    data["sets"].append(data["sets"][0])
    path.write_text(json.dumps(data))
    assert fingerprint([(cls(memory_span=1000), 1)]) != before
