"""Whole runs through the runner: gaps, calibration, baselines' order, reproducibility, definitions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ltm_harness.testing import all_dataset_names, make_config, run_config

from ltm_harness._store.eventlog import read_events

from ltm_harness._store.events import TurnEvent
from ltm_harness._authoring.example import TestExample
from ltm_harness._results.models import TestResult

INCOMPATIBLE = [["names", "name_list"]]


def load_results(root: Path, agent: str, run: str = "t") -> list[TestResult]:
    raw = json.loads((root / run / agent.replace(":", "_") / "results.json").read_text())
    return [TestResult.model_validate(r) for r in raw]


@pytest.mark.parametrize("span, seed", [(1000, 0), (1000, 1), (1000, 2), (8000, 0), (32000, 0)])
async def test_achieved_gap_is_within_ten_percent_of_target(tmp_path, span, seed):
    cfg = make_config(all_dataset_names(), span=span, examples=3, incompatibilities=INCOMPATIBLE, seed=seed)
    await run_config(cfg, tmp_path, ["null", "oracle"])
    results = load_results(tmp_path, "null") + load_results(tmp_path, "oracle")
    gaps = [(r.dataset, r.example_id, g) for r in results for g in r.gaps]
    assert gaps
    for dataset, eid, g in gaps:
        assert g.target_tokens and g.target_tokens > 0
        assert abs(g.achieved_tokens - g.target_tokens) <= 0.10 * g.target_tokens, (dataset, eid, g)


async def test_oracle_scores_one_and_null_almost_nothing_on_every_dataset(tmp_path):
    names = all_dataset_names()
    cfg = make_config(names, span=3000, examples=3, incompatibilities=INCOMPATIBLE)
    summary = await run_config(cfg, tmp_path, ["oracle", "null"])
    by_agent = {a.agent: {d.dataset: d for d in a.datasets} for a in summary.agents}
    assert set(by_agent["oracle"]) == set(names)
    for name in names:
        assert by_agent["oracle"][name].score == 1.0, (name, load_results(tmp_path, "oracle"))
        assert by_agent["null"][name].score <= 0.05, name
        assert by_agent["oracle"][name].errored == 0 and by_agent["null"][name].errored == 0


async def test_baselines_come_out_in_the_expected_order_at_a_long_span(tmp_path):
    names = all_dataset_names()
    cfg = make_config(names, span=16000, examples=3, incompatibilities=INCOMPATIBLE)
    summary = await run_config(cfg, tmp_path, ["oracle", "retrieval", "recent:500", "null"])
    score = {a.agent: a.benchmark_score for a in summary.agents}
    assert score["oracle"] > score["retrieval"] > score["recent:500"] >= score["null"], score


async def test_same_seed_gives_identical_definitions_and_event_logs(tmp_path):
    names = all_dataset_names()
    outputs = []
    for attempt in ("a", "b"):
        cfg = make_config(names, span=4000, examples=2, incompatibilities=INCOMPATIBLE, seed=7)
        await run_config(cfg, tmp_path / attempt, ["retrieval", "oracle"])
        files = sorted(p for p in (tmp_path / attempt).rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl"))
        outputs.append({str(p.relative_to(tmp_path / attempt)): p.read_bytes() for p in files
                        if p.name not in ("summary.json",)})  # summaries hold wall times
    assert outputs[0].keys() == outputs[1].keys()
    assert any(k.endswith("events.jsonl") for k in outputs[0])
    assert any(k.endswith(".def.json") for k in outputs[0])
    for key in outputs[0]:
        assert outputs[0][key] == outputs[1][key], key
    other = make_config(names, span=4000, examples=2, incompatibilities=INCOMPATIBLE, seed=8)
    await run_config(other, tmp_path / "c", ["retrieval"])
    defs = lambda root: sorted(p.read_bytes() for p in root.rglob("*.def.json"))  # noqa: E731
    assert defs(tmp_path / "a") != defs(tmp_path / "c")


async def test_definitions_are_reused_by_the_next_run_with_the_same_config(tmp_path):
    cfg = make_config(["colours"], span=2000, examples=1)
    await run_config(cfg, tmp_path, ["oracle"])
    path = tmp_path / "t" / "definitions" / "colours" / "0.def.json"
    example = TestExample.model_validate_json(path.read_text())
    edited = example.model_copy(update={"expected_responses": ["Periwinkle"]})
    path.write_text(edited.model_dump_json())
    await run_config(cfg, tmp_path, ["null"])
    assert load_results(tmp_path, "null")[0].expected == ["Periwinkle"]
    # A different config regenerates them.
    await run_config(make_config(["colours"], span=2000, examples=1, seed=3), tmp_path, ["null"])
    assert load_results(tmp_path, "null")[0].expected != ["Periwinkle"]


async def test_isolated_mode_runs_every_test_in_its_own_session(tmp_path):
    cfg = make_config(all_dataset_names(), span=4000, examples=2, incompatibilities=INCOMPATIBLE, isolated=True)
    summary = await run_config(cfg, tmp_path, ["oracle"])
    agent = summary.agents[0]
    logs = list((tmp_path / "t" / "oracle" / "events").glob("*.jsonl"))
    assert len(logs) == sum(d.tests for d in agent.datasets)
    for log in logs:
        events = read_events(log)
        fillers = [e for e in events if isinstance(e, TurnEvent) and e.kind == "filler"]
        tests = {e.test for e in events if isinstance(e, TurnEvent) and e.test}
        assert len(tests) == 1
        # Filler only keeps a continual test going (it needs later turns); gaps are never filled.
        if not log.name.startswith("prospective_memory"):
            assert not fillers, log.name
    assert all(d.score == 1.0 for d in agent.datasets)
