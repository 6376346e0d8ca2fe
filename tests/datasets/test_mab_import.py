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


def reference_shaped_record(query_id: int, output: str, answer: list, em: bool, subem: bool, f1: float | int) -> dict:
    """One `data` entry as the reference's main.py writes it: the agent's output dict (`output`, `input_len`,
    `output_len`, `memory_construction_time`, `query_time_len`), `parsed_output`, every metric of its rule scoring
    (booleans for EM/SubEM, an int 0 for a zero F1, the ROUGE fields), then `answer`, `query`, `query_id`, `qa_pair_id`."""
    return {"output": output, "input_len": 812, "output_len": 6, "memory_construction_time": 3.25,
            "query_time_len": 0.41, "parsed_output": output.split("\n")[0], "exact_match": em, "f1": f1,
            "substring_exact_match": subem, "rougeL_f1": 0.5, "rougeL_recall": 0.5, "rougeLsum_f1": 0.5,
            "rougeLsum_recall": 0.5, "answer": answer, "query": "Pretend you are ... Answer:", "query_id": query_id,
            "qa_pair_id": f"fc_{query_id}"}


async def test_a_file_of_the_references_exact_shape_is_read(data, tmp_path):
    # the whole file as main.py's save_results_to_file writes it: agent_config and dataset_config (the yaml's keys),
    # data, metrics (a list per metric), time_cost, averaged_metrics (x100, lengths and times as they are); query_id
    # 1 is missing (the reference writes no record when the agent returned None); a resumed run's `answer` may be a
    # bare string (its resume path keeps answer[0])
    records = [reference_shaped_record(0, "Vale 0 0", ["Vale 0 0", "Vale 0 0"], True, True, 1.0),
               reference_shaped_record(2, "I cannot tell.\nAnswer: Old Town", "Vale 0 2", False, False, 0)]
    path = tmp_path / "Long_context_agent_gpt-4o-mini_factconsolidation_sh_262k_results.json"
    path.write_text(json.dumps({
        "agent_config": {"agent_name": "Long_context_agent_gpt-4o-mini", "model": "gpt-4o-mini", "temperature": 0.7,
                         "input_length_limit": 128000, "buffer_length": 1000},
        "dataset_config": {"dataset": "Conflict_Resolution", "sub_dataset": "factconsolidation_sh_262k",
                           "chunk_size": 4096, "max_test_samples": 1, "generation_max_length": 10, "debug": False},
        "data": records,
        "metrics": {"exact_match": [True, False], "f1": [1.0, 0], "substring_exact_match": [True, False],
                    "input_len": [812, 812], "output_len": [6, 6], "memory_construction_time": [3.25, 3.25],
                    "query_time_len": [0.41, 0.41]},
        "time_cost": [12.5, 13.0],
        "averaged_metrics": {"exact_match": 50.0, "f1": 50.0, "substring_exact_match": 50.0, "input_len": 812.0}},
        indent=4))
    out = await import_answers_async("memoryagentbench", path, name="published", data_file=data,
                                     results=tmp_path / "results")
    m = out.match
    assert (m.answers, m.matched, m.unmatched, m.unanswered) == (2, 2, 0, 1)
    assert [t.f1 for t in m.theirs] == [1.0, 0.0]  # an int 0 read as a number
    results = {r.example_id: r for r in out.results("published")}
    assert results["factconsolidation_sh_262k-0.0"].score == 1.0
    assert results["factconsolidation_sh_262k-0.1"].status == "unscored"  # no record: never guessed
    assert results["factconsolidation_sh_262k-0.2"].score == 0.0


async def test_an_answer_scored_against_another_gold_is_unmatched_never_scored(data, tmp_path):
    # the file's golds tell which question it answered: query_id 0 with another gold comes from another revision
    # of the data (or another cap on rows); matching it by position alone would score it against the wrong question
    records = [reference_shaped_record(0, "Vale 0 0", ["Somewhere else"], False, False, 0),
               reference_shaped_record(2, "Vale 0 2", "Vale 0 2", True, True, 1.0)]  # a resumed run's bare gold
    out = await import_answers_async("memoryagentbench", output_file(tmp_path / "out.json", records), name="published",
                                     data_file=data, results=tmp_path / "results")
    m = out.match
    assert (m.matched, m.unmatched) == (1, 1)
    assert "'Somewhere else'" in m.unmatched_list[0] and "'Vale 0 0'" in m.unmatched_list[0]
    results = {r.example_id: r for r in out.results("published")}
    assert results["factconsolidation_sh_262k-0.0"].status == "unscored"
    assert results["factconsolidation_sh_262k-0.2"].score == 1.0
