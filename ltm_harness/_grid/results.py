"""Results across a study's cells: per agent x dataset x span (and config), the mean score over seeds with a
Student t confidence interval; and every scored test pooled over the study for score-against-X charts.

For the n seeds' scores x_1..x_n (each a cell's mean normalised score on the dataset, or, for "all datasets", the
mean over its datasets), the interval is  mean ± t(1 - (1 - level) / 2, n - 1) · s / √n,  with s the sample
standard deviation (n - 1 in the denominator); it is clipped to [0, 1], the range of a score. With one seed there
is no interval (its bounds are empty).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from pydantic import BaseModel

from ltm_harness._grid.index import StudyIndex
from ltm_harness._report.labels import by_label
from ltm_harness._results.marks import KINDS, LEGEND, Kind, Mark, mark_text, marks_of
from ltm_harness._results.models import RunSummary, TestResult
from ltm_harness._results.outputs import read_results, read_run_summary
from ltm_harness._store.layout import StudyFolder

ALL = "all datasets"
LEVEL = 0.95


# -- Student's t quantile ---------------------------------------------------------------------------------------
def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularised incomplete beta function (modified Lentz's method)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-14:
            break
    return h


def _betai(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    tail = 0.5 * _betai(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The p-quantile of Student's t distribution with df degrees of freedom (bisection on its CDF)."""
    if not 0.0 < p < 1.0 or df <= 0:
        raise ValueError("p must be in (0, 1) and df positive")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if t_cdf(mid, df) < p else (lo, mid)
        if hi - lo < 1e-12:
            break
    return (lo + hi) / 2.0


def t_interval(values: Sequence[float], level: float = LEVEL) -> tuple[float, float | None, float | None]:
    """Mean, and the bounds of its Student t interval (None with fewer than two values), clipped to [0, 1]."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, None, None
    half = t_quantile(1.0 - (1.0 - level) / 2.0, len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return mean, max(0.0, mean - half), min(1.0, mean + half)


# -- the study's scores -----------------------------------------------------------------------------------------
class ScoreRow(BaseModel):
    """The mean over seeds of one agent's score on one dataset (or all) at one span, with its interval."""

    agent: str
    config: str | None
    dataset: str  # a dataset's name, or "all datasets": the mean over the datasets of each seed
    span: int
    metric: str = "score"  # what is averaged: the number the dataset is quoted by (its headline's first: F1, accuracy)
    seeds: int  # how many seeds (finished cells) the mean is over
    mean: float
    std: float  # sample standard deviation over seeds (0 with one)
    ci_low: float | None  # the Student t interval at `level`, clipped to [0, 1]
    ci_high: float | None
    level: float
    scores: list[float]  # per seed, in seed order
    seed_list: list[int]
    marks: str = ""  # protocol marks of any seed's cell, "[seq, unscored]" (ltm_harness/_results/marks.py)


class LabelScoreRow(BaseModel):
    """The mean over seeds of one agent's score on the questions of a dataset with one label value (e.g. category =
    temporal) at one span, with its interval; a seed where none of them was scored is left out."""

    agent: str
    config: str | None
    dataset: str
    by: str  # the label's name: category, type, abstention, ...
    value: str
    span: int
    seeds: int
    mean: float
    std: float
    ci_low: float | None
    ci_high: float | None
    level: float
    scores: list[float]
    seed_list: list[int]


class MetricMeanRow(BaseModel):
    """The mean over seeds of one of a dataset's own named metrics (e.g. LoCoMo's J) for one agent at one span."""

    agent: str
    config: str | None
    dataset: str
    metric: str
    span: int
    seeds: int
    mean: float
    values: list[float]  # per seed, in seed order
    seed_list: list[int]


class CellRow(BaseModel):
    """A cell of the study as the report lists it."""

    cell: str
    agent: str
    config: str | None
    dataset: str | None
    span: int | None
    seed: int
    state: str
    score: float | None
    runs: int
    where: str | None
    wall_seconds: float | None
    folder: str
    error: str | None


@dataclass
class CellData:
    """A finished cell's run: its summary and its tests' results."""

    cell_id: str
    agent: str
    config: str | None
    span: int | None
    seed: int
    summary: RunSummary
    results: list[TestResult]


def load_cells(folder: StudyFolder, index: StudyIndex) -> list[CellData]:
    """The finished cells' runs, in the index's order."""
    out = []
    for entry in index.cells:
        if entry.state != "finished":
            continue
        run = folder.cell(entry.cell.id)
        summary = read_run_summary(run)
        results = [r for a in summary.agents for r in read_results(run.agent(a.agent))]
        c = entry.cell
        out.append(CellData(c.id, c.agent, c.config, c.span, c.seed, summary, results))
    return out


def _spans(cell: CellData) -> dict[str, int]:
    """Each dataset's span in the cell: the study's, else the one its tests were made with."""
    spans: dict[str, int] = {}
    for r in cell.results:
        spans.setdefault(r.dataset, cell.span if cell.span is not None else r.memory_span)
    return spans


def score_rows(cells: Sequence[CellData], level: float = LEVEL) -> list[ScoreRow]:
    """Per agent x config x dataset x span, and per agent x config x span over all datasets."""
    per_dataset: dict[tuple[str, str | None, str, int], dict[int, float]] = {}
    overall: dict[tuple[str, str | None, int], dict[int, list[float]]] = {}
    names: dict[str, str] = {}  # dataset -> the name of its leading number
    marked: dict[tuple[str, str | None, str, int], set[Kind]] = {}  # the protocol marks of any seed's cell
    for cell in cells:
        spans = _spans(cell)
        for summary in cell.summary.agents:
            for d in summary.datasets:
                span = spans.get(d.dataset)
                values = d.quoted(cell.summary.judge is not None).values
                if span is None or not values or values[0].value is None:
                    continue  # nothing scored in this cell: no number, never 0
                names.setdefault(d.dataset, values[0].name)
                cell_span = cell.span if cell.span is not None else max(spans.values())
                kinds = {m.kind for m in marks_of(summary, cell.summary.judge, dataset=d.dataset)}
                marked.setdefault((cell.agent, cell.config, d.dataset, span), set()).update(kinds)
                marked.setdefault((cell.agent, cell.config, ALL, cell_span), set()).update(kinds)
                per_dataset.setdefault((cell.agent, cell.config, d.dataset, span), {})[cell.seed] = values[0].value
                overall.setdefault((cell.agent, cell.config, cell_span), {}).setdefault(cell.seed, []).append(
                    values[0].value)
    def marks(key: tuple[str, str | None, str, int]) -> str:
        kinds = marked.get(key, set())
        return mark_text([Mark(k, LEGEND[k]) for k in KINDS if k in kinds])

    rows = [ScoreRow(agent=agent, config=config, dataset=ALL, span=span, marks=marks((agent, config, ALL, span)),
                     **_over_seeds({s: statistics.fmean(v) for s, v in seeds.items()}, level))
            for (agent, config, span), seeds in overall.items()]
    rows += [ScoreRow(agent=agent, config=config, dataset=dataset, span=span, metric=names[dataset],
                      marks=marks((agent, config, dataset, span)), **_over_seeds(by_seed, level))
             for (agent, config, dataset, span), by_seed in per_dataset.items()]
    order = _agent_order(cells)
    rows.sort(key=lambda r: (order.get(r.agent, 0), r.config or "", r.dataset != ALL, r.dataset, r.span))
    return rows


def _over_seeds(by_seed: dict[int, float], level: float) -> dict[str, Any]:
    """The fields of a row over seeds: how many, the mean, std and Student t interval, the scores in seed order."""
    seeds = sorted(by_seed)
    scores = [by_seed[s] for s in seeds]
    mean, lo, hi = t_interval(scores, level)
    return dict(seeds=len(seeds), mean=mean, std=statistics.stdev(scores) if len(scores) > 1 else 0.0, ci_low=lo,
                ci_high=hi, level=level, scores=scores, seed_list=seeds)


def _agent_order(cells: Sequence[CellData]) -> dict[str, int]:
    return {name: i for i, name in enumerate(dict.fromkeys(c.agent for c in cells))}


def label_rows(cells: Sequence[CellData], level: float = LEVEL) -> list[LabelScoreRow]:
    """Per agent x config x dataset x label value x span, for datasets whose results carry labels (a benchmark's
    categories or question types): the mean over seeds of the cells' scores on that value's questions."""
    by_key: dict[tuple[str, str | None, str, str, str, int], dict[int, float]] = {}
    for cell in cells:
        spans = _spans(cell)
        for summary in cell.summary.agents:
            for d in summary.datasets:
                span = spans.get(d.dataset)
                spec = d.quoted(cell.summary.judge is not None).spec  # its values in the benchmark's own order
                for b in (b for found in by_label(d.breakdown or [], spec).values() for b in found):
                    if span is not None and b.scored:
                        key = (cell.agent, cell.config, d.dataset, b.label, b.value, span)
                        by_key.setdefault(key, {})[cell.seed] = b.score
    rows = [LabelScoreRow(agent=agent, config=config, dataset=dataset, by=by, value=value, span=span,
                          **_over_seeds(by_seed, level))
            for (agent, config, dataset, by, value, span), by_seed in by_key.items()]
    order = _agent_order(cells)
    rows.sort(key=lambda r: (order.get(r.agent, 0), r.config or "", r.dataset, r.span))  # values keep their order
    return rows


def metric_rows(cells: Sequence[CellData]) -> list[MetricMeanRow]:
    """Per agent x config x dataset x metric x span: the mean over seeds of a dataset's own named metric."""
    by_key: dict[tuple[str, str | None, str, str, int], dict[int, float]] = {}
    for cell in cells:
        spans = _spans(cell)
        for summary in cell.summary.agents:
            for d in summary.datasets:
                span = spans.get(d.dataset)
                quoted = d.quoted(cell.summary.judge is not None).values[1:]  # its headline's other numbers first
                named = {v.name: v.value for v in quoted if v.value is not None}
                for name, value in {**named, **(d.metrics or {})}.items():
                    if span is not None:
                        by_key.setdefault((cell.agent, cell.config, d.dataset, name, span), {})[cell.seed] = value
    rows = []
    for (agent, config, dataset, name, span), by_seed in by_key.items():
        seeds = sorted(by_seed)
        values = [by_seed[s] for s in seeds]
        rows.append(MetricMeanRow(agent=agent, config=config, dataset=dataset, metric=name, span=span, seeds=len(seeds),
                                  mean=statistics.fmean(values), values=values, seed_list=seeds))
    order = _agent_order(cells)
    rows.sort(key=lambda r: (order.get(r.agent, 0), r.config or "", r.dataset, r.span))
    return rows


def cell_rows(index: StudyIndex) -> list[CellRow]:
    return [CellRow(cell=e.cell.id, agent=e.cell.agent, config=e.cell.config, dataset=e.cell.dataset,
                    span=e.cell.span, seed=e.cell.seed, state=e.state, score=e.score, runs=e.runs, where=e.where,
                    wall_seconds=e.wall_seconds, folder=e.folder, error=e.error) for e in index.cells]


# -- pooled points: score against a quantity of each test ----------------------------------------------------------
@dataclass(frozen=True)
class PooledX:
    """A quantity of a test to pool the study's scores against: its name in files, its axis label, and its value
    (None: the test has none)."""

    name: str
    label: str
    value: Callable[[TestResult], float | None]


def _gap(r: TestResult) -> float | None:
    return float(r.achieved_gap) if r.achieved_gap else None


def _memory_distance(r: TestResult) -> float | None:
    return float(r.memory_distance) if r.memory_distance else None


# Every quantity here gets its pooled chart in the study's report, and its points in report.points.*.
POOLED_X: dict[str, PooledX] = {
    "gap": PooledX("gap", "achieved information gap (tokens, log scale)", _gap),
    "memory_distance": PooledX("memory_distance", "memory distance (tokens, log scale)", _memory_distance),
}


class PooledPoint(BaseModel):
    quantity: str  # the name of the PooledX this point's x is
    agent: str
    config: str | None
    cell: str
    dataset: str
    example_id: str
    x: float
    score: float


def pooled_points(cells: Sequence[CellData], x: PooledX) -> list[PooledPoint]:
    """Every scored test of the study with its value of `x` (errored tests score 0; unscored ones are left out)."""
    out = []
    for cell in cells:
        for r in cell.results:
            value = x.value(r)
            if r.status == "unscored" or value is None or value <= 0:
                continue
            out.append(PooledPoint(quantity=x.name, agent=cell.agent, config=cell.config, cell=cell.cell_id, dataset=r.dataset,
                                   example_id=r.example_id, x=value, score=r.normalized if r.status == "ok" else 0.0))
    return out
