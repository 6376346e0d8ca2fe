"""Finding and reading run folders: clear errors for what is not a run, tolerance for what is new."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ltm_harness._errors import LTMError
from ltm_harness._report import load_run, resolve_run, write_report


def test_run_is_found_by_path_or_by_name_under_the_results_folder(small_run: Path, tmp_path: Path):
    assert resolve_run(str(small_run)) == small_run
    assert resolve_run("small", tmp_path / "results") == tmp_path / "results" / "small"


def test_a_missing_run_names_both_places_it_looked(tmp_path: Path):
    with pytest.raises(LTMError) as err:
        resolve_run("nosuch", tmp_path / "results")
    assert "nosuch" in str(err.value) and str(tmp_path / "results" / "nosuch") in str(err.value)


def test_a_folder_that_is_not_a_run_says_what_is_missing(tmp_path: Path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(LTMError, match=r"empty is not a run folder: it has no summary\.json"):
        resolve_run(str(empty))


def test_an_unfinished_run_says_it_did_not_finish(tmp_path: Path):
    run = tmp_path / "killed"
    (run / "definitions").mkdir(parents=True)
    with pytest.raises(LTMError, match=r"killed has no summary\.json: the run did not finish"):
        load_run(run)


def test_the_results_folder_itself_points_at_its_runs(small_run: Path):
    with pytest.raises(LTMError, match=r"holds runs \(small\), not one run; give one of them"):
        resolve_run(str(small_run.parent))


def test_a_summary_that_is_not_json_names_the_file_and_line(small_run: Path):
    (small_run / "summary.json").write_text('{"run_name": "small",\n  oops', encoding="utf-8")
    with pytest.raises(LTMError) as err:
        load_run(small_run)
    assert str(small_run / "summary.json") in str(err.value) and "line 2" in str(err.value)


def test_a_summary_with_a_wrong_field_names_the_field(small_run: Path):
    data = json.loads((small_run / "summary.json").read_text())
    data["agents"][0]["turns"] = "many"
    (small_run / "summary.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(LTMError, match=r"summary\.json: agents\.0\.turns: "):
        load_run(small_run)


def test_a_broken_results_file_names_the_test(small_run: Path):
    path = small_run / "null" / "results.json"
    data = json.loads(path.read_text())
    del data[1]["score"]
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(LTMError, match=r"null/results\.json: test 1: score: "):
        load_run(small_run)


def _append(path: Path, *events: dict | str) -> None:
    with path.open("a", encoding="utf-8") as f:
        for e in events:
            f.write((e if isinstance(e, str) else json.dumps(e)) + "\n")


def test_new_fields_and_event_types_are_read_where_shown_and_ignored_elsewhere(small_run: Path):
    summary = json.loads((small_run / "summary.json").read_text())
    summary["agents"][0]["cost_split"] = {"agent": 0.25, "judge": 0.125, "generation": 0.0, "test": 0.0625}
    summary["agents"][0]["a_field_from_the_future"] = {"x": 1}
    for agent in summary["agents"][1:]:
        agent.pop("cost_split", None)  # as written before runs recorded it
        agent.pop("usage", None)
    summary["another_new_field"] = [1, 2]
    (small_run / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    call = {"type": "llm_call", "role": "judge", "model": "judge-model", "endpoint": "local", "test": "colours/0",
            "request_hash": "ab", "prompt_tokens": 100, "completion_tokens": 10, "latency_ms": 40.0, "retries": 2,
            "cost_usd": 0.125, "cached": False}
    _append(small_run / "oracle" / "events.jsonl", call, {**call, "retries": 1, "latency_ms": 60.0},
            {"type": "an_event_from_the_future", "payload": 1})
    run = load_run(small_run)
    oracle = next(a for a in run.agents if a.spec == "oracle")
    assert oracle.cost_split == {"agent": 0.25, "judge": 0.125, "generation": 0.0, "test": 0.0625}
    judge = oracle.sessions[0].calls["judge"]
    assert (judge.calls, judge.retries, judge.prompt_tokens, judge.mean_latency_ms) == (2, 3, 200, 50.0)
    files = write_report([small_run])
    rows = {r["agent"]: r for r in json.loads(files.html.with_name("report.agents.json").read_text())}
    assert rows["oracle"]["cost_judge_usd"] == 0.125 and rows["oracle"]["total_cost_usd"] == 0.4375
    assert rows["oracle"]["llm_calls"] == 2 and rows["oracle"]["llm_retries"] == 3
    assert rows["null"]["cost_judge_usd"] is None and rows["null"]["llm_calls"] is None
    html = files.html.read_text()
    assert "Cost by role" in html and "judge-model" in html


def test_a_truncated_event_log_is_a_warning_and_the_rest_is_shown(small_run: Path):
    log = small_run / "null" / "events.jsonl"
    log.write_text(log.read_text() + '{"type": "turn", "i": 99', encoding="utf-8")
    run = load_run(small_run)
    assert any("events.jsonl: line" in w and "not valid JSON" in w for w in run.warnings)
    null = next(a for a in run.agents if a.spec == "null")
    assert null.sessions[0].conversation("colours/0", null.results[0])  # the readable lines are all there


def test_agents_left_by_an_earlier_invocation_are_shown_and_junk_folders_skipped(small_run: Path, tmp_path: Path):
    summary = json.loads((small_run / "summary.json").read_text())
    summary["agents"] = [a for a in summary["agents"] if a["agent"] != "retrieval"]
    (small_run / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    junk = small_run / "notes"
    junk.mkdir()
    (junk / "summary.json").write_text('{"hello": 1}', encoding="utf-8")
    run = load_run(small_run)
    assert [(a.spec, a.earlier) for a in run.agents] == [("oracle", False), ("null", False), ("retrieval", True)]
    assert any("notes is left out" in w for w in run.warnings)


def test_an_agent_without_results_or_events_is_shown_with_a_warning(small_run: Path):
    shutil.rmtree(small_run / "null")
    run = load_run(small_run)
    null = next(a for a in run.agents if a.spec == "null")
    assert null.results == [] and null.sessions == []
    assert any("results.json is missing" in w for w in run.warnings)
    write_report([small_run])  # still writes a page
