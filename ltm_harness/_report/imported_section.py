"""The report's section on imported answers (`import-answers`): for each imported agent, how its file met the
questions (matched, unmatched, duplicated, unanswered), and the publisher's own per-question scores beside ours on
the same questions ("their F1 vs the reference rules", their judge's verdicts vs our scores), so a reader sees where
a published number departs from the rules. Their verdicts are shown as theirs, never as ours.

Every string from a run or a file is escaped here.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Sequence, TypeGuard

from ltm_harness._interop.answers.formats import FORMAT_NAMES
from ltm_harness._interop.answers.matching import MatchReport
from ltm_harness._interop.answers.run import read_match_report
from ltm_harness._report.html import breakable, esc as _e
from ltm_harness._report.tables import Entry
from ltm_harness._results.models import TestResult
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


def _valid(score: float | None) -> TypeGuard[float]:
    """A publisher's score that can be averaged: a number in [0, 1] (the import keeps no other; a match report edited
    or written by an older version may hold one)."""
    return score is not None and math.isfinite(score) and 0.0 <= score <= 1.0


def invalid_kept(report: MatchReport) -> int:
    """The publisher's scores in the match report that are not in [0, 1]: never averaged."""
    return sum(1 for t in report.theirs for v in (t.f1, t.bleu, t.judge) if v is not None and not _valid(v))


def comparisons(report: MatchReport, results: Sequence[TestResult]) -> list[Comparison]:
    by_id = {r.example_id: r for r in results if r.status != "unscored"}
    out: list[Comparison] = []
    f1 = [(t.f1, _ours(by_id[t.result_id])) for t in report.theirs if _valid(t.f1) and t.result_id in by_id]
    if f1:
        out.append(Comparison("their F1 vs the reference rules (our score)", len(f1), statistics.fmean(a for a, _ in f1),
                              statistics.fmean(b for _, b in f1), sum(abs(a - b) > DIFFERS for a, b in f1)))
    judged = [t for t in report.theirs if _valid(t.judge) and t.result_id in by_id]
    if judged:
        models = sorted({t.judge_model for t in judged if t.judge_model})
        name = f"their judge ({', '.join(models)})" if models else "their judge"
        if report.file_format.startswith("longmemeval"):  # ours is the rule's or our judge's verdict on the question
            pairs = [(t.judge or 0.0, _ours(by_id[t.result_id])) for t in judged]
            out.append(Comparison(f"{name} vs our scores", len(pairs), statistics.fmean(a for a, _ in pairs),
                                  statistics.fmean(b for _, b in pairs), sum(abs(a - b) > DIFFERS for a, b in pairs)))
        else:
            ours = [(t.judge or 0.0, v) for t in judged if (v := _judged(by_id[t.result_id])) is not None]
            if ours:
                out.append(Comparison(f"{name} vs our judge (J)", len(ours), statistics.fmean(a for a, _ in ours),
                                      statistics.fmean(b for _, b in ours), sum(abs(a - b) > DIFFERS for a, b in ours)))
            else:
                share = statistics.fmean(t.judge or 0.0 for t in judged)
                out.append(Comparison(f"{name} (ours: not judged; run or rescore with --judge)", len(judged), share,
                                      float("nan"), 0))
    return out


def _block(e: Entry, report: MatchReport) -> str:
    counts = (f"{plural(report.answers, 'answer')} in {_e(report.file)} "
              f"({_e(FORMAT_NAMES.get(report.file_format, report.file_format))}) for {plural(report.questions, 'question')} "
              f"of the run: <b>{report.matched}</b> matched, {report.unmatched} unmatched, {report.duplicated} duplicated; "
              f"{plural(report.unanswered, 'question')} without an answer (unscored).")
    parts = [f"<h3>{breakable(e.label)}</h3><p>{counts}</p>"]
    invalid = report.invalid_scores + invalid_kept(report)
    if invalid:
        parts.append(f'<p class="note">{plural(invalid, "score")} of the publisher\'s are not a number in [0, 1]: '
                     "shown as invalid, never averaged.</p>")
    listed = [("unmatched", report.unmatched_list), ("duplicated", report.duplicated_list),
              ("invalid scores of the publisher", report.invalid_list)]
    for what, lines in listed:
        if lines:
            items = "".join(f"<li>{_e(line)}</li>" for line in lines)
            parts.append(f"<details><summary>{what} ({len(lines)} listed)</summary><ul>{items}</ul></details>")
    rows = comparisons(report, e.agent.results)
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
    blocks = []
    for e in entries:
        report = read_match_report(RunFolder(e.run.folder), e.agent.spec)
        if report is not None:
            blocks.append(_block(e, report))
    if not blocks:
        return ""
    return ('<section id="imported"><h2>Imported answers</h2><p class="note">Answers published by another tool, '
            "played here through the same engine and scored by the same rules. Their own per-question scores, kept "
            f"from the file, are compared with ours on the same questions (a question disagrees when the two differ by "
            f"more than {DIFFERS}).</p>" + "".join(blocks) + "</section>")
