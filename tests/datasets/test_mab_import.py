"""`import-answers memoryagentbench FILE`: the reference's own output file (what its main.py writes per source:
`dataset_config.sub_dataset`, `data` of `{output, query, answer, query_id, qa_pair_id, <metrics>}`) played as a run of
its own, each answer matched to its question by the source's running `query_id` (never guessed) and scored by the
same rules as live agents; the run plays only the file's source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ltm_harness._api import import_answers_async
from ltm_harness._errors import ConfigError
from ltm_harness.testing import load_script

ROOT = Path(__file__).resolve().parents[2]
gen = load_script(ROOT / "benchmarks" / "mab_data.py")


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return gen.write_dataset(tmp_path_factory.mktemp("mab"), sources=["factconsolidation_sh_262k",
                                                                      "factconsolidation_mh_262k"],
                             rows=2, questions=3, tokens=800)


def output_file(path: Path, records: list[dict]) -> Path:
    path.write_text(json.dumps({"agent_config": {"agent_name": "Long_context_agent_gpt-4o-mini"},
                                "dataset_config": {"sub_dataset": "factconsolidation_sh_262k", "chunk_size": 4096},
                                "data": records, "metrics": {}, "averaged_metrics": {"substring_exact_match": 50.0}}))
    return path


async def test_the_references_outputs_are_matched_by_query_id_and_scored_by_our_rules(data, tmp_path):
    # the reference plays one row of this source (its max_test_samples): query_id 0..2 are its questions
    records = [{"output": "I recall.\nAnswer: Vale 0 0", "query": "...", "answer": ["Vale 0 0"], "query_id": 0,
                "f1": 1.0},
               {"output": "Old Town 1", "query": "...", "answer": ["Vale 0 1"], "query_id": 1, "f1": 0.0},
               {"output": "x", "query": "...", "answer": [], "query_id": 99}]
    out = await import_answers_async("memoryagentbench", output_file(tmp_path / "out.json", records), name="published",
                                     data_file=data, results=tmp_path / "results")
    m = out.match
    assert (m.answers, m.questions, m.matched, m.unmatched, m.unanswered) == (3, 3, 2, 1, 1)
    assert "factconsolidation_sh_262k:99" in m.unmatched_list[0] and m.theirs[0].f1 == 1.0
    results = {r.example_id: r for r in out.results("published")}
    assert results["factconsolidation_sh_262k-0.0"].score == 1.0
    assert results["factconsolidation_sh_262k-0.1"].score == 0.0  # the older fact
    assert results["factconsolidation_sh_262k-0.2"].status == "unscored"  # no answer: never guessed
    assert {(r.labels or {})["source"] for r in results.values()} == {"factconsolidation_sh_262k"}


async def test_a_file_that_is_not_the_references_output_is_one_line(data, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"data": []}))
    with pytest.raises(ConfigError, match="not MemoryAgentBench's output file") as err:
        await import_answers_async("memoryagentbench", bad, name="x", data_file=data, results=tmp_path / "r")
    assert "\n" not in str(err.value)
