"""Memory distance: for each question, the tokens from the start of the earliest line its answer depends on (datasets
declare the lines); stored beside the reference-style gap in results, summaries and curves; the LTM score on either;
and the `oracle@N` calibration agent, whose scores step down exactly where the memory distances say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from ltm_harness import read_run
from ltm_harness._agents.base import AgentMessage, OracleHint
from ltm_harness._agents.baselines import OracleAgent
from ltm_harness._agents.specs import agent_factory
from ltm_harness._authoring.catalog import known_datasets
from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._authoring.example import TestExample
from ltm_harness._errors import AgentError
from ltm_harness._results.models import GapMeasure, TestResult, ltm_score, measure_gaps
from ltm_harness.testing import make_config, run_config


def example(is_question: list[bool], needs: list[list[int]] | None = None) -> TestExample:
    return TestExample(dataset_name="d", example_id="0", script=[f"line {i}" for i in range(len(is_question))],
                       is_question=is_question, needs=needs or [])


def dataset(name: str) -> DatasetInterface:
    return known_datasets()[name](memory_span=4000, seed=0)


# -- which lines a question needs -------------------------------------------------------------------------------
def test_by_default_a_question_needs_every_statement_said_before_it():
    ex = example([False, False, True, False, True])
    assert DatasetInterface().needed_lines(ex) == {2: (0, 1), 4: (0, 1, 3)}
    assert DatasetInterface().needed_lines(example([True, False])) == {}  # nothing said before it: no distance


def test_declared_needs_win_and_are_checked():
    ex = example([False, False, True, False, True], needs=[[1], [0, 2]])
    assert DatasetInterface().needed_lines(ex) == {2: (1,), 4: (0, 2)}
    assert ex.needs_of(4) == [0, 2] and ex.needs_of(1) is None
    with pytest.raises(ValidationError, match="needs has 1 entries but the script has 2 questions"):
        example([False, True, True], needs=[[0]])
    with pytest.raises(ValidationError, match=r"needs\[0\] names line 1, but a question \(line 1\) can only need lines 0 to 0"):
        example([False, True], needs=[[1]])
    # A definition written before `needs` existed (definitions format 1) is still read.
    old = json.loads(example([False, True]).model_dump_json())
    old.pop("needs")
    old["format"] = 1
    assert TestExample.model_validate(old).needs == []


@pytest.mark.parametrize("name", ["colours", "names", "kv", "jokes"])
def test_datasets_whose_answer_one_line_decides_need_only_it(name):
    ds = dataset(name)
    for ex in ds.generate_examples(3):
        q = ex.is_question.index(True)
        answer = ds.answer_statement_idx(ex)
        assert answer is not None and ds.needed_lines(ex) == {q: (answer[0],)}


@pytest.mark.parametrize("name", ["name_list", "shopping", "locations_directions", "sallyanne", "spy_meeting",
                                  "delayed_recall", "instruction_recall"])
def test_datasets_whose_answer_draws_on_every_statement_need_them_all(name):
    ds = dataset(name)
    for ex in ds.generate_examples(2):
        needs = ds.needed_lines(ex)
        assert needs, ex.unique_id
        for q, lines in needs.items():
            assert lines == tuple(i for i in range(q) if not ex.is_question[i])


# -- measuring ------------------------------------------------------------------------------------------------
class Line:
    def __init__(self, pos: int, tokens: int, is_question: bool, planned: int = 0) -> None:
        self.pos, self.tokens, self.is_question, self.planned, self.text = pos, tokens, is_question, planned, "x" * tokens


def test_memory_distance_runs_from_the_start_of_the_earliest_needed_line_and_the_gap_stays_as_it_was():
    lines = [Line(100, 10, False), Line(500, 20, False), Line(900, 5, True), Line(1500, 5, True)]
    gaps = measure_gaps(lines, (1, 20), len, False, needs={2: (0, 1), 3: (1,)})
    assert [(g.line, g.achieved_tokens, g.memory_distance) for g in gaps] == [(2, 380, 800), (3, 980, 1000)]
    assert measure_gaps(lines, (1, 20), len, False) == [g.model_copy(update={"memory_distance": None}) for g in gaps]


def test_the_ltm_score_is_computable_on_either_distance():
    def result(score: float, gap: int, distance: int | None) -> TestResult:
        return TestResult(dataset="d", example_id="0", status="ok", score=score, max_score=1.0, reasons=[],
                          questions=[], responses=[], expected=[], memory_span=4000, start_turn=0, end_turn=1,
                          tokens=0, gaps=[GapMeasure(line=1, target_tokens=gap, achieved_tokens=gap,
                                                     memory_distance=distance)])
    results = [result(1.0, 1000, 3000), result(1.0, 2000, 2000), result(0.5, 500, 4000), result(1.0, 700, None)]
    assert ltm_score(results, "gap") == pytest.approx((1000 + 2000 + 700) / 3)
    assert ltm_score(results, "memory_distance") == pytest.approx((3000 + 2000) / 2)  # tests without one left out
    assert results[0].memory_distance == 3000 and results[0].distance("gap") == 1000


# -- oracle@N ------------------------------------------------------------------------------------------------
async def test_oracle_at_n_says_only_the_parts_it_could_know():
    agent = OracleAgent("oracle@4k")
    assert agent.window == 4000 and agent.is_oracle
    message = AgentMessage(text="q", timestamp="2024-01-01T00:00:00", tokens=1)
    hint = OracleHint([("blue", 3999), ("the quote", 4001), ("phrase", 4000)])
    assert (await agent.reply(message, hint)).text == "blue phrase"
    assert (await agent.reply(message, OracleHint([("blue", 4001), ("phrase", None)]))).text == "I don't know. phrase"
    assert (await OracleAgent("oracle").reply(message, hint)).text == "blue the quote phrase"
    assert str(hint) == "blue the quote phrase"
    agent_factory("oracle@2000")()  # a spec the registry knows
    for bad in ("oracle@", "oracle@x", "oracle@0", "oracle:5"):
        with pytest.raises(AgentError, match="oracle@N"):
            agent_factory(bad)


# Datasets answered in the same turn they are asked (prospective_memory's quote comes turns after its request, so
# its oracle@N decides on a slightly longer distance than the one recorded at the request).
STEP_DATASETS = ["colours", "kv", "name_list", "shopping", "trigger_response", "jokes", "locations_directions"]


async def test_oracle_at_n_steps_exactly_where_the_memory_distances_say(tmp_path: Path):
    cfg = make_config(STEP_DATASETS, span=4000, examples=3)
    windows = [1000, 2000, 3000]
    agents = ["oracle", *(f"oracle@{n}" for n in windows)]
    await run_config(cfg, tmp_path, agents)
    run = read_run(tmp_path / "t")
    distances = [g.memory_distance for r in run.results("oracle") for g in r.gaps]
    assert all(d is not None for d in distances) and len(distances) == len(STEP_DATASETS) * 3 + 6
    shares = []
    for n in windows:
        results = run.results(f"oracle@{n}")
        known = 0
        for r in results:
            within = [g.memory_distance is not None and g.memory_distance <= n for g in r.gaps]
            # one point per question it could know, none for the others
            assert r.score == sum(within), (n, r.dataset, r.example_id, r.score, [g.memory_distance for g in r.gaps])
            known += sum(within)
        shares.append(known / sum(len(r.gaps) for r in results))
        summary = run.agent_summary(f"oracle@{n}")
        assert summary.ltm_score_memory_distance is not None and summary.ltm_score_memory_distance <= n
    assert 0 < shares[0] < shares[1] < shares[2] < 1, shares  # a step at each N
    assert all(r.normalized == 1.0 for r in run.results("oracle"))


async def test_the_report_shows_memory_distances_and_their_chart(tmp_path: Path):
    import csv

    from ltm_harness._report import write_report

    await run_config(make_config(["name_list", "colours"], span=2000, examples=2), tmp_path, ["oracle", "null"])
    run = read_run(tmp_path / "t")
    files = write_report([run.path], tmp_path / "report.html")
    html = files.html.read_text()
    assert "score against memory distance" in html and "LTM score on memory distance" in html
    assert html.count('<th class="num">memory distance</th>') == 2  # in each agent's dataset table
    oracle = run.agent_summary("oracle")
    assert oracle.ltm_score_memory_distance is not None and oracle.ltm_score_memory_distance > oracle.ltm_score
    by_name = {d.dataset: d for d in oracle.datasets}
    # name_list's answer draws on the first name, long before its last statement; colours' on the last one only.
    assert by_name["name_list"].memory_distance > 2 * by_name["name_list"].achieved_gap
    assert by_name["colours"].memory_distance < 1.1 * by_name["colours"].achieved_gap
    assert all(p.memory_distance is not None for d in oracle.datasets for p in d.curve)
    tests_csv = next(p for p in files.tables if p.name.endswith(".tests.csv"))
    rows = list(csv.DictReader(tests_csv.open()))
    assert rows and all(int(r["memory_distance"]) >= int(r["achieved_gap"]) for r in rows)
