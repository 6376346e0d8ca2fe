"""A study's report: score against span (log axis) per agent, over all datasets and per dataset, with each point's
interval over seeds; for benchmarks whose results carry labels, the same per label value (category, question type)
and their own metrics per span; score against a quantity of each test (by default the achieved gap) pooled over the
study; the cells and their states. One self-contained HTML file (no script, no network), tables as CSV/JSON beside
it: `report.scores.*` (per agent x config x dataset x span), `report.cells.*`, `report.points.*` (the pooled tests,
one row per test and quantity of POOLED_X), and when there are labels or metrics `report.breakdown.*` (per agent x
config x dataset x label value x span) and `report.metrics.*` (per agent x config x dataset x metric x span)."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Sequence

from ltm_harness._errors import ConfigError, RunFolderError
from ltm_harness._grid.index import read_index
from ltm_harness._grid.results import (ALL, POOLED_X, CellRow, LabelScoreRow, MetricMeanRow, PooledPoint, PooledX,
                                       ScoreRow, cell_rows, label_rows, load_cells, metric_rows, pooled_points,
                                       score_rows)
from ltm_harness._report.assets import CSS
from ltm_harness._report.colours import colour_css, folder_slots, slot_colour, variants
from ltm_harness._report.curves import MAX_POINTS
from ltm_harness._report.html import marks_legend, protocol_marks
from ltm_harness._report.labels import metric_text
from ltm_harness._results.marks import LEGEND, Mark, kinds_in
from ltm_harness._report.svg_score import Curve, Series, score_panel, span_chart
from ltm_harness._grid.stats import study_statistics
from ltm_harness._report.stats_section import statistics_section, write_statistics_tables
from ltm_harness._report.tables import write_table
from ltm_harness._store.files import write_text
from ltm_harness._store.layout import StudyFolder
from ltm_harness._tokens import plural


@dataclass
class StudyReport:
    html: Path
    tables: list[Path]
    rows: list[ScoreRow]
    warnings: list[str]


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _label(agent: str, config: str | None) -> str:
    return agent if config is None else f"{agent} · {config}"


def _interval(r: ScoreRow | LabelScoreRow) -> str:
    return "" if r.ci_low is None or r.ci_high is None else f" [{r.ci_low:.2f}, {r.ci_high:.2f}]"


@dataclass
class _Line:
    """One agent (in one config) of the study: its label, its colour slot (by the agent's name) and its variant."""

    label: str
    slot: int
    variant: int


def _lines(rows: Sequence[ScoreRow], root: Path | None = None) -> list[_Line]:
    pairs = list(dict.fromkeys((r.agent, r.config) for r in rows))
    slots = folder_slots(root, (agent for agent, _ in pairs))  # the colours of the results folder `root`
    return [_Line(_label(agent, config), slots[agent], variant)
            for (agent, config), variant in zip(pairs, variants(agent for agent, _ in pairs))]


def _curves(rows: Sequence[ScoreRow | LabelScoreRow], lines: list[_Line]) -> list[Curve]:
    """A curve per agent (and config) of `rows`, the rows of one dataset (or all, or one label value)."""
    curves = []
    for line in lines:
        pts = [(float(r.span), r.mean, r.ci_low, r.ci_high, f" over {plural(r.seeds, 'seed')}") for r in rows
               if _label(r.agent, r.config) == line.label]
        if pts:
            curves.append(Curve(line.label, slot_colour(line.slot), pts, line.variant))
    return curves


def _score_table(rows: Sequence[ScoreRow], labels: list[str]) -> str:
    spans = sorted({r.span for r in rows if r.dataset == ALL})
    head = "<tr><th>agent</th>" + "".join(f'<th class="num">span {s:,}</th>' for s in spans) + "</tr>"
    body = []
    for label in labels:
        by_span = {r.span: r for r in rows if r.dataset == ALL and _label(r.agent, r.config) == label}
        cells = "".join(f'<td class="num">{by_span[s].mean:.2f}{_marks(by_span[s].marks)}{_interval(by_span[s])} '
                        f'(n={by_span[s].seeds})</td>'
                        if s in by_span else '<td class="num">–</td>' for s in spans)
        body.append(f"<tr><td>{_e(label)}</td>{cells}</tr>")
    return f'<div class="scroll"><table>{head}{"".join(body)}</table></div>'


def _marks(text: str) -> str:
    """A row's protocol marks (ltm_harness/_results/marks.py) beside its number, each explained when hovered."""
    return protocol_marks([Mark(k, LEGEND[k]) for k in kinds_in([text])])


def _breakdown_section(rows: Sequence[LabelScoreRow], metrics: Sequence[MetricMeanRow], lines: list[_Line]) -> str:
    """Per dataset with labels: per label (category, type), a table of agent x value by span and a span chart per
    value; then its own metrics by span. "" when no dataset has labels or metrics."""
    parts = []
    for dataset in sorted({r.dataset for r in rows} | {m.dataset for m in metrics}):
        parts.append(f"<h3>{_e(dataset)}</h3>")
        mine = [r for r in rows if r.dataset == dataset]
        spans = sorted({r.span for r in mine} | {m.span for m in metrics if m.dataset == dataset})
        head = "<th>agent</th><th>{}</th>" + "".join(f'<th class="num">span {s:,}</th>' for s in spans) + "</tr>"
        labels = [line.label for line in lines]
        for by in dict.fromkeys(r.by for r in mine):
            values = list(dict.fromkeys(r.value for r in mine if r.by == by))
            body = []
            for label in labels:
                for value in values:
                    by_span = {r.span: r for r in mine if r.by == by and r.value == value
                               and _label(r.agent, r.config) == label}
                    if by_span:
                        cells = "".join(f'<td class="num">{by_span[s].mean:.2f}{_interval(by_span[s])} '
                                        f"(n={by_span[s].seeds})</td>" if s in by_span else '<td class="num">–</td>'
                                        for s in spans)
                        body.append(f"<tr><td>{_e(label)}</td><td>{_e(value)}</td>{cells}</tr>")
            charts = "".join(span_chart(f"{dataset} · {by} {value}",
                                        _curves([r for r in mine if r.by == by and r.value == value], lines))
                             for value in values)
            parts.append(f"<h4>by {_e(by)}</h4>"
                         f'<div class="scroll"><table><tr>{head.format(_e(by))}{"".join(body)}</table></div>'
                         f'<div class="charts">{charts}</div>')
        named = [m for m in metrics if m.dataset == dataset]
        if named:
            body = []
            for label in labels:
                for metric in dict.fromkeys(m.metric for m in named):
                    at = {m.span: m for m in named if m.metric == metric and _label(m.agent, m.config) == label}
                    if at:
                        cells = "".join(f'<td class="num">{metric_text(at[s].mean)} (n={at[s].seeds})</td>'
                                        if s in at else '<td class="num">–</td>' for s in spans)
                        body.append(f"<tr><td>{_e(label)}</td><td>{_e(metric)}</td>{cells}</tr>")
            parts.append("<h4>its own metrics (mean over seeds)</h4>"
                         f'<div class="scroll"><table><tr>{head.format("metric")}{"".join(body)}</table></div>')
    if not parts:
        return ""
    return ('<section id="breakdown"><h2>By category and type</h2><p class="note">For benchmarks whose questions '
            "carry labels (a category, a question type): each agent's mean score on a label value's questions, over "
            "seeds, with its interval as above (a seed whose questions of that value were all unscored is left out); "
            "and the benchmark's own metrics, named as it names them, as a mean over seeds.</p>"
            + "".join(parts) + "</section>")


def _cells_table(cells: Sequence[CellRow]) -> str:
    head = ("<tr><th>cell</th><th>state</th><th class=\"num\">score</th><th class=\"num\">runs</th><th>where</th>"
            "<th class=\"num\">wall time</th><th>folder</th><th>error</th></tr>")
    body = "".join(
        f"<tr><td>{_e(c.cell)}</td><td>{_e(c.state)}</td>"
        f'<td class="num">{"–" if c.score is None else f"{c.score:.2f}"}</td><td class="num">{c.runs}</td>'
        f"<td>{_e(c.where or '–')}</td>"
        f'<td class="num">{"–" if c.wall_seconds is None else f"{c.wall_seconds:,.1f} s"}</td>'
        f"<td>{_e(c.folder)}</td><td>{_e(c.error or '')}</td></tr>" for c in cells)
    return f'<div class="scroll"><table>{head}{body}</table></div>'


def _pooled_chart(points: Sequence[PooledPoint], x: PooledX, lines: list[_Line]) -> str:
    mine = [p for p in points if p.quantity == x.name]
    series = [Series(line.label, slot_colour(line.slot), [(p.x, p.score, f"{p.cell}: {p.dataset}/{p.example_id}")
                                                          for p in mine if _label(p.agent, p.config) == line.label],
                     line.variant)
              for line in lines]
    name = x.label.split(' (')[0]
    return score_panel(f"score against {name}, pooled over the study", series, x.label,
                       draw_points=len(mine) <= MAX_POINTS, empty=f"no {name} was measured", legend=True)


def build_study_page(title: str, rows: Sequence[ScoreRow], cells: Sequence[CellRow], points: Sequence[PooledPoint],
                     quantities: Sequence[PooledX], level: float, by_label: Sequence[LabelScoreRow] = (),
                     metrics: Sequence[MetricMeanRow] = (), root: Path | None = None,
                     statistics: str = "") -> str:
    lines = _lines(rows, root)
    datasets = sorted({r.dataset for r in rows if r.dataset != ALL})
    legend = "".join(f'<span class="item"><span class="swatch c{line.slot}{" alt" if line.variant else ""}"></span>'
                     f"{_e(line.label)}</span>" for line in lines)
    overall = span_chart("score against span, all datasets", _curves([r for r in rows if r.dataset == ALL], lines),
                         width=640, height=300)
    metric = {r.dataset: r.metric for r in rows}
    per_dataset = "".join(span_chart(d if metric[d] == "score" else f"{d} · {metric[d]}",
                                     _curves([r for r in rows if r.dataset == d], lines)) for d in datasets)
    pooled = "".join(_pooled_chart(points, x, lines) for x in quantities)
    css = CSS + colour_css(line.slot for line in lines)
    counts = {s: sum(c.state == s for c in cells) for s in ("finished", "failed", "interrupted", "running", "pending")}
    state = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    problems = "".join(f'<p class="err">cell {_e(c.cell)} failed: {_e(c.error)}</p>' for c in cells
                       if c.state == "failed" and c.error)
    note = (f'<p class="note">Each point is the mean over seeds of the cells\' scores (a cell\'s score on a dataset: '
            f"the mean normalised score of its tests; over all datasets: the mean of those). The whisker and the "
            f"brackets are the {level:.0%} Student t interval over seeds, mean ± t·s/√n with s the sample standard "
            "deviation, clipped to [0, 1]; one seed gives no interval. The pooled chart has a dot per scored test of "
            "every finished cell (a bigger dot: several tests on one spot); bins of tests (each twice as wide as the one before) with enough tests also get their mean, joined by a line.</p>")
    csp = f"default-src 'none'; style-src {_hash(css)}; base-uri 'none'; form-action 'none'"
    return ("<!DOCTYPE html>\n"
            f'<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="{csp}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{_e(title)}</title><style>{css}</style></head><body>"
            f'<header><h1>{_e(title)}</h1><p class="meta">{plural(len(cells), "cell")}: {_e(state)}</p></header><main>'
            f'<section id="scores"><h2>Score against span</h2><p class="legend">{legend}</p>'
            f"{_score_table(rows, [line.label for line in lines])}"
            f"{marks_legend(kinds_in(r.marks for r in rows))}"
            f'<div class="charts">{overall}</div><h3>Per dataset</h3><div class="charts">{per_dataset}</div>{note}</section>'
            f"{_breakdown_section(by_label, metrics, lines)}{statistics}"
            f'<section id="pooled"><h2>Pooled over the study</h2><div class="charts">{pooled}</div></section>'
            f'<section id="cells"><h2>Cells</h2>{problems}{_cells_table(cells)}</section>'
            "</main></body></html>\n")


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def write_study_report(folder: StudyFolder, output: Path | None = None,
                       quantities: Sequence[str] | None = None) -> StudyReport:
    """The study's report (default `<study>/report.html`) with its tables beside it, from the finished cells; a
    pooled chart for each of `quantities` (names in POOLED_X; default: all of them)."""
    unknown = [q for q in quantities or [] if q not in POOLED_X]
    if unknown:
        raise ConfigError(f"pooled quantity {unknown[0]!r} is not known; give one of {', '.join(POOLED_X)}")
    chosen = [POOLED_X[q] for q in (quantities or list(POOLED_X))]
    index = read_index(folder)
    cells = load_cells(folder, index)
    rows = score_rows(cells)
    points = [p for x in chosen for p in pooled_points(cells, x)]
    table = cell_rows(index)
    output = output or folder.report
    if output.suffix.lower() not in (".html", ".htm"):
        raise ConfigError(f"report file {output} must end in .html (its tables are written beside it)")
    by_label, metrics = label_rows(cells), metric_rows(cells)
    stats = study_statistics(cells)  # intervals per cell, agents compared in pairs (docs/statistics.md)
    page = build_study_page(f"ltm-harness study {index.study}", rows, table, points, chosen,
                            rows[0].level if rows else 0.95, by_label, metrics, folder.path.parent,
                            statistics_section(stats))
    written = []
    try:
        write_text(output, page)  # whole or not at all (it makes the folder)
        for name, items, model in (("scores", rows, ScoreRow), ("cells", table, CellRow),
                                   ("points", points, PooledPoint), ("breakdown", by_label, LabelScoreRow),
                                   ("metrics", metrics, MetricMeanRow)):
            if not items and name in ("breakdown", "metrics"):
                continue
            csv_path = output.with_name(f"{output.stem}.{name}.csv")
            json_path = output.with_name(f"{output.stem}.{name}.json")
            write_table(items, model, csv_path, json_path)
            written += [csv_path, json_path]
        written += write_statistics_tables(stats, output)
    except OSError as exc:
        raise RunFolderError(f"cannot write the report to {output}: {exc.strerror or exc}; give another file with -o") \
            from None
    warnings = [f"cell {c.cell} is {c.state}: it is not in the report (run the study again)" for c in table
                if c.state != "finished"]
    return StudyReport(output, written, rows, warnings)
