"""The report's tables as rows (pydantic), and writing them as CSV and JSON.

Long-format tables, one row per agent, per agent and dataset, and per agent and test; for benchmarks whose results
carry labels, one per agent, dataset and label value (`breakdown`) and one per agent, dataset and named metric
(`metrics`). Each is written as CSV (header row, empty cell for a missing value) and as a JSON list of records, both
of which pandas reads directly (`read_csv`, `read_json`); pivot the dataset rows for an agents x datasets grid.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from pydantic import BaseModel

from ltm_harness._guard.text import csv_cell
from ltm_harness._report.colours import folder_slots, variants
from ltm_harness._report.load import AgentData, RunData
from ltm_harness._results.headline import compare, count_word
from ltm_harness._results.marks import Mark, is_imported, mark_text, marks_of, rank_key
from ltm_harness._results.models import AgentSummary, DatasetSummary, TestResult
from ltm_harness._store.files import write_text
from ltm_harness._store.layout import results_root_of

COST_ROLES = ("agent", "judge", "generation", "test")


@dataclass
class Entry:
    """One agent of one run, as the report shows it."""

    key: str  # id in the page: a0, a1, ...
    label: str  # unique across the report
    run: RunData
    agent: AgentData
    slot: int = 0  # its colour: by the agent's name, one per name on the page, the same on every page (colours.py)
    variant: int = 0  # the same agent's earlier appearances on the page (other runs): drawn dashed or lighter
    marks: list[Mark] = field(default_factory=list)  # its protocol marks (ltm_harness/_results/marks.py)

    def marks_on(self, dataset: str) -> list[Mark]:
        """Its protocol marks on one dataset's numbers."""
        return marks_of(self.agent.summary, self.run.summary.judge, is_imported(self.run.folder, self.agent.spec),
                        dataset)


def entries(runs: Sequence[RunData]) -> list[Entry]:
    """Label every agent; with several runs the label names the run too (`retrieval · run-a`). An agent whose numbers
    carry a protocol mark comes after those without (ltm_harness/_results/marks.py), in the order given otherwise."""
    names = [r.name for r in runs]
    first = [r.name if names.count(r.name) == 1 else f"{r.name} ({r.folder.parent.name or r.folder})" for r in runs]
    run_labels = [label if first.count(label) == 1 else f"{label} #{first[:i + 1].count(label)}"
                  for i, label in enumerate(first)]
    found: list[tuple[str, RunData, AgentData, list[Mark]]] = []
    for run, run_label in zip(runs, run_labels):
        for agent in run.agents:
            label = agent.spec if len(runs) == 1 else f"{agent.spec} · {run_label}"
            found.append((label, run, agent, marks_of(agent.summary, run.summary.judge,
                                                      is_imported(run.folder, agent.spec))))
    found.sort(key=lambda f: rank_key(f[3]))
    out = [Entry(f"a{i}", label, run, agent, marks=marks) for i, (label, run, agent, marks) in enumerate(found)]
    slots = folder_slots(results_root_of(runs[0].folder) if runs else None, (e.agent.spec for e in out))
    for entry, variant in zip(out, variants(e.agent.spec for e in out)):
        entry.slot, entry.variant = slots[entry.agent.spec], variant
    return out


def natural_key(text: str) -> tuple[tuple[int, int, str], ...]:
    """`text` sorted as a reader counts: its runs of digits by value (q1, q2, q10; conv-26.q9 before conv-26.q17)."""
    return tuple((0, int(part), "") if part.isdecimal() else (1, 0, part)
                 for part in re.split(r"(\d+)", text) if part)


def sort_key_of_test(dataset: str, example_id: str) -> tuple[str, tuple[tuple[int, int, str], ...], str]:
    return (dataset, natural_key(example_id), example_id)


class AgentRow(BaseModel):
    run: str
    agent: str
    label: str
    benchmark_score: float
    max_benchmark_score: int
    benchmark_share: float  # benchmark_score / benchmark_datasets_scored
    benchmark_datasets_scored: int  # the datasets it sums: those with a scored test
    ltm_score: float
    ltm_score_tests: int  # the perfectly answered tests the LTM score averages
    tests: int
    scored: int
    unscored: int
    errored: int
    turns: int
    filler_turns: int
    conversation_tokens: int
    agent_prompt_tokens: int
    agent_completion_tokens: int
    agent_tokens: int
    cost_usd: float  # the agent's replies, as its adapter reported them
    total_cost_usd: float  # every LLM call of the run for this agent when split by role, else cost_usd
    cost_agent_usd: float | None  # the split by role, when the run recorded one
    cost_judge_usd: float | None
    cost_generation_usd: float | None
    cost_test_usd: float | None
    llm_calls: int | None  # from llm_call events, when the run logged them
    llm_retries: int | None
    wall_seconds: float
    ltm_score_memory_distance: float | None = None  # the LTM score on memory distances (None: older results)
    ltm_score_memory_distance_tests: int | None = None  # the tests it averages
    marks: str = ""  # its protocol marks, "[seq, imported]" (ltm_harness/_results/marks.py)


class DatasetRow(BaseModel):
    run: str
    agent: str
    label: str
    dataset: str
    metric: str  # the name of the number the dataset is quoted by ("F1", "accuracy (rule-decided)", "score")
    tests: int
    scored: int
    unscored: int
    errored: int
    score: float | None  # its mean over the scored tests (None: none was scored)
    std: float | None
    target_gap: float | None
    achieved_gap: float | None
    memory_distance: float | None = None  # mean memory distance of its tests (None: older results)


class HeadlineRow(BaseModel):
    """One of the numbers a dataset is quoted by, for one agent: over its own scored tests (`over` = "own"), or, in a
    comparison, over the tests scored for every agent compared ("common")."""

    run: str
    agent: str
    label: str
    dataset: str
    metric: str  # "F1", "F1 · temporal", "accuracy (rule-decided)", "J (lenient judge, categories 1-4)", "score"
    value: float | None  # None: nothing it covers was scored
    scored: int  # the tests it averages
    tests: int  # the tests it is about
    word: str  # what `scored` counts: "scored", or "decided" (by a rule, the run having no judge)
    lead: bool  # the dataset's leading number
    over: str  # "own" or "common"
    goodai: bool  # the GoodAI benchmark's LTM score and gaps belong to the dataset
    marks: str = ""  # the agent's protocol marks on the dataset, "[seq, unscored]" (ltm_harness/_results/marks.py)


class BreakdownRow(BaseModel):
    """The results of a dataset that carry one label value (e.g. category = temporal), for one agent."""

    run: str
    agent: str
    label: str  # the agent's label in the report, as in the other tables
    dataset: str
    by: str  # the label's name: category, type, abstention, ...
    value: str  # its value: temporal, knowledge-update, yes, ...
    tests: int
    scored: int
    unscored: int
    errored: int
    score: float  # mean normalised score of the scored ones (errored as 0)
    memory_distance: float | None  # their mean memory distance (None: not measured)


class MetricRow(BaseModel):
    """One of a dataset's own named numbers (e.g. LoCoMo's J, LongMemEval's task-averaged accuracy) for one agent."""

    run: str
    agent: str
    label: str
    dataset: str
    metric: str
    value: float


class TestRow(BaseModel):
    __test__ = False

    run: str
    agent: str
    label: str
    dataset: str
    example_id: str
    status: str
    score: float
    max_score: float
    normalized: float
    memory_span: int
    target_gap: int | None
    achieved_gap: int | None
    gap_error: float | None  # (achieved - target) / target of the longest gap
    start_turn: int
    end_turn: int
    tokens: int
    judge_verdicts: int
    reasons: str  # joined with " | "
    memory_distance: int | None = None  # the longest memory distance of its questions (None: not measured)


def agent_row(e: Entry) -> AgentRow:
    s = e.agent.summary
    split = e.agent.cost_split
    calls = list(e.agent.calls().values())
    return AgentRow(
        run=e.run.name, agent=e.agent.spec, label=e.label,
        benchmark_score=s.benchmark_score, max_benchmark_score=s.max_benchmark_score,
        benchmark_share=s.benchmark_score / s.scored_datasets if s.scored_datasets else 0.0,
        benchmark_datasets_scored=s.scored_datasets,
        ltm_score=s.ltm_score, ltm_score_tests=s.ltm_tests("gap"),
        tests=sum(d.tests for d in s.datasets), scored=sum(d.scored for d in s.datasets),
        unscored=sum(d.unscored for d in s.datasets), errored=sum(d.errored for d in s.datasets),
        turns=s.turns, filler_turns=s.filler_turns, conversation_tokens=s.conversation_tokens,
        agent_prompt_tokens=s.agent_prompt_tokens, agent_completion_tokens=s.agent_completion_tokens,
        agent_tokens=s.agent_prompt_tokens + s.agent_completion_tokens,
        cost_usd=s.cost_usd, total_cost_usd=sum(split.values()) if split else s.cost_usd,
        cost_agent_usd=split.get("agent", 0.0) if split else None, cost_judge_usd=split.get("judge", 0.0) if split else None,
        cost_generation_usd=split.get("generation", 0.0) if split else None,
        cost_test_usd=split.get("test", 0.0) if split else None,
        llm_calls=sum(c.calls for c in calls) if calls else None,
        llm_retries=sum(c.retries for c in calls) if calls else None,
        wall_seconds=s.wall_seconds,
        ltm_score_memory_distance=s.ltm_score_memory_distance,
        ltm_score_memory_distance_tests=None if s.ltm_score_memory_distance is None else s.ltm_tests("memory_distance"),
        marks=mark_text(e.marks),
    )


def benchmark_text(score: float, summed: int, datasets: int) -> str:
    """The GoodAI benchmark score as shown: "3.71/16 (1 dataset unscored)" when some dataset had nothing scored."""
    unscored = datasets - summed
    return f"{score:.2f}/{summed}" + (f" ({unscored} dataset{'' if unscored == 1 else 's'} unscored)" if unscored else "")


def common_benchmark(rows: Sequence[HeadlineRow], label: str) -> tuple[float, int, int] | None:
    """An agent's benchmark score in a comparison: the sum of its GoodAI datasets' leading numbers over the tests
    scored for every agent, how many datasets that sums (those with such tests), and how many it has; None: nothing
    compared (a single agent)."""
    mine = [r for r in rows if r.label == label and r.lead and r.over == "common" and r.goodai]
    if not mine:
        return None
    values = [r.value for r in mine if r.value is not None]
    return sum(values), len(values), len(mine)


def ltm_caution(agents: Sequence[tuple[str, float, float]]) -> str | None:
    """One line saying what the LTM score is, when it ranks the agents (label, benchmark share, LTM score) against
    their benchmark scores, as the reference's definition can: the oracle answers every test, short gaps included,
    so `retrieval`, perfect only on some, can show the higher mean. None when the two rankings agree."""
    for best, share, ltm in sorted(agents, key=lambda a: -a[1]):
        above = [a for a in agents if a[1] < share and a[2] > ltm]
        if above:
            other = max(above, key=lambda a: a[2])[0]
            return (f"LTM score (the reference's): the mean gap of an agent's perfectly answered tests, not a ranking: "
                    f"{other} shows a higher one than {best}, which scores more.")
    return None


def dataset_rows(e: Entry) -> list[DatasetRow]:
    judged = e.run.summary.judge is not None
    return [DatasetRow(run=e.run.name, agent=e.agent.spec, label=e.label, dataset=d.dataset,
                       metric=d.quoted(judged).values[0].name if d.quoted(judged).values else "score", tests=d.tests,
                       scored=d.scored, unscored=d.unscored, errored=d.errored, score=d.score if d.scored else None,
                       std=d.std if d.scored else None, target_gap=d.target_gap, achieved_gap=d.achieved_gap,
                       memory_distance=d.memory_distance)
            for d in e.agent.summary.datasets]


@dataclass
class Quoted:
    """One agent of one run as its headline numbers need it."""

    run: str
    agent: str
    label: str
    summary: AgentSummary
    results: Sequence[TestResult]
    judged: bool
    judge: str | None = None  # the run's judge model
    imported: bool = False  # its answers came from a file (import-answers)


def headline_rows(items: Sequence[Quoted]) -> list[HeadlineRow]:
    """Each dataset's headline per agent over its own scored tests, then, with several agents, over the tests scored
    for every agent that has the dataset ("common": the numbers to compare them by)."""
    rows: list[HeadlineRow] = []
    names = sorted({d.dataset for q in items for d in q.summary.datasets})
    for name in names:
        having = [(q, d) for q in items for d in q.summary.datasets if d.dataset == name]
        first: DatasetSummary = having[0][1]
        quoted = first.quoted(having[0][0].judged)
        word = count_word(quoted.spec, quoted.judged)

        def row(q: Quoted, metric: str, value: float | None, scored: int, tests: int, lead: bool, over: str) -> HeadlineRow:
            return HeadlineRow(run=q.run, agent=q.agent, label=q.label, dataset=name, metric=metric, value=value,
                               scored=scored, tests=tests, word=word, lead=lead, over=over, goodai=quoted.spec.goodai,
                               marks=mark_text(marks_of(q.summary, q.judge, q.imported, name)))

        for q, d in having:
            rows += [row(q, v.name, v.value, v.scored, v.tests, i == 0, "own")
                     for i, v in enumerate(d.quoted(q.judged).values)]
        if len(having) > 1:
            results = [[r for r in q.results if r.dataset == name] for q, _ in having]
            if all(results):
                values, _ = compare(quoted.spec, quoted.judged, results)
                for (q, _), vs in zip(having, values):
                    rows += [row(q, v.name, v.value, v.scored, v.tests, i == 0, "common") for i, v in enumerate(vs)]
    return rows


def entry_quoted(e: Entry) -> Quoted:
    return Quoted(e.run.name, e.agent.spec, e.label, e.agent.summary, e.agent.results, e.run.summary.judge is not None,
                  e.run.summary.judge, is_imported(e.run.folder, e.agent.spec))


def breakdown_rows(run: str, agent: str, label: str, summary: AgentSummary) -> list[BreakdownRow]:
    return [BreakdownRow(run=run, agent=agent, label=label, dataset=d.dataset, by=b.label, value=b.value, tests=b.tests,
                         scored=b.scored, unscored=b.unscored, errored=b.errored, score=b.score,
                         memory_distance=b.memory_distance)
            for d in summary.datasets for b in d.breakdown or []]


def metric_rows(run: str, agent: str, label: str, summary: AgentSummary) -> list[MetricRow]:
    return [MetricRow(run=run, agent=agent, label=label, dataset=d.dataset, metric=name, value=value)
            for d in summary.datasets for name, value in (d.metrics or {}).items()]


def row_of_test(e: Entry, r: TestResult) -> TestRow:
    longest = max(r.gaps, key=lambda g: g.achieved_tokens, default=None)
    return TestRow(
        run=e.run.name, agent=e.agent.spec, label=e.label, dataset=r.dataset, example_id=r.example_id,
        status=r.status, score=r.score, max_score=r.max_score, normalized=r.normalized, memory_span=r.memory_span,
        target_gap=r.target_gap, achieved_gap=r.achieved_gap,
        gap_error=longest.relative_error if longest is not None else None,
        start_turn=r.start_turn, end_turn=r.end_turn, tokens=r.tokens, judge_verdicts=len(r.verdicts),
        reasons=" | ".join(r.reasons), memory_distance=r.memory_distance,
    )


def sorted_results(e: Entry) -> list[TestResult]:
    return sorted(e.agent.results, key=lambda r: sort_key_of_test(r.dataset, r.example_id))


@dataclass
class Tables:
    agents: list[AgentRow]
    datasets: list[DatasetRow]
    tests: list[TestRow]
    breakdown: list[BreakdownRow]  # empty when no result carries labels
    metrics: list[MetricRow]  # empty when no dataset names metrics of its own
    headline: list[HeadlineRow]  # the numbers each dataset is quoted by (ltm_harness/_results/headline.py)


def build_tables(all_entries: Sequence[Entry]) -> Tables:
    return Tables(
        agents=[agent_row(e) for e in all_entries],
        datasets=[row for e in all_entries for row in dataset_rows(e)],
        tests=[row_of_test(e, r) for e in all_entries for r in sorted_results(e)],
        breakdown=[row for e in all_entries
                   for row in breakdown_rows(e.run.name, e.agent.spec, e.label, e.agent.summary)],
        metrics=[row for e in all_entries for row in metric_rows(e.run.name, e.agent.spec, e.label, e.agent.summary)],
        headline=headline_rows([entry_quoted(e) for e in all_entries]),
    )


def _cell(value: object) -> str:
    """A CSV cell: numbers as they are, text that a spreadsheet would run as a formula (=, +, -, @, tab, CR first)
    neutralised with a leading `'` (OWASP's advice on CSV injection)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (int, bool)):
        return str(value)
    return str(csv_cell(str(value)))


def write_table(rows: Sequence[BaseModel], model: type[BaseModel], csv_path: Path, json_path: Path) -> None:
    """A table as CSV and JSON, each written whole or not at all (through the run-folder owner's writer)."""
    columns = list(model.model_fields)
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(getattr(row, c)) for c in columns])
    write_text(csv_path, text.getvalue())
    records = [row.model_dump(mode="json") for row in rows]
    write_text(json_path, json.dumps(records, indent=1, ensure_ascii=False) + "\n")


def write_tables(tables: Tables, html_path: Path) -> list[Path]:
    """`<stem>.headline.csv` (each dataset's own numbers, named: F1, accuracy, ...), `.agents.csv`, `.datasets.*`,
    `.tests.*` next to the HTML file (each also as .json), and `.breakdown.*` and `.metrics.*` when they have rows (a
    run of benchmarks with labels or metrics of their own)."""
    written = []
    for name, rows, model in (("headline", tables.headline, HeadlineRow), ("agents", tables.agents, AgentRow),
                              ("datasets", tables.datasets, DatasetRow),
                              ("tests", tables.tests, TestRow), ("breakdown", tables.breakdown, BreakdownRow),
                              ("metrics", tables.metrics, MetricRow)):
        if not rows and name in ("breakdown", "metrics"):
            continue
        csv_path = html_path.with_name(f"{html_path.stem}.{name}.csv")
        json_path = html_path.with_name(f"{html_path.stem}.{name}.json")
        write_table(rows, model, csv_path, json_path)
        written += [csv_path, json_path]
    return written
