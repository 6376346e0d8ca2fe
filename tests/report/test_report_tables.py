"""The CSV and JSON tables beside the page: loadable by any CSV reader (and so by pandas), same numbers."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from ltm_harness._report import write_report
from ltm_harness._report.tables import AgentRow, DatasetRow, HeadlineRow, TestRow
from ltm_harness._results.models import RunSummary, TestResult


def _csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


def test_the_tables_are_written_beside_the_page_with_the_documented_columns(small_run: Path):
    files = write_report([small_run])
    names = sorted(p.name for p in files.tables)
    assert names == sorted(f"report.{t}.{ext}" for t in ("headline", "agents", "datasets", "tests")
                           for ext in ("csv", "json"))
    for table, model in (("headline", HeadlineRow), ("agents", AgentRow), ("datasets", DatasetRow), ("tests", TestRow)):
        columns, rows = _csv(small_run / f"report.{table}.csv")
        assert columns == list(model.model_fields)
        records = json.loads((small_run / f"report.{table}.json").read_text())
        assert [list(r) for r in records] == [columns] * len(records)
        # The same values in both files: CSV as text, empty for missing values.
        for row, record in zip(rows, records, strict=True):
            for column in columns:
                value = record[column]
                assert row[column] == ("" if value is None else str(value) if not isinstance(value, float) else repr(value))


def test_the_numbers_are_those_of_the_run(small_run: Path):
    write_report([small_run])
    summary = RunSummary.model_validate_json((small_run / "summary.json").read_text())
    raw = {a["agent"]: a for a in json.loads((small_run / "summary.json").read_text())["agents"]}
    _, agents = _csv(small_run / "report.agents.csv")
    assert [r["agent"] for r in agents] == [a.agent for a in summary.agents]
    for row, agent in zip(agents, summary.agents):
        assert float(row["benchmark_score"]) == agent.benchmark_score
        assert float(row["ltm_score"]) == agent.ltm_score
        assert int(row["turns"]) == agent.turns and float(row["wall_seconds"]) == agent.wall_seconds
        assert row["llm_calls"] == ""  # the baselines make no LLM calls
        split = raw[agent.agent].get("cost_split")
        assert row["cost_agent_usd"] == ("" if split is None else repr(float(split.get("agent", 0.0))))
    _, datasets = _csv(small_run / "report.datasets.csv")
    expected = [(a.agent, d.dataset, d.score, d.std) for a in summary.agents for d in a.datasets]
    assert [(r["agent"], r["dataset"], float(r["score"]), float(r["std"])) for r in datasets] == expected
    _, tests = _csv(small_run / "report.tests.csv")
    results = [TestResult.model_validate(r) for r in json.loads((small_run / "retrieval" / "results.json").read_text())]
    mine = {(r["dataset"], r["example_id"]): r for r in tests if r["agent"] == "retrieval"}
    assert len(mine) == len(results) == 6
    for r in results:
        row = mine[(r.dataset, r.example_id)]
        assert (row["status"], float(row["normalized"]), int(row["achieved_gap"])) == (r.status, r.normalized, r.achieved_gap)
