"""Each benchmark's own headline (ltm_harness/_results/headline.py): declared metrics computed from per-question
results, nothing unscored shown as a score, subsets said in the cell, agents compared on the questions scored for
all of them; and what the terminal, the page, the CSV/JSON and summary.json say with it, on real runs of small
generated files (LoCoMo-shaped, LongMemEval S-shaped) and of the default config."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from ltm_harness._api import run_async
from ltm_harness._cli.tables import print_run
from ltm_harness._report import write_report
from ltm_harness._report.tables import Quoted, headline_rows
from ltm_harness._results.headline import MetricValue, Played, common_ids, compare, evaluate, played_text, value_text
from ltm_harness._scoring.headline import Headline, Metric
from ltm_harness._results.models import DatasetSummary, TestResult
from ltm_harness._scoring.verdict import JudgeVerdict
from ltm_harness.testing import load_script, make_config

ROOT = Path(__file__).resolve().parents[2]
LOCOMO = ROOT / "tests" / "data" / "locomo" / "synthetic.json"


def result(example_id: str, status: str = "ok", score: float = 1.0, verdict: float | None = None,
           **labels: str) -> TestResult:
    verdicts = [JudgeVerdict(question="q", score=verdict, reason="r", model="m", prompt_hash="h", raw="r")] if verdict is not None else []
    return TestResult(dataset="bench", example_id=example_id, status=status, score=score, max_score=1.0, reasons=[],
                      verdicts=verdicts, questions=["q"], responses=["a"], expected=["a"], memory_span=100,
                      start_turn=0, end_turn=1, tokens=10, labels=labels or None)


SPEC = Headline(metrics=[Metric(name="accuracy"), Metric(name="task-averaged", by="type", order=["b", "a"]),
                         Metric(name="abstention", where={"abstention": "yes"}),
                         Metric(name="accuracy", per="type", order=["b", "a"]),
                         Metric(name="J", of="verdict", unless={"type": ["b"]})],
                unjudged="rule-decided", question="question")


def test_the_declared_metrics_aggregate_as_declared_and_count_what_they_cover():
    rs = [result("1", type="a"), result("2", score=0.0, type="a"), result("3", status="unscored", type="a"),
          result("4", type="b", abstention="yes"), result("5", status="errored", score=0.0, type="b")]
    values = {v.name: v for v in evaluate(SPEC, rs, judged=False)}
    # unjudged: named rule-decided, and the judge's J is absent (not "-")
    assert list(values) == ["accuracy (rule-decided)", "task-averaged (rule-decided)", "abstention (rule-decided)",
                            "accuracy (rule-decided) · b", "accuracy (rule-decided) · a"]
    overall = values["accuracy (rule-decided)"]
    assert (overall.value, overall.scored, overall.tests) == (2 / 4, 4, 5)  # errored counts 0, unscored left out
    # task-averaged: the unweighted mean of the types' means (a: 1/2, b: 1/2), not the pooled mean
    assert values["task-averaged (rule-decided)"].value == 0.5
    assert values["abstention (rule-decided)"].value == 1.0 and values["abstention (rule-decided)"].tests == 1
    assert value_text(overall, "decided") == "0.50 (4 of 5 decided)"
    assert value_text(values["accuracy (rule-decided) · b"], "decided") == "0.50"


def test_a_mean_over_nothing_scored_is_none_never_zero():
    rs = [result("1", status="unscored", type="a"), result("2", status="unscored", type="a")]
    values = evaluate(SPEC, rs, judged=True)
    assert all(v.value is None for v in values) and value_text(values[0]) == "-"
    # a summary written before headlines: the mean of nothing scored is no number either
    old = DatasetSummary(dataset="colours", tests=2, scored=0, unscored=2, errored=0, score=0.0, std=0.0,
                         target_gap=None, achieved_gap=None)
    assert old.quoted(False).values == [MetricValue(name="score", value=None, scored=0, tests=2)]


def test_the_judges_number_counts_only_the_verdicts_and_its_categories():
    rs = [result("1", verdict=1.0, type="a"), result("2", verdict=0.0, type="a"), result("3", type="a"),
          result("4", verdict=1.0, type="b")]
    j = next(v for v in evaluate(SPEC, rs, judged=True) if v.name == "J")
    assert (j.value, j.scored, j.tests) == (0.5, 2, 3)  # type b left out; question 3 has no verdict


def test_agents_are_compared_on_the_questions_scored_for_every_one_of_them():
    oracle = [result(str(i), type="a") for i in range(4)]
    null = [result("0", score=0.0, type="a")] + [result(str(i), status="unscored", type="a") for i in range(1, 4)]
    assert common_ids([oracle, null])["score"] == {"0"}
    values, counts = compare(SPEC, False, [oracle, null])
    assert counts["score"] == 1
    assert [(v.value, v.scored, v.tests) for v in values[0][:1]] == [(1.0, 1, 1)]
    assert [(v.value, v.scored, v.tests) for v in values[1][:1]] == [(0.0, 1, 1)]


def test_what_was_played_is_said_in_the_benchmarks_words():
    spec = Headline(metrics=[Metric(name="F1")], question="question", conversation="conversation")
    assert played_text(Played(conversations=10, history_turns=5882, questions=1986), spec) == \
        "10 conversations, 5,882 history turns, 1,986 questions"


# -- real runs ------------------------------------------------------------------------------------------------------


def _terminal(out, results: bool = True) -> str:
    console = Console(file=io.StringIO(), width=220)
    print_run(out.summary, console, {a: out.results(a) for a in out.agents} if results else None)
    return console.file.getvalue()  # type: ignore[attr-defined]


def _text(markup: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", markup)))


def _header(page: str) -> str:
    found = re.search(r"<header>.*?</header>", page, re.S)
    assert found is not None
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", found.group(0))))


@pytest.fixture(scope="module")
def lme_run(tmp_path_factory):
    """oracle, null and retrieval on 30 questions of a generated LongMemEval S-shaped file, without a judge."""
    gen = load_script(ROOT / "benchmarks" / "longmemeval_data.py")
    root = tmp_path_factory.mktemp("lme")
    path = root / "s.json"
    gen.write_file(path, questions=500, sessions=2, session_tokens=40)
    cfg = make_config([{"name": "longmemeval", "args": {"variant": "s", "mode": "reference", "data_file": str(path)}}],
                      span=32000, examples=30, run_name="lme")
    import asyncio

    return asyncio.run(run_async(cfg, ["oracle", "null", "retrieval"], results=root / "results"))


def test_longmemeval_without_a_judge_never_ranks_null_with_oracle(lme_run):
    out = lme_run
    quoted = [Quoted("lme", a, a, out.agent_summary(a), out.results(a), False) for a in out.agents]
    rows = headline_rows(quoted)
    common = {(r.agent, r.metric): r for r in rows if r.over == "common"}
    own = {(r.agent, r.metric): r for r in rows if r.over == "own"}
    metrics = list(dict.fromkeys(r.metric for r in rows if r.over == "common"))
    assert metrics[:2] == ["accuracy (rule-decided)", "task-averaged accuracy (rule-decided)"]
    for metric in metrics[:2]:  # the same questions for all three
        assert common[("oracle", metric)].tests == common[("null", metric)].tests == common[("retrieval", metric)].tests
    # the headline: null strictly below oracle, on the same questions
    o, n = common[("oracle", metrics[0])], common[("null", metrics[0])]
    assert o.value is not None and n.value is not None and n.value < o.value
    # the task-averaged accuracy is a mean over every type: the types decided for all three are not all of them, so
    # it is not quoted ("-") rather than averaged over the few a rule could decide
    types = {r.labels["type"] for r in out.results("oracle") if r.labels}
    assert len(types) > 2 and common[("oracle", metrics[1])].value is None and common[("null", metrics[1])].value is None
    assert own[("null", metrics[1])].value is not None and own[("null", metrics[1])].value < 0.5
    for metric in metrics[2:]:  # per type and abstention: never above oracle
        o, n = common[("oracle", metric)], common[("null", metric)]
        assert n.value is None or (o.value is not None and n.value <= o.value), metric
    # every reply of null is decided (declining an answerable question is wrong); the oracle's far more than 5 of 30
    lead = "accuracy (rule-decided)"
    assert own[("null", lead)].scored == 30 and own[("oracle", lead)].scored > 20
    text = _terminal(out)
    assert "decided by each" in text and "30 of 30" in text
    # the oracle's number covers the questions a rule could decide: marked, and listed after null, which has no mark
    assert re.search(r"longmemeval · accuracy \(rule-decided\)\s+│\s+0\.00\s+│\s+1\.00 \[unscored\]", text)
    assert "[unscored] partly unscored" in text
    page = write_report([out.path]).html.read_text()
    header = _header(page)
    assert re.search(r"longmemeval: 30 haystacks, \d[\d,]* history turns, 30 questions", header)
    assert "interleaved" not in header and "LTM score" not in page.split('<section id="summary">')[1].split("</section>")[0]
    quoted_by = page.split("the numbers it is quoted by")[1].split("</table>")[0]
    task = re.search(r"<tr><td>task-averaged accuracy \(rule-decided\).*?</tr>", quoted_by)
    n = common[("oracle", "task-averaged accuracy (rule-decided)")].tests
    assert n < 30 and task is not None and f"on {n} of 30, decided by all" in _text(task.group(0))


@pytest.fixture(scope="module")
def locomo_run(tmp_path_factory):
    import asyncio

    cfg = make_config([{"name": "locomo", "args": {"data_file": str(LOCOMO)}}], span=4000, examples=2,
                      run_name="locomo")
    return asyncio.run(run_async(cfg, ["oracle", "retrieval", "null"], results=tmp_path_factory.mktemp("loc")))


def test_locomo_is_quoted_by_f1_per_category_and_drawn_per_category(locomo_run):
    out = locomo_run
    quoted = out.agent_summary("retrieval").datasets[0].headline
    assert quoted is not None and [v.name for v in quoted.values] == [
        "F1", "F1 · multi-hop", "F1 · temporal", "F1 · open-domain", "F1 · single-hop", "F1 · adversarial"]
    assert quoted.played is not None and quoted.played.conversations == 2
    text = _terminal(out)
    assert "locomo · F1" in text and "benchmark" not in text and "LTM score" not in text
    assert "target gap" not in text
    files = write_report([out.path])
    page = files.html.read_text()
    header = _header(page)
    assert f"locomo: 2 conversations, {quoted.played.history_turns} history turns, {quoted.played.questions} questions" in header
    assert "interleaved" not in header
    summary = _text(page.split('<section id="summary">')[1].split("</section>")[0].split('<p class="note">')[0])
    assert "benchmark score" not in summary and "LTM score" not in summary and "locomo · F1" in summary
    # no chart pools the categories: score panels of LoCoMo are one per category, in its own section
    assert "all datasets" not in page
    # no GoodAI aggregate either: its bar is the number LoCoMo is quoted by
    assert "benchmark score (share of max)" not in page and 'aria-label="locomo · F1"' in page
    charts = re.findall(r'aria-label="([^"]*)"', page)
    order = ("multi-hop", "temporal", "open-domain", "single-hop", "adversarial")  # LoCoMo's own: categories 1 to 5
    assert [c for c in charts if c.startswith("locomo · category")] == [
        f"locomo · category {c}" for c in order
        if f"locomo · category {c}" in charts] and len([c for c in charts if c.startswith("locomo · category")]) >= 4
    # the by-category table lists the categories in the same order as the numbers it is quoted by
    by_category = page.split("<h4>by category</h4>")[1].split("</table>")[0]
    listed = [c for c in re.findall(r"<tr><td>([a-z-]+)</td>", by_category)]
    assert listed == [c for c in order if c in listed] and len(listed) >= 4
    # each agent's own chart of it: a line (a series) per category, named by it in a legend drawn in the chart
    own = re.search(r'<svg[^>]*aria-label="retrieval · locomo: score against memory distance, a line per category".*?</svg>',
                    page, re.S)
    assert own is not None and "single-hop" in own.group(0) and "adversarial" in own.group(0)
    legend = re.findall(r'<text [^>]*text-anchor="start"[^>]*>([a-z-]+)</text>', own.group(0))
    assert legend == [c for c in order if c in legend] and len(legend) >= 4
    assert "retrieval: score against achieved gap" not in page  # no pooled chart of the agent either
    # the agent's own table: LoCoMo's F1, no GoodAI gaps
    agent = page.split('<details class="agent"')[1].split("</table>")[0]
    assert "target gap" not in agent and "achieved gap" not in agent and re.search(r">F1 \d\.\d\d</td>", agent)
    index = _text((out.path.parent / "index.html").read_text())  # the results index: F1 by name, not "0.12/1"
    assert re.search(r"retrieval F1 0\.\d\d", index) and "/1" not in index.split("retrieval")[1][:20]
    rows = list(csv.DictReader((out.path / "report.headline.csv").open(encoding="utf-8")))
    assert {r["metric"] for r in rows if r["lead"] == "True"} == {"F1"}
    assert {r["over"] for r in rows} == {"own", "common"}


def test_a_dataset_with_nothing_scored_is_a_dash_everywhere(tmp_path):
    import asyncio

    # the default run: retrieval's colours answers give several colours as current, so without a judge both are unscored
    out = asyncio.run(run_async("default", ["oracle", "retrieval"], results=tmp_path))
    retrieval = out.agent_summary("retrieval").datasets[0]
    assert retrieval.dataset == "colours"
    assert retrieval.scored == 0 and retrieval.headline is not None and retrieval.headline.values[0].value is None
    raw = json.loads((out.path / "summary.json").read_text())["agents"][1]
    assert raw["datasets"][0]["headline"]["values"][0]["value"] is None  # null in JSON
    text = _terminal(out)
    own = text.split("agent retrieval")[1]
    assert re.search(r"│ colours\s+│\s+-\s+│", own) and "0.00 ± 0.00" not in own
    assert re.search(r"benchmark score \d\.\d\d/16 \(1 dataset unscored\)", own)
    files = write_report([out.path])
    rows = {r["agent"]: r for r in csv.DictReader((out.path / "report.datasets.csv").open(encoding="utf-8"))
            if r["dataset"] == "colours"}
    assert rows["retrieval"]["score"] == "" and rows["oracle"]["score"] == "1.0"
    records = {r["agent"]: r for r in json.loads((out.path / "report.datasets.json").read_text())
               if r["dataset"] == "colours"}
    assert records["retrieval"]["score"] is None
    page = files.html.read_text()
    assert "tests in one interleaved conversation per agent" in _header(page)
    grid = page.split('<table class="grid">')[1].split("</table>")[0]
    colours = _text(grid.split("</tr>")[1])
    assert "on 0 of 2, scored by all" in colours and "0.00" not in colours and "–" in colours


def test_a_study_lists_locomos_categories_in_locomos_order(locomo_run):
    from ltm_harness._grid.results import CellData, label_rows

    out = locomo_run
    cell = CellData("c", "retrieval", None, 4000, 0, out.summary, out.results("retrieval"))
    values = [r.value for r in label_rows([cell]) if r.agent == "retrieval" and r.by == "category"]
    order = ["multi-hop", "temporal", "open-domain", "single-hop", "adversarial"]  # LoCoMo's categories 1 to 5
    assert len(values) >= 4 and values == [c for c in order if c in values]


def test_the_intervals_list_locomos_categories_in_locomos_order(locomo_run):
    from ltm_harness._report.load import load_run
    from ltm_harness._report.stats_section import report_statistics
    from ltm_harness._report.tables import entries

    stats = report_statistics(entries([load_run(locomo_run.path)]))
    values = [r.value for r in stats.intervals if r.agent == "retrieval" and r.by == "category"]
    order = ["multi-hop", "temporal", "open-domain", "single-hop", "adversarial"]  # LoCoMo's categories 1 to 5
    assert len(values) >= 4 and values == [c for c in order if c in values]
