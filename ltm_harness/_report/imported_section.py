"""The report's section on imported answers (`import-answers`): for each imported agent, how its file met the
questions (matched, unmatched, duplicated, unanswered), and the publisher's own per-question scores beside ours on
the same questions ("their F1 vs the reference rules", their judge's verdicts vs our scores), so a reader sees where
a published number departs from the rules. Their verdicts are shown as theirs, never as ours.

Every string from a run or a file is escaped here.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Sequence

from ltm_harness._interop.answers.formats import FORMAT_NAMES
from ltm_harness._interop.answers.matching import MatchReport
from ltm_harness._interop.answers.run import read_match_report
from ltm_harness._report.html import breakable, esc as _e
from ltm_harness._report.labels import in_order, value_orders
from ltm_harness._report.tables import Entry
from ltm_harness._results.models import AgentSummary, TestResult
from ltm_harness._scoring.not_answered import REASON as NOT_ANSWERED_REASON
from ltm_harness._stats.verdict_pairs import verdict_pair
from ltm_harness._store.layout import RunFolder
from ltm_harness._tokens import plural

NAV = '<a href="#imported">imported answers</a>'
DIFFERS = 0.01  # a per-question score of theirs and ours further apart than this disagree


@dataclass
class Comparison:
    """Their number and ours on the questions both scored."""

    what: str
    questions: int
    theirs: float
    ours: float
    disagree: int


def _ours(r: TestResult) -> float:
    return r.normalized if r.status == "ok" else 0.0


def _judged(r: TestResult) -> float | None:
    """Our judge's verdict on a question, when it was judged."""
    return r.verdicts[0].score if r.verdicts else None


def _label_of(results: Sequence[TestResult]) -> str | None:
    """The label the benchmark breaks its questions down by (LoCoMo's category, LongMemEval's type), if any."""
    return next((k for r in results for k in (r.labels or {}) if k != "abstention"), None)


def _compare(what: str, pairs: Sequence[tuple[float, float]]) -> Comparison:
    return Comparison(what, len(pairs), statistics.fmean(a for a, _ in pairs), statistics.fmean(b for _, b in pairs),
                      sum(abs(a - b) > DIFFERS for a, b in pairs))


def comparisons(report: MatchReport, results: Sequence[TestResult], order: Sequence[str] = ()) -> list[Comparison]:
    """Their numbers beside ours on the questions both scored: overall, then per value of the benchmark's label (its
    categories, in `order` first: the benchmark's own), each such row named "... · <value>"."""
    by_id = {r.example_id: r for r in results if r.status != "unscored"}
    label = _label_of(results)
    out: list[Comparison] = []

    def add(what: str, pairs: Sequence[tuple[str, float, float]]) -> None:
        out.append(_compare(what, [(a, b) for _, a, b in pairs]))
        if label is None:
            return
        values = {rid: (by_id[rid].labels or {}).get(label) for rid, _, _ in pairs}
        for value in in_order((v for v in values.values() if v is not None), order):
            out.append(_compare(f"  · {value}", [(a, b) for rid, a, b in pairs if values[rid] == value]))

    f1 = [(t.result_id, t.f1, _ours(by_id[t.result_id])) for t in report.theirs if t.f1 is not None and t.result_id in by_id]
    if f1:
        add("their F1 vs the reference rules (our score)", f1)
    judged = [t for t in report.theirs if t.judge is not None and t.result_id in by_id]
    if judged:
        models = sorted({t.judge_model for t in judged if t.judge_model})
        name = f"their judge ({', '.join(models)})" if models else "their judge"
        if report.file_format.startswith("longmemeval"):  # ours is the rule's or our judge's verdict on the question
            add(f"{name} vs our scores", [(t.result_id, t.judge or 0.0, _ours(by_id[t.result_id])) for t in judged])
        else:
            ours = [(t.result_id, t.judge or 0.0, v) for t in judged if (v := _judged(by_id[t.result_id])) is not None]
            if ours:
                add(f"{name} vs our judge (J)", ours)
            else:
                share = statistics.fmean(t.judge or 0.0 for t in judged)
                out.append(Comparison(f"{name} (ours: not judged; run or rescore with --judge)", len(judged), share,
                                      float("nan"), 0))
    return out


def _unanswered_by_label(results: Sequence[TestResult], order: Sequence[str]) -> str:
    """The questions the file has no answer for, per value of the benchmark's label ("adversarial 446"), or ""."""
    missing = [r for r in results if r.status == "unscored" and NOT_ANSWERED_REASON in r.reasons]
    label = _label_of(results)
    if not missing or label is None:
        return ""
    counts: dict[str, int] = {}
    for r in missing:
        value = (r.labels or {}).get(label, "?")
        counts[value] = counts.get(value, 0) + 1
    return (f" Not answered in the file, by {_e(label)}: "
            + ", ".join(f"{_e(v)} {counts[v]:,}" for v in in_order(counts, order)) + ".")


def benchmark_order(summary: AgentSummary, judged: bool) -> list[str]:
    """The benchmark's own order of its label values (its headline's: LoCoMo's categories 1 to 5), for the agent's
    datasets."""
    return [v for values in value_orders(summary, judged).values() for v in values]


def _order(e: Entry) -> list[str]:
    return benchmark_order(e.agent.summary, e.run.summary.judge is not None)


def _block(e: Entry, report: MatchReport) -> str:
    counts = (f"{plural(report.answers, 'answer')} in {_e(report.file)} "
              f"({_e(FORMAT_NAMES.get(report.file_format, report.file_format))}) for {plural(report.questions, 'question')} "
              f"of the run: <b>{report.matched}</b> matched, {report.unmatched} unmatched, {report.duplicated} duplicated; "
              f"{plural(report.unanswered, 'question')} without an answer (unscored)."
              f"{_unanswered_by_label(e.agent.results, _order(e))}")
    parts = [f"<h3>{breakable(e.label)}</h3><p>{counts}</p>"]
    listed = [("unmatched", report.unmatched_list), ("duplicated", report.duplicated_list)]
    for what, lines in listed:
        if lines:
            items = "".join(f"<li>{_e(line)}</li>" for line in lines)
            parts.append(f"<details><summary>{what} ({len(lines)} listed)</summary><ul>{items}</ul></details>")
    rows = comparisons(report, e.agent.results, _order(e))
    if rows:
        body = "".join(
            f'<tr><td>{_e(c.what)}</td><td class="num">{c.questions}</td><td class="num">{c.theirs:.3f}</td>'
            f'<td class="num">{"–" if c.ours != c.ours else f"{c.ours:.3f}"}</td>'
            f'<td class="num">{"–" if c.ours != c.ours else c.disagree}</td></tr>' for c in rows)
        parts.append('<div class="scroll"><table class="grid"><thead><tr><th>the publisher\'s scores (imported, not '
                     'ours)</th><th class="num">questions</th><th class="num">theirs</th><th class="num">ours</th>'
                     f'<th class="num">disagree</th></tr></thead><tbody>{body}</tbody></table></div>')
    return "".join(parts)


def imported_section(entries: Sequence[Entry]) -> str:
    """The page's "Imported answers" section ("" when no agent of the page was imported)."""
    blocks, reports = [], []
    for e in entries:
        report = read_match_report(RunFolder(e.run.folder), e.agent.spec)
        if report is not None:
            blocks.append(_block(e, report))
            reports.append((e, report))
    if not blocks:
        return ""
    blocks.append(_publisher_pairs(reports))
    return ('<section id="imported"><h2>Imported answers</h2><p class="note">Answers published by another tool, '
            "played here through the same engine and scored by the same rules. Their own per-question scores, kept "
            f"from the file, are compared with ours on the same questions (a question disagrees when the two differ by "
            f"more than {DIFFERS}).</p>" + "".join(blocks) + "</section>")


def _their_verdicts(report: MatchReport) -> dict[str, bool]:
    """The publisher's own judge's verdicts (result id -> judged right), as kept from the file."""
    return {t.result_id: t.judge >= 1.0 for t in report.theirs if t.judge is not None}


def _publisher_pairs(reports: Sequence[tuple[Entry, MatchReport]]) -> str:
    """Two imported publishers compared on their own judges' verdicts (their J), on the questions both judged: each
    one's share judged right, the questions only one got right, the exact McNemar test ("" with fewer than two)."""
    rows = []
    for i, (ea, ra) in enumerate(reports):
        for eb, rb in reports[i + 1:]:
            pair = verdict_pair(_their_verdicts(ra), _their_verdicts(rb))
            if pair is None:
                continue
            rows.append(f'<tr><td>{breakable(ea.label)}</td><td>{breakable(eb.label)}</td>'
                        f'<td class="num">{pair.questions:,}</td><td class="num">{pair.right_a:.3f}</td>'
                        f'<td class="num">{pair.right_b:.3f}</td><td class="num">{pair.only_a:,}</td>'
                        f'<td class="num">{pair.only_b:,}</td><td class="num">{pair.p:.3g}</td></tr>')
    if not rows:
        return ""
    return ('<h3>Publishers compared on their own judges\' verdicts</h3><p class="note">Their J, as each file gives it '
            "(their judge, their prompt; not ours), on the questions both judged; only A / only B: questions one "
            "judged right and the other wrong; p: the exact McNemar test on those.</p>"
            '<div class="scroll"><table class="grid"><thead><tr><th>A (theirs)</th><th>B (theirs)</th>'
            '<th class="num">questions</th><th class="num">A\'s J</th><th class="num">B\'s J</th>'
            '<th class="num">only A</th><th class="num">only B</th><th class="num">p</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')
