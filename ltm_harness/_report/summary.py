"""The page's header and its summary: what each run played (in each benchmark's words), the agents, and each
dataset's leading number (its headline) per agent, over the tests scored for every agent compared.

Every string from a run is escaped here.
"""

from __future__ import annotations

from typing import Sequence

from ltm_harness._report.compat import Difference
from ltm_harness._report.html import (breakable as _label, esc as _e, marks_legend, num as _num, protocol_marks,
                                      score_class as _score_class)
from ltm_harness._report.load import RunData
from ltm_harness._report.svg import money
from ltm_harness._report.tables import AgentRow, Entry, Tables, ltm_caution
from ltm_harness._results.headline import played_text
from ltm_harness._tokens import plural


def _over(tests: int | None) -> str:
    """How many tests an LTM score averages, on a line of its own (the summary table stays as narrow as before)."""
    return "" if tests is None else f'<br><span class="std">over {plural(tests, "test")}</span>'


def swatch_class(e: Entry) -> str:
    return f"c{e.slot} alt" if e.variant else f"c{e.slot}"


def swatch(e: Entry) -> str:
    return f'<span class="swatch {swatch_class(e)}"></span>'


def agent_legend(entries: Sequence[Entry]) -> str:
    """The agents' colours, said before the charts that draw them."""
    return '<p class="legend">' + "".join(f'<span class="item">{swatch(e)}{_e(e.label)}</span>'
                                           for e in entries) + "</p>"


def marks(run: RunData, found: Sequence[Difference]) -> str:
    """Badges on a run that differs from the first run of a comparison (shown with --force)."""
    return "".join(f'<span class="badge mark" title="{_e(d.detail)}">{_e(d.what)} differ</span>'
                   for d in found if d.run is run)


def _played(run: RunData, entries: Sequence[Entry]) -> str:
    """What the run played, per dataset as its headline counts it ("locomo: 10 conversations, 5,882 history turns,
    1,986 questions"); the GoodAI benchmark's datasets as one interleaved conversation of tests (or isolated ones)."""
    judged = run.summary.judge is not None
    first = next((e for e in entries if e.run is run), None)
    if first is None:
        return "no agent finished"
    parts, goodai = [], 0
    for d in first.agent.summary.datasets:
        quoted = d.quoted(judged)
        if quoted.spec.goodai or quoted.played is None:
            goodai += d.tests
        else:
            parts.append(f"{d.dataset}: {played_text(quoted.played, quoted.spec)}")
    if goodai:
        how = "isolated sessions" if run.summary.isolated else "one interleaved conversation per agent"
        parts.insert(0, f"{plural(goodai, 'test')} in {how}")
    return "; ".join(parts)


def header(title: str, runs: Sequence[RunData], entries: Sequence[Entry], found: Sequence[Difference]) -> str:
    lines = []
    for run in runs:
        judge = f" · judge {_e(run.summary.judge)}" if run.summary.judge else " · no judge"
        lines.append(f'<p class="meta">run <b>{_e(run.name)}</b> {marks(run, found)}· seed {run.summary.seed} · '
                     f'{_e(_played(run, entries))} · {plural(len(run.agents), "agent")}{judge} · folder {_e(run.folder)}</p>')
    if found:
        lines.append('<div class="warn"><b>Compared although they differ</b> (--force): '
                     + "".join(f"<br>{_e(d.detail)}" for d in found) + "</div>")
    return f"<header><h1>{_e(title)}</h1>{''.join(lines)}</header>"


def _unscored_datasets(row: AgentRow) -> str:
    n = row.max_benchmark_score - row.benchmark_datasets_scored
    return f'<br><span class="std">{n} dataset{"" if n == 1 else "s"} unscored</span>' if n else ""


def summary_table(entries: Sequence[Entry], tables: Tables, found: Sequence[Difference]) -> str:
    goodai = bool(tables.headline) and all(r.goodai for r in tables.headline)  # its benchmark and LTM scores apply
    head = ('<tr><th>agent</th>' + ('<th class="num">benchmark score</th><th class="num">LTM score</th>'
            '<th class="num">LTM score on memory distance</th>' if goodai else "")
            + '<th class="num">tests</th><th class="num">cost</th><th class="num">wall time</th>'
            '<th class="num">agent tokens</th><th class="num">turns</th><th class="num">conversation tokens</th></tr>')
    rows = []
    for e, row in zip(entries, tables.agents):
        counts = ", ".join(f"{n} {what}" for n, what in ((row.unscored, "unscored"), (row.errored, "errored")) if n)
        flags = f'<br><span class="std">{counts}</span>' if counts else ""  # a line of its own: fits a narrow screen
        rows.append(
            f'<tr><td class="who">{swatch(e)}<a href="#{e.key}">{_label(e.label)}</a>{protocol_marks(e.marks)}'
            f'{marks(e.run, found)}</td>'
            + (f'<td class="num {_score_class(row.benchmark_share)}"><b>{row.benchmark_score:.2f}</b> / '
               f'{row.benchmark_datasets_scored}{_unscored_datasets(row)}</td>'
               f'<td class="num">{_num(row.ltm_score)} tokens{_over(row.ltm_score_tests)}</td>'
               f'<td class="num">{_num(row.ltm_score_memory_distance)} tokens{_over(row.ltm_score_memory_distance_tests)}</td>'
               if goodai else "")
            + f'<td class="num">{row.tests}{flags}</td>'
            f'<td class="num">{money(row.total_cost_usd)}</td><td class="num">{row.wall_seconds:,.1f} s</td>'
            f'<td class="num">{_num(row.agent_tokens)}</td><td class="num">{_num(row.turns)}</td>'
            f'<td class="num">{_num(row.conversation_tokens)}</td></tr>')
    grid = _dataset_grid(entries, tables)
    caution = ltm_caution([(row.label, row.benchmark_share, row.ltm_score) for row in tables.agents]) if goodai else None
    warn = f'<p class="warn">{_e(caution)}</p>' if caution else ""
    quoted = ('<p class="note">Per dataset: the number it is quoted by (its headline: F1, accuracy, score); with several '
              "agents, over the tests scored for every agent, the row saying over how many when fewer than an agent's "
              'own; "–": nothing scored. Agent tokens: prompt and completion tokens the agent reported. Cost: every '
              "priced LLM call of the agent's run.</p>")
    note = quoted if not goodai else ('<p class="note">Benchmark score: the sum over datasets of the mean test score (each test scores 0 to 1), '
            "so its maximum is the number of datasets. LTM score: the mean achieved information gap of the perfectly "
            "answered tests (the reference benchmark's definition; how many tests it averages beside it), so an "
            "agent perfect only on long-gap tests shows a higher one than an agent perfect on all: read it beside "
            "the benchmark score. LTM score on memory distance: the same mean on each test's "
            "memory distance (from the earliest statement its answer depends on, which may be long before the gap's "
            "statement). Agent tokens: prompt and completion tokens the agent "
            "reported. Cost: every priced LLM call of the agent's run. Per dataset: mean score over its tests (with several "
            "agents, over the tests scored for every agent).</p>")
    legend = marks_legend(m.kind for e in entries for m in e.marks)
    return (f'<section id="summary"><h2>Agents</h2><div class="scroll"><table>{head}{"".join(rows)}</table></div>'
            f'{legend}{warn}<h3>Score per dataset</h3>{grid}{note}</section>')


def _dataset_grid(entries: Sequence[Entry], tables: Tables) -> str:
    """Each dataset's leading number (its headline: F1, accuracy, score; a row) per agent (a column), as in the
    terminal's table, over the tests scored for every agent when several are compared (saying how many when that is
    fewer than an agent's own): the datasets, however many, run down the page, and agent names wrap, so the grid fits
    a laptop's screen without scrolling sideways."""
    datasets = sorted({d.dataset for e in entries for d in e.agent.summary.datasets})
    head = ('<tr><th>dataset</th>' + "".join(f'<th class="num who">{swatch(e)}<a href="#{e.key}">{_label(e.label)}</a></th>'
                                              for e in entries) + "</tr>")
    lead = {(r.label, r.dataset, r.over): r for r in tables.headline if r.lead}
    rows = []
    for name in datasets:
        over = "common" if any(k[1] == name and k[2] == "common" for k in lead) else "own"
        cells, metric, note = [], "score", ""
        for e in entries:
            r, own = lead.get((e.label, name, over)), lead.get((e.label, name, "own"))
            if r is None or own is None:
                cells.append('<td class="num">–</td>')
                continue
            metric = r.metric
            tip = f"{own.scored} of {plural(own.tests, 'test')} {own.word}"
            if over == "common" and r.tests < own.tests:
                note = f"on {r.tests:,} of {own.tests:,}, {r.word} by all"
            if r.value is None:
                cells.append(f'<td class="num" title="{_e(tip)}">–</td>')
                continue
            subset = "" if r.scored >= r.tests else f' <span class="std">({r.scored:,} of {r.tests:,} {r.word})</span>'
            cells.append(f'<td class="num {_score_class(r.value)}" title="{_e(tip)}">{r.value:.2f}'
                         f'{subset}{protocol_marks(e.marks_on(name), under=True)}</td>')
        title = name if metric == "score" else f"{name} · {metric}"
        under = f'<br><span class="std">{_e(note)}</span>' if note else ""
        rows.append(f'<tr><td>{_label(title)}{under}</td>{"".join(cells)}</tr>')
    return f'<div class="scroll"><table class="grid">{head}{"".join(rows)}</table></div>'
