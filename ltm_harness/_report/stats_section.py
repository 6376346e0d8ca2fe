"""The report's statistics: each agent's means with their 95% intervals (by question and by conversation), and for
each pair of agents the paired difference on the questions scored for both, its intervals, the paired test and the
wins, losses and ties. The numbers come from ltm_harness._stats (computed from the results); this module only lays
them out, for the page, the terminal (`compare`) and the CSV/JSON tables beside the page.

Every string from a run (agent labels, dataset and label names) is escaped here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ltm_harness._report.labels import value_orders
from ltm_harness._report.html import breakable, esc as _e
from ltm_harness._report.tables import Entry, write_table
from ltm_harness._stats.compute import JUDGE
from ltm_harness._stats import METHOD, IntervalRow, OutcomeRow, PairRow, Scored, Statistics, compute_statistics

NAV = '<a href="#statistics">statistics</a>'
MAX_TERMINAL_PAIRS = 12  # pair lines `compare` prints; the rest are in the page and the tables
FOLDED = 40  # a table of more rows is folded (click to open)
MAX_OUTCOMES = 200  # questions listed per pair and dataset in the page (all are in .outcomes.csv)


def report_statistics(entries: Sequence[Entry]) -> Statistics:
    """The statistics of a report's agents, in the page's order."""
    return compute_statistics([Scored(e.label, e.run.name, e.agent.spec, e.agent.results,
                                      value_orders(e.agent.summary, e.run.summary.judge is not None)) for e in entries])


def _ci(lo: float | None, hi: float | None, digits: int = 2) -> str:
    return "–" if lo is None or hi is None else f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def _mean(value: float | None, signed: bool = False) -> str:
    return "–" if value is None else (f"{value:+.3f}" if signed else f"{value:.3f}")


def _p(value: float | None) -> str:
    """`p = 0.0123`, `p < 0.0001`, or `p = –` (no question to test)."""
    if value is None:
        return "p = –"
    return "p < 0.0001" if value < 1e-4 else f"p = {value:.4f}"


def _what(by: str, value: str) -> str:
    if by == JUDGE:
        return "judge verdicts (share correct, judged questions)"
    return "all questions" if by == "" else f"{by}: {value}"


def _interval_table(rows: Sequence[IntervalRow]) -> str:
    head = ('<tr><th class="who">agent</th><th>questions</th><th class="num">scored</th><th class="num">conver&shy;sations</th>'
            '<th class="num">mean</th><th class="num">95% by question</th><th class="num">95% by conversation</th></tr>')
    body = "".join(
        f'<tr><td class="who">{breakable(r.label)}</td><td>{_e(r.dataset)} · {_e(_what(r.by, r.value))}</td>'
        f'<td class="num">{r.questions}</td><td class="num">{r.conversations}</td><td class="num">{_mean(r.mean)}</td>'
        f'<td class="num">{_ci(r.question_low, r.question_high)}</td>'
        f'<td class="num">{_ci(r.conversation_low, r.conversation_high)}</td></tr>'
        for r in rows)
    return f'<div class="scroll"><table class="grid stats"><thead>{head}</thead><tbody>{body}</tbody></table></div>'


def _pair_table(rows: Sequence[PairRow]) -> str:
    head = ('<tr><th class="who">A vs B</th><th>questions</th><th class="num">scored for both</th>'
            '<th class="num">A</th><th class="num">B</th><th class="num">A − B</th>'
            '<th class="num">95% by question</th><th class="num">95% by conversation</th><th>test, p</th>'
            '<th class="num">A wins / B wins / ties</th></tr>')
    body = "".join(
        f'<tr><td class="who">{breakable(r.a)} <i>vs</i> {breakable(r.b)}</td><td>{_e(r.dataset)} · {_e(_what(r.by, r.value))}</td>'
        f'<td class="num">{r.questions}</td><td class="num">{_mean(r.mean_a)}</td><td class="num">{_mean(r.mean_b)}</td>'
        f'<td class="num"><b>{_mean(r.difference, True)}</b></td><td class="num">{_ci(r.question_low, r.question_high, 3)}</td>'
        f'<td class="num">{_ci(r.conversation_low, r.conversation_high, 3)}</td>'
        f'<td>{_e(r.test or "–")}, {_e(_p(r.p_value)).replace(" ", "&nbsp;")}</td><td class="num">{r.wins} / {r.losses} / {r.ties}</td></tr>'
        for r in rows)
    return f'<div class="scroll"><table class="grid stats"><thead>{head}</thead><tbody>{body}</tbody></table></div>'


def _outcome_tables(rows: Sequence[OutcomeRow]) -> str:
    """Per pair and dataset, folded: the questions one agent scored higher than the other, question by question."""
    groups: dict[tuple[str, str, str], list[OutcomeRow]] = {}
    for r in rows:
        groups.setdefault((r.a, r.b, r.dataset), []).append(r)
    parts = []
    for (a, b, dataset), rs in groups.items():
        differ = [r for r in rs if r.outcome != "tie"]
        body = "".join(f'<tr><td>{_e(r.example_id)}</td><td class="num">{r.score_a:.3f}</td>'
                       f'<td class="num">{r.score_b:.3f}</td><td>{"A" if r.outcome == "win" else "B"}</td></tr>'
                       for r in differ[:MAX_OUTCOMES])
        more = (f'<p class="note">{len(differ) - MAX_OUTCOMES} more in the .outcomes tables.</p>'
                if len(differ) > MAX_OUTCOMES else "")
        table = (f'<div class="scroll"><table class="grid"><thead><tr><th>question</th><th class="num">A</th>'
                 f'<th class="num">B</th><th>higher</th></tr></thead><tbody>{body}</tbody></table></div>{more}'
                 if differ else '<p class="note">No question differs.</p>')
        parts.append(f"<details><summary>{breakable(a)} <i>vs</i> {breakable(b)} on {_e(dataset)}: "
                     f"{len(differ)} of {len(rs)} questions differ</summary>{table}</details>")
    return "".join(parts)


def _fold(what: str, rows: int, table: str) -> str:
    return table if rows <= FOLDED else f"<details><summary>{what}: {rows} rows</summary>{table}</details>"


def statistics_section(stats: Statistics) -> str:
    """The page's "Statistics" section ("" when no agent has results)."""
    if not stats:
        return ""
    parts = ['<section id="statistics"><h2>Statistics</h2>', f'<p class="note">{_e(METHOD)} '
             "A mean over no scored question is shown as –. See docs/statistics.md.</p>",
             "<h3>Means with their intervals</h3>",
             _fold("means with their intervals", len(stats.intervals), _interval_table(stats.intervals))]
    if stats.pairs:
        parts += ["<h3>Agents compared in pairs, on the questions scored for both</h3>",
                  '<p class="note">A − B is the mean of the per-question differences; a win is a question A scored '
                  "higher than B. Every question's outcome is in the .outcomes.csv/.json tables beside this page.</p>",
                  _fold("agents compared in pairs", len(stats.pairs), _pair_table(stats.pairs)),
                  "<h3>Question by question</h3>", _outcome_tables(stats.outcomes)]
    parts.append("</section>")
    return "".join(parts)


def write_statistics_tables(stats: Statistics, html_path: Path) -> list[Path]:
    """`<stem>.intervals.*`, `.pairs.*` and `.outcomes.*` (CSV and JSON) beside the page, those that have rows."""
    written: list[Path] = []
    for name, rows, model in (("intervals", stats.intervals, IntervalRow), ("pairs", stats.pairs, PairRow),
                              ("outcomes", stats.outcomes, OutcomeRow)):
        if rows:
            csv_path = html_path.with_name(f"{html_path.stem}.{name}.csv")
            json_path = html_path.with_name(f"{html_path.stem}.{name}.json")
            write_table(rows, model, csv_path, json_path)
            written += [csv_path, json_path]
    return written


def pair_lines(stats: Statistics) -> list[str]:
    """The pairs' overall rows as terminal lines (one per pair and dataset), for `compare`."""
    lines = []
    for r in stats.pairs:
        if r.by != "":
            continue
        conv = f", by conversation {_ci(r.conversation_low, r.conversation_high, 3)}" if r.conversation_low is not None else ""
        line = (f"{r.a} vs {r.b} on {r.dataset} ({r.questions} questions scored for both): A-B "
                f"{_mean(r.difference, True)}, 95% by question {_ci(r.question_low, r.question_high, 3)}{conv}; "
                f"{r.test or 'no test'} {_p(r.p_value)}; A wins {r.wins}, B wins {r.losses}, ties {r.ties}")
        lines.append(line.replace("–", "-"))  # plain ASCII on the terminal
    return lines
