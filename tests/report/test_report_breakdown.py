"""Benchmarks whose results carry labels and metrics of their own (LoCoMo's categories, LongMemEval's question types):
each category row and metric on the terminal, in the page (with a chart per category), in the CSV/JSON tables, in a
comparison and in a study's report; a run without labels shows none of it."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

from rich.console import Console

from ltm_harness._cli.main import main
from ltm_harness._cli.tables import agent_table, comparison_table, print_run
from ltm_harness._report import write_report
from ltm_harness._report.tables import BreakdownRow, MetricRow
from ltm_harness._results.models import RunSummary

from .bench_fixture import CATEGORIES, METRICS, NAME, UNSCORED, register, unregister

EXPECTED_SCORES = {  # per agent and category: the mean score (None: unscored), the same in both conversations
    "oracle": {c: None if c == UNSCORED else 1.0 for c in CATEGORIES},
    "retrieval": {"single-hop": 0.5, "multi-hop": 0.0, "temporal": 0.0, "open-domain": None, "adversarial": 0.0},
    "null": {c: None if c == UNSCORED else 0.0 for c in CATEGORIES},
}


def _summary(run: Path) -> RunSummary:
    return RunSummary.model_validate_json((run / "summary.json").read_text())


def _terminal(run: RunSummary) -> str:
    console = Console(file=io.StringIO(), width=200)
    print_run(run, console)
    return console.file.getvalue()  # type: ignore[attr-defined]


def _rows(text: str, title: str) -> dict[str, list[str]]:
    """The rows of the terminal table titled `title`: first cell -> the other cells."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == title)
    out = {}
    for line in lines[start + 2:]:  # after the title and the top border, to the bottom border
        if line.startswith(("└", "+")):
            break
        cells = [c.strip() for c in re.split(r"[│┃|]", line)[1:-1]]
        if cells and cells[0]:
            out[cells[0]] = cells[1:]
    return out


def test_the_terminal_shows_each_category_and_metric_per_agent_and_side_by_side(quiz_runs: list[Path]):
    run = _summary(quiz_runs[0])
    text = _terminal(run)
    for agent, scores in EXPECTED_SCORES.items():
        rows = _rows(text, f"agent {agent} · {NAME} by category")
        for category, score in scores.items():
            shown, tests, _distance, flags = rows[category]
            assert (shown, tests) == ("-" if score is None else f"{score:.2f}", "4" if category == "single-hop" else "2")
            assert flags == ("2/0" if score is None else "0/0")
        data = next(d for a in run.agents if a.agent == agent for d in a.datasets if d.dataset == NAME)
        lead = data.quoted(False).values[0]  # the dataset's leading number, with how many it is over
        assert lead.value is not None
        assert rows[f"all of {NAME}"][0] == (f"{lead.value:.2f}" if lead.scored == lead.tests else
                                             f"{lead.value:.2f} ({lead.scored} of {lead.tests} scored)")
        assert _rows(text, f"agent {agent} · {NAME} by abstention")["yes"][0] == f"{scores['adversarial']:.2f}"
        metrics = _rows(text, f"agent {agent} · {NAME}: the numbers it is quoted by")
        # its headline (undeclared: the score), then its own metrics; the data file's counts are said once, apart
        assert [m for m in metrics if m != "metric"] == ["score", *METRICS[:2]]
        assert metrics[METRICS[1]] == ["8"]
    assert text.count("2 of 12 unscored (left out of the scores): run with --judge MODEL") == 3
    assert "colours by" not in text  # a dataset without labels gets no table of its own
    side = _rows(text, "run quiz: headline numbers per dataset")
    for category in CATEGORIES:
        assert side[f"category {category}"] == ["-" if s is None else f"{s:.2f}"
                                                for s in (EXPECTED_SCORES[a][category] for a in ("oracle", "retrieval", "null"))]
    assert side["abstention yes"] == ["1.00", "0.00", "0.00"]
    assert side[METRICS[0]] == ["1.00", "0.25", "0.00"]  # as every number beside it, never "1"
    assert text.count(f"{NAME} · known errors in its data file (mended or left out): <int> answers 1") == 1


def test_without_labels_the_terminal_shows_only_the_tables_it_always_did(quiz_runs: list[Path]):
    run = _summary(quiz_runs[0])
    for agent in run.agents:
        for d in agent.datasets:
            d.breakdown, d.metrics = None, None
    console = Console(file=io.StringIO(), width=200)
    for agent in run.agents:
        console.print(agent_table(agent))
    console.print(comparison_table(run))
    assert _terminal(run) == console.file.getvalue()  # type: ignore[attr-defined]


class _Tables(HTMLParser):
    """The page's tables (their class and rows of cell texts) and the charts' labels."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[tuple[str, list[list[str]]]] = []
        self.charts: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.tables.append((a.get("class") or "", []))
        elif tag == "tr" and self.tables:
            self.tables[-1][1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "svg":
            self.charts.append(a.get("aria-label") or "")

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _section(page: str) -> str:
    return page.split('<section id="breakdown">', 1)[1].split("</section>", 1)[0]


def _page_tables(html: str) -> _Tables:
    parser = _Tables()
    parser.feed(html)
    return parser


def test_the_page_has_a_table_per_label_with_the_agents_side_by_side_the_metrics_and_a_chart_per_category(
        quiz_runs: list[Path], tmp_path: Path):
    page = write_report([quiz_runs[0]], tmp_path / "report.html").html.read_text()
    assert '<a href="#breakdown">by category and type</a>' in page
    section = _section(page)
    parsed = _page_tables(section)
    by_category = next(rows for cls, rows in parsed.tables if "breakdown" in cls and rows[0][0] == "category")
    assert by_category[0][:3] == ["category", "tests", "memory distance"]
    assert [re.sub(r"\s+", " ", h) for h in by_category[0][3:]] == ["oracle", "retrieval", "null"]
    body = {row[0]: row[1:] for row in by_category[1:]}
    whole = list(body)[-1]
    assert list(body)[:-1] == CATEGORIES and whole.startswith("all · score (on 10 of 12 questions, scored by all)")
    # "all" is the number of "Score per dataset", on the same questions (those scored for every agent)
    summary = page.split('<section id="summary">', 1)[1].split("</section>", 1)[0]
    grid = next(rows for cls, rows in _page_tables(summary).tables if "grid" in cls)
    per_dataset = next(row for row in grid if row[0].startswith(NAME))
    assert [cell.split()[0] for cell in body[whole][2:]] == [cell.split()[0] for cell in per_dataset[1:]]
    for category in CATEGORIES:
        tests, _distance, *scores = body[category]
        assert tests == ("4" if category == "single-hop" else "2")
        expected = [EXPECTED_SCORES[a][category] for a in ("oracle", "retrieval", "null")]
        assert scores == ["unscored" if s is None else f"{s:.2f}" for s in expected]
    by_abstention = next(rows for cls, rows in parsed.tables if "breakdown" in cls and rows[0][0] == "abstention")
    assert [row[0].split(" ·")[0] for row in by_abstention[1:]] == ["yes", "all"]
    metrics = next(rows for cls, rows in parsed.tables if "metrics" in cls and "data-errors" not in cls)
    assert {row[0]: row[1:] for row in metrics[1:]} == {METRICS[0]: ["1.00", "0.25", "0.00"], METRICS[1]: ["8", "8", "8"]}
    data = next(rows for cls, rows in parsed.tables if "data-errors" in cls)
    assert data[1:] == [[METRICS[2], "1"]]  # one count: the data file's, not an agent's
    assert "known errors in the data, counted in the data file" in section
    assert "data: &lt;int&gt; answers" in section and "<int>" not in page  # names escaped
    assert "every agent: 2 of 12 unscored (left out of the scores): run with --judge MODEL" in section
    scored = [c for c in CATEGORIES if c != UNSCORED]
    assert parsed.charts == [f"{NAME} · category {c}" for c in scored] + [f"{NAME} · abstention yes"]
    assert f"No panel for {UNSCORED}: no question of it was scored" in section


def test_a_page_without_labels_is_the_page_less_that_section(quiz_runs: list[Path], tmp_path: Path):
    run = tmp_path / "results" / "quiz"
    shutil.copytree(quiz_runs[0], run)
    labelled = write_report([run], tmp_path / "labelled.html").html.read_text()
    summary = json.loads((run / "summary.json").read_text())
    for agent in summary["agents"]:
        for d in agent["datasets"]:
            d.pop("breakdown", None)
            d.pop("metrics", None)
    (run / "summary.json").write_text(json.dumps(summary))
    files = write_report([run], tmp_path / "plain.html")
    section = '<section id="breakdown">' + _section(labelled) + "</section>"
    expected = labelled.replace(section, "").replace('<a href="#breakdown">by category and type</a>', "")
    expected = expected.replace('"dir":"labelled.parts"', '"dir":"plain.parts"')  # the histories beside each page
    assert files.html.read_text() == expected
    # the statistics are computed from the results (which keep their labels), so their tables stay
    stats = tuple(t for t in ("intervals", "pairs", "outcomes") if (tmp_path / f"labelled.{t}.csv").is_file())
    assert sorted(p.name for p in files.tables) == sorted(f"plain.{t}.{x}" for t in ("agents", "datasets", "tests", "headline") + stats
                                                          for x in ("csv", "json"))


def _csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


def test_the_breakdown_and_metrics_tables_hold_every_row(quiz_runs: list[Path], tmp_path: Path):
    files = write_report([quiz_runs[0]], tmp_path / "report.html")
    assert {p.name for p in files.tables} >= {f"report.{t}.{x}" for t in ("breakdown", "metrics") for x in ("csv", "json")}
    run = _summary(quiz_runs[0])
    columns, rows = _csv(tmp_path / "report.breakdown.csv")
    assert columns == list(BreakdownRow.model_fields)
    assert columns[:6] == ["run", "agent", "label", "dataset", "by", "value"]
    expected = [(a.agent, d.dataset, b.label, b.value, b.tests, b.scored, b.unscored, b.errored, b.score, b.memory_distance)
                for a in run.agents for d in a.datasets for b in d.breakdown or []]
    assert len(expected) == 3 * 6
    assert [(r["agent"], r["dataset"], r["by"], r["value"], int(r["tests"]), int(r["scored"]), int(r["unscored"]),
             int(r["errored"]), float(r["score"]), float(r["memory_distance"])) for r in rows] == expected
    assert {r["run"] for r in rows} == {"quiz"}
    records = json.loads((tmp_path / "report.breakdown.json").read_text())
    assert [BreakdownRow.model_validate(r).model_dump(mode="json") for r in records] == records
    assert [(r["agent"], r["by"], r["value"], r["score"]) for r in records] == [(e[0], e[2], e[3], e[8]) for e in expected]
    columns, rows = _csv(tmp_path / "report.metrics.csv")
    assert columns == list(MetricRow.model_fields) == ["run", "agent", "label", "dataset", "metric", "value"]
    assert [(r["agent"], r["metric"], float(r["value"])) for r in rows] == [
        (a.agent, name, value) for a in run.agents for d in a.datasets for name, value in (d.metrics or {}).items()]
    assert json.loads((tmp_path / "report.metrics.json").read_text())[2]["metric"] == METRICS[2]


def test_compare_puts_the_agents_of_both_runs_side_by_side_per_category(quiz_runs: list[Path], capsys):
    assert main(["compare", *map(str, quiz_runs)]) == 0
    out = capsys.readouterr().out
    side = _rows(out, "headline numbers per dataset, on the tests scored for every agent")
    assert len(side["category temporal"]) == 4  # oracle, retrieval, null of quiz; recent:500 of quiz-more
    assert side["category open-domain"] == ["-"] * 4  # nothing scored: no number
    assert METRICS[0] in side and METRICS[2] not in side  # the data file's count is no agent's number
    page = (quiz_runs[0].parent / "compare_quiz_quiz-more.html").read_text()
    parsed = _page_tables(_section(page))
    by_category = next(rows for cls, rows in parsed.tables if "breakdown" in cls and rows[0][0] == "category")
    assert [re.sub(r"\s+", " ", h) for h in by_category[0][3:]] == [
        "oracle · quiz", "retrieval · quiz", "null · quiz", "recent:500 · quiz-more"]
    assert all(len(row) == 3 + 4 for row in by_category)
    _, rows = _csv(quiz_runs[0].parent / "compare_quiz_quiz-more.breakdown.csv")
    assert {(r["run"], r["agent"]) for r in rows} == {("quiz", "oracle"), ("quiz", "retrieval"), ("quiz", "null"),
                                                      ("quiz-more", "recent:500")}


BASE = f"""
config:
  run_name: base
datasets:
  args: {{memory_span: 1000, dataset_examples: 1}}
  datasets:
    - {{name: {NAME}, args: {{mode: interleaved}}}}
"""
STUDY = """
name: quizgrid
base: base.yml
agents: [retrieval, oracle]
spans: [600, 1200]
"""


def test_a_study_crosses_spans_and_agents_on_an_interleaved_benchmark_and_reports_its_categories(tmp_path: Path):
    (tmp_path / "base.yml").write_text(BASE)
    (tmp_path / "study.yml").write_text(STUDY)
    register()
    try:
        assert main(["grid", str(tmp_path / "study.yml"), "--results", str(tmp_path / "results"), "--quiet"]) == 0
    finally:
        unregister()
    study = tmp_path / "results" / "quizgrid"
    _, rows = _csv(study / "report.breakdown.csv")
    got = {(r["agent"], r["by"], r["value"], int(r["span"])): float(r["mean"]) for r in rows}
    for agent in ("retrieval", "oracle"):
        for span in (600, 1200):
            cell = _summary(study / "cells" / f"{agent}__span{span}__seed0")
            # each question at least the span (the memory distance) after its evidence
            results = json.loads((study / "cells" / f"{agent}__span{span}__seed0" / agent / "results.json").read_text())
            assert all(g["memory_distance"] >= span for r in results for g in r["gaps"])
            for b in cell.agents[0].datasets[0].breakdown or []:
                key = (agent, b.label, b.value, span)
                if b.scored:
                    assert got.pop(key) == b.score
                else:
                    assert key not in got
    assert not got
    _, metrics = _csv(study / "report.metrics.csv")
    assert {(r["agent"], r["metric"], int(r["span"])) for r in metrics} == {
        (a, m, s) for a in ("retrieval", "oracle") for m in METRICS for s in (600, 1200)}
    page = (study / "report.html").read_text()
    assert '<section id="breakdown">' in page
    charts = _page_tables(page).charts
    for category in CATEGORIES:
        assert (f"{NAME} · category {category}" in charts) == (category != UNSCORED)
    assert METRICS[0] in page and "data: &lt;int&gt; answers" in page
