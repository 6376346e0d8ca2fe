"""The report's section for benchmarks whose results carry labels (LoCoMo's categories, LongMemEval's question types
and abstention): per dataset, a table per label with the agents side by side, the benchmark's own metrics by name,
the known errors counted in its data file, what is left unscored and why, and the score against memory distance of
each label value (a small panel per value, an agent per series, as the page's other score panels).

Every string from a run (dataset, label and metric names, agent labels) is escaped here.
"""

from __future__ import annotations

from typing import Sequence

from ltm_harness._report.colours import slot_colour
from ltm_harness._report.html import breakable, esc as _e, num as _num, protocol_marks, score_class as _score_class
from ltm_harness._report.curves import GAP, MAX_POINTS, MEMORY_DISTANCE, Quantity, has_values, label_points, xy
from ltm_harness._report.labels import (by_label, count_text, in_order, label_order, metric_text, split_metrics,
                                        unscored_note)
from ltm_harness._report.svg_score import Series, score_panel, x_range
from ltm_harness._report.summary import agent_legend
from ltm_harness._report.tables import Entry, entry_quoted, headline_rows
from ltm_harness._results.models import DatasetSummary, LabelSummary
from ltm_harness._tokens import plural


def _who(e: Entry) -> str:
    return f'<th class="num who"><span class="swatch c{e.slot}"></span><a href="#{e.key}">{breakable(e.label)}</a></th>'


def _span(values: Sequence[float | None]) -> str:
    """One number when every agent has the same (as they have on the same tests), else their range ("–": none)."""
    known = [v for v in values if v is not None]
    if not known:
        return "–"
    lo, hi = _num(min(known)), _num(max(known))
    return lo if lo == hi else f"{lo}–{hi}"


def _labelled_datasets(entries: Sequence[Entry]) -> list[str]:
    """The datasets that have a breakdown or metrics of their own for some agent, sorted by name."""
    return sorted({d.dataset for e in entries for d in e.agent.summary.datasets if d.breakdown or d.metrics})


def _dataset(entries: Sequence[Entry], name: str) -> list[DatasetSummary | None]:
    return [next((d for d in e.agent.summary.datasets if d.dataset == name), None) for e in entries]


def _label_table(entries: Sequence[Entry], summaries: Sequence[DatasetSummary | None], by: str) -> str:
    """A row per value of label `by` (tests, mean memory distance, each agent's mean score), then the whole dataset."""
    per_entry = [{b.value: b for b in (d.breakdown or []) if b.label == by} if d else {} for d in summaries]
    spec = next((d.quoted(e.run.summary.judge is not None).spec for e, d in zip(entries, summaries) if d), None)
    values = in_order((v for found in per_entry for v in found), label_order(spec, by))
    head = (f'<tr><th>{_e(by)}</th><th class="num">tests</th><th class="num">memory distance</th>'
            + "".join(_who(e) for e in entries) + "</tr>")
    rows = []
    for value in values:
        found = [by_value.get(value) for by_value in per_entry]
        present = [b for b in found if b is not None]
        cells = "".join(_score_cell(b) for b in found)
        rows.append(f'<tr><td>{_e(value)}</td><td class="num">{_span([b.tests for b in present])}</td>'
                    f'<td class="num">{_span([b.memory_distance for b in present])}</td>{cells}</tr>')
    present_d = [d for d in summaries if d is not None]
    rows.append(_whole_row(entries, summaries, present_d))
    return f'<div class="scroll"><table class="grid breakdown">{head}{"".join(rows)}</table></div>'


def _whole_row(entries: Sequence[Entry], summaries: Sequence[DatasetSummary | None],
               present: Sequence[DatasetSummary]) -> str:
    """The dataset as a whole: the number it is quoted by (its headline's lead, as in "Score per dataset"), with several
    agents over the questions scored for every one of them, the row saying so when that is fewer than an agent's."""
    name = present[0].dataset if present else ""
    rows = [r for r in headline_rows([entry_quoted(e) for e in entries]) if r.dataset == name and r.lead]
    over = "common" if any(r.over == "common" for r in rows) else "own"
    lead = {r.label: r for r in rows if r.over == over}
    own = {r.label: r for r in rows if r.over == "own"}
    cells, note, metric = [], "", "score"
    for e, d in zip(entries, summaries):
        r = lead.get(e.label)
        if d is None or r is None or r.value is None:
            cells.append('<td class="num">–</td>')
            continue
        metric = r.metric
        mine = own.get(e.label)
        if over == "common" and mine is not None and r.tests < mine.tests:
            note = f"on {r.tests:,} of {mine.tests:,} questions, {r.word} by all"
        cells.append(f'<td class="num {_score_class(r.value)}"><b>{r.value:.2f}</b>'
                     f'{protocol_marks(e.marks_on(name), under=True)}</td>')
    under = f' <span class="std">({_e(note)})</span>' if note else ""
    return (f'<tr><td><b>all</b> · {_e(metric)}{under}</td><td class="num">{_span([d.tests for d in present])}</td>'
            f'<td class="num">{_span([d.memory_distance for d in present])}</td>{"".join(cells)}</tr>')


def _score_cell(b: LabelSummary | None) -> str:
    if b is None:
        return '<td class="num">–</td>'
    tip = (f"{plural(b.tests, 'test')}: {b.scored} scored, {b.unscored} unscored, {b.errored} errored; "
           f"mean memory distance {_num(b.memory_distance)} tokens")
    if not b.scored:
        return f'<td class="num" title="{_e(tip)}">unscored</td>'
    flags = f' <span class="std">({b.unscored} unscored)</span>' if b.unscored else ""
    return f'<td class="num {_score_class(b.score)}" title="{_e(tip)}">{b.score:.2f}{flags}</td>'


def _metrics_table(entries: Sequence[Entry], metrics: Sequence[dict[str, float]]) -> str:
    names = list(dict.fromkeys(name for m in metrics for name in m))
    head = "<tr><th>metric</th>" + "".join(_who(e) for e in entries) + "</tr>"
    rows = "".join(f"<tr><td>{_e(name)}</td>" + "".join(f'<td class="num">{_e(metric_text(m[name]))}</td>' if name in m
                                                       else '<td class="num">–</td>' for m in metrics) + "</tr>"
                   for name in names)
    return f'<div class="scroll"><table class="grid metrics">{head}{rows}</table></div>'


def _headline_table(entries: Sequence[Entry], name: str) -> str:
    """The numbers the dataset is quoted by (its headline), an agent per column: over the questions scored for every
    agent when several are compared (how many in each row's name when fewer than an agent's own), with each agent's
    own count on hover."""
    rows = [r for r in headline_rows([entry_quoted(e) for e in entries]) if r.dataset == name]
    over = "common" if any(r.over == "common" for r in rows) else "own"
    own = {(r.label, r.metric): r for r in rows if r.over == "own"}
    cells = {(r.label, r.metric): r for r in rows if r.over == over}
    body = []
    for i, metric in enumerate(dict.fromkeys(r.metric for r in rows if r.over == over)):
        found = [(cells.get((e.label, metric)), own.get((e.label, metric))) for e in entries]
        most = max((o.tests for _, o in found if o is not None), default=0)
        common = max((r.tests for r, _ in found if r is not None), default=0)
        note = (f' <span class="std">(on {common:,} of {most:,}, {rows[0].word} by all)</span>'
                if over == "common" and common < most else "")
        tds = []
        for e, (r, o) in zip(entries, found):
            tip = "" if o is None else f' title="{_e(f"{o.scored} of {o.tests} {o.word} for this agent")}"'
            if r is None or r.value is None:
                tds.append(f'<td class="num"{tip}>–</td>')
            else:
                subset = "" if r.scored >= r.tests else f' <span class="std">({r.scored:,} of {r.tests:,} {r.word})</span>'
                marked = protocol_marks(e.marks_on(name), under=True) if i == 0 else ""  # on the leading number
                tds.append(f'<td class="num {_score_class(r.value)}"{tip}>{r.value:.2f}{subset}{marked}</td>')
        body.append(f"<tr><td>{_e(metric)}{note}</td>{''.join(tds)}</tr>")
    head = "<tr><th>metric</th>" + "".join(_who(e) for e in entries) + "</tr>"
    return ("<h4>the numbers it is quoted by</h4>"
            f'<div class="scroll"><table class="grid headline">{head}{"".join(body)}</table></div>')


def _data_table(data: Sequence[dict[str, float]]) -> str:
    """The data file's counts: the same for every agent on the same tests (else each distinct count, joined by " / ")."""
    names = list(dict.fromkeys(name for m in data for name in m))
    rows = "".join(f'<tr><td>{_e(name)}</td><td class="num">'
                   f'{_e(" / ".join(dict.fromkeys(count_text(m[name]) for m in data if name in m)))}</td></tr>'
                   for name in names)
    return (f'<div class="scroll"><table class="metrics data-errors"><tr><th>known error</th><th class="num">count</th>'
            f"</tr>{rows}</table></div>")


def _panels(entries: Sequence[Entry], name: str, by: str, values: list[str]) -> str:
    """Score against memory distance (else the achieved gap, when no memory distance was measured) of each value of
    label `by`: a small panel per value, the agents as series."""
    points = {value: [label_points(e.agent, name, by, value) for e in entries] for value in values}
    every = [p for per_value in points.values() for p in per_value]
    quantity: Quantity = MEMORY_DISTANCE if has_values(every, MEMORY_DISTANCE) else GAP
    panels, bare = [], []
    made = {value: [Series(e.label, slot_colour(e.slot), xy(p, quantity, name), e.variant)
                    for e, p in zip(entries, points[value])] for value in values}
    bounds = x_range([s for series in made.values() for s in series])  # one x range for every panel: comparable
    for value in values:
        series = made[value]
        if not any(s.points for s in series):
            bare.append(value)
            continue
        panels.append(score_panel(f"{name} · {by} {value}", series,
                                  quantity.axis.replace(" (tokens, log scale)", " (tokens)"), width=300, height=210,
                                  draw_points=sum(len(s.points) for s in series) <= MAX_POINTS, bounds=bounds))
    note = (f'<p class="note">No panel for {_e(", ".join(bare))}: no question of it was scored with a '
            f"{_e(quantity.name)}.</p>") if bare else ""
    return f'{agent_legend(entries)}<div class="charts panels">{"".join(panels)}</div>{note}'


def _one_dataset(entries: Sequence[Entry], name: str) -> str:
    summaries = _dataset(entries, name)
    parts = [f"<h3>{_e(name)}</h3>"]
    notes: dict[str, list[str]] = {}  # note -> the agents it is about
    for e, d in zip(entries, summaries):
        note = unscored_note(d, e.run.summary.judge is not None) if d is not None else None
        if note:
            notes.setdefault(note, []).append(e.label)
    parts += [f'<p class="warn">{_e("every agent" if len(who) == len(entries) > 1 else ", ".join(who))}: {_e(note)}</p>'
              for note, who in notes.items()]
    labels: dict[str, list[str]] = {}
    for e, d in zip(entries, summaries):
        spec = d.quoted(e.run.summary.judge is not None).spec if d else None
        for by, found in by_label((d.breakdown or []) if d else [], spec).items():
            labels.setdefault(by, [])
            labels[by] += [b.value for b in found if b.value not in labels[by]]
    for by in labels:
        parts.append(f"<h4>by {_e(by)}</h4>" + _label_table(entries, summaries, by))
    parts.append(_headline_table(entries, name))
    split = [split_metrics(d.metrics if d else None) for d in summaries]
    if any(own for own, _ in split):
        parts.append("<h4>its own metrics</h4>" + _metrics_table(entries, [own for own, _ in split]))
    if any(data for _, data in split):
        parts.append("<h4>known errors in the data, counted in the data file (the same for every agent)</h4>"
                     + _data_table([data for _, data in split]))
    for by, values in labels.items():
        parts.append(f"<h4>score against distance by {_e(by)}</h4>" + _panels(entries, name, by, values))
    return "".join(parts)


def breakdown_section(entries: Sequence[Entry]) -> str:
    """The section, or "" when no dataset of the page has labels or metrics of its own."""
    names = _labelled_datasets(entries)
    if not names:
        return ""
    note = ('<p class="note">For benchmarks that score each question on its own and label it (a category, a question '
            "type, abstention): per label value, the number of questions, their mean memory distance (tokens from the "
            "start of the earliest turn a question needs to the question) and each agent's mean score (errored as 0, "
            "unscored left out; hover a score for its counts), each agent over its own scored questions; <b>all</b> is the "
            "dataset's own number (its headline, as in Score per dataset), with several agents over the questions "
            "scored for every one of them. "
            "The numbers it is quoted by are the benchmark's own, named as it names them (LoCoMo's F1 and J, "
            "LongMemEval's accuracy, task-averaged and abstention accuracy), with several agents over the questions "
            "scored for every one of them. The known data errors are counted in the benchmark's data file, "
            "not in the answers. The panels put each question's score against its memory distance, a panel per "
            "label value.</p>")
    return (f'<section id="breakdown"><h2>By category and type</h2>{note}'
            + "".join(_one_dataset(entries, name) for name in names) + "</section>")
