"""Protocol marks (issue 32.2, ARCHITECTURE invariant 12): a number shown with a protocol break carries a mark beside
it, decided in one place (ltm_harness/_results/marks.py), shown the same on every surface with a legend, and a
marked agent never listed before one without."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

from rich.console import Console

from ltm_harness._cli.tables import print_run
from ltm_harness._report import write_report
from ltm_harness._report.index import write_index
from ltm_harness._results.marks import kinds_in, mark_text, marks_of
from ltm_harness._results.models import AgentSummary, QuestionProtocol, RunSummary
from ltm_harness._results.headline import DatasetHeadline
from ltm_harness._scoring.headline import Headline, Metric
from ltm_harness._store.layout import RunFolder


def _summary(run: Path) -> RunSummary:
    return RunSummary.model_validate_json((run / "summary.json").read_text())


def _agent(run: Path, name: str) -> AgentSummary:
    return next(a for a in _summary(run).agents if a.agent == name)


def test_marks_are_decided_from_results(small_run: Path):
    oracle, retrieval = _agent(small_run, "oracle"), _agent(small_run, "retrieval")
    assert marks_of(oracle, None) == []  # every test scored, played here, no judge: nothing to mark
    assert [m.kind for m in marks_of(retrieval, None)] == ["unscored"]  # tests left for a judge it did not have
    unscored = next(d for d in retrieval.datasets if d.unscored)
    assert marks_of(retrieval, None, dataset=next(d.dataset for d in retrieval.datasets if not d.unscored)) == []
    assert f"{unscored.unscored:,} of {unscored.tests:,}" in marks_of(retrieval, None, dataset=unscored.dataset)[0].detail
    in_sequence = oracle.model_copy(update={"questions": QuestionProtocol(independent=0, in_sequence=3)})
    assert [m.kind for m in marks_of(in_sequence, None, imported=True)] == ["seq", "imported"]
    assert "3 questions asked in sequence" in marks_of(in_sequence, None)[0].detail
    # a judge other than the benchmark's reference judge (its Headline.judge); the reference's own, or none: no mark
    spec = Headline(metrics=[Metric(name="F1")], judge="gpt-4o-mini")
    d = oracle.datasets[0].model_copy(update={"headline": DatasetHeadline(spec=spec, judged=True, values=[])})
    judged = oracle.model_copy(update={"datasets": [d]})
    assert [m.kind for m in marks_of(judged, "mock-judge")] == ["judge"]
    assert marks_of(judged, "openai/GPT-4o-mini") == [] and marks_of(judged, None) == []
    assert mark_text(marks_of(in_sequence, "x", imported=True)) == "[seq, imported]"
    assert kinds_in(["[seq, imported]", "", "[unscored]"]) == ["seq", "unscored", "imported"]


def _mark_sequence_and_import(run: Path, agent: str) -> None:
    """Make `agent` of the run one that was asked in sequence and imported from a file."""
    path = run / "summary.json"
    data = json.loads(path.read_text())
    for a in data["agents"]:
        if a["agent"] == agent:
            a["questions"] = {"independent": 0, "in_sequence": 4}
    path.write_text(json.dumps(data))
    imported = RunFolder(run).imported(agent)
    imported.parent.mkdir(parents=True, exist_ok=True)
    imported.write_text("{}")


def test_every_surface_shows_the_marks_with_a_legend_and_lists_marked_agents_last(small_run: Path):
    _mark_sequence_and_import(small_run, "oracle")
    # the terminal: the mark beside the number, its legend under the table, oracle's column after null's
    console = Console(file=io.StringIO(), width=200)
    print_run(_summary(small_run), console, folder=small_run)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "[seq, imported]" in text and "[unscored]" in text
    assert "[seq] asked in sequence" in text and "[imported] imported" in text
    header = next(line for line in text.splitlines() if "null" in line and "oracle" in line and "retrieval" in line)
    assert header.index("null") < header.index("oracle") and header.index("null") < header.index("retrieval")
    # the report: marks beside the agent and its numbers, the legend, the marked agents after null
    page = write_report([small_run]).html.read_text()
    summary = page.split('<section id="summary">')[1].split("</section>")[0]
    assert re.search(r'oracle</a><sup class="pmark" title="4 questions asked in sequence">seq</sup>'
                     r'<sup class="pmark" title="answers imported from a file">imported</sup>', summary)
    assert 'class="note legend-marks"' in summary and "asked in sequence: the benchmark asks" in summary
    agents = re.findall(r'<a href="#a\d">(\w+)</a>', summary.split("</table>")[0])
    assert agents == ["null", "oracle", "retrieval"]
    grid = summary.split("<h3>Score per dataset</h3>")[1]
    assert grid.count('<sup class="pmark"') >= len(_agent(small_run, "oracle").datasets)  # on each of its numbers
    # the results index: the same marks on the run's row, with the legend
    index = write_index(small_run.parent).read_text()
    assert '<sup class="pmark" title="4 questions asked in sequence">seq</sup>' in index
    assert "legend-marks" in index and index.index(">null ") < index.index(">oracle ")


def test_a_study_page_marks_an_agents_scores_over_seeds(small_run: Path):
    from ltm_harness._grid.report import build_study_page
    from ltm_harness._grid.results import ALL, CellData, score_rows
    from ltm_harness._results.outputs import read_results

    run = _summary(small_run)
    cells = []
    for seed in (0, 1):
        for agent in ("oracle", "retrieval"):
            summary = run.model_copy(update={"agents": [a for a in run.agents if a.agent == agent]})
            cells.append(CellData(f"{agent}-{seed}", agent, None, 1000, seed, summary,
                                  read_results(RunFolder(small_run).agent(agent))))
    rows = score_rows(cells)
    marks = {(r.agent, r.dataset): r.marks for r in rows}
    assert marks[("oracle", ALL)] == "" and marks[("retrieval", ALL)] == "[unscored]"
    page = build_study_page("study", rows, [], [], [], 0.95)
    scores = page.split('<section id="scores">')[1].split("</section>")[0]
    table = {row.split("</td>")[0]: row for row in scores.split("<tr><td>")[1:]}
    assert '<sup class="pmark"' in table["retrieval"] and "pmark" not in table["oracle"]
    assert "legend-marks" in scores
