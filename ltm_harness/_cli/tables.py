"""Terminal tables of a run's results (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ltm_harness._report.labels import by_label, metric_text, unscored_note
from ltm_harness._report.tables import (AgentRow, BreakdownRow, DatasetRow, MetricRow, breakdown_rows, ltm_caution,
                                        metric_rows)
from ltm_harness._results.models import AgentSummary, DatasetSummary, LabelSummary, RunSummary
from ltm_harness._tokens import plural


LTM_TESTS = "  tests it averages"  # the row under the LTM score: its perfectly answered tests


def _gap(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def agent_table(summary: AgentSummary) -> Table:
    table = Table(title=f"agent {escape(summary.agent)}", title_justify="left")
    for col, just in (("dataset", "left"), ("score", "right"), ("tests", "right"), ("target gap", "right"),
                      ("achieved gap", "right"), ("memory distance", "right"), ("unscored/errored", "right")):
        table.add_column(col, justify=just)  # type: ignore[arg-type]
    for d in summary.datasets:
        table.add_row(d.dataset, f"{d.score:.2f} ± {d.std:.2f}", str(d.tests), _gap(d.target_gap), _gap(d.achieved_gap),
                      _gap(d.memory_distance), f"{d.unscored}/{d.errored}")
    table.caption = (
        f"benchmark score {summary.benchmark_score:.2f}/{summary.max_benchmark_score}   "
        f"LTM score {summary.ltm_score:,.0f} tokens over {plural(summary.ltm_tests('gap'), 'perfect test')}"
        + (f" ({summary.ltm_score_memory_distance:,.0f} on memory distance)"
           if summary.ltm_score_memory_distance is not None else "")
        + f"   turns {summary.turns} ({summary.filler_turns} filler)   "
        f"conversation {summary.conversation_tokens:,} tokens   wall {summary.wall_seconds:.2f} s"
        + _llm_line(summary)
    )
    table.caption_justify = "left"
    return table


def breakdown_tables(summary: AgentSummary, judged: bool) -> list[Table | Text]:
    """For each dataset whose results carry labels (a benchmark's categories or question types): a table per label
    (a row per value, then the dataset as a whole), its own named metrics, and a line saying how many were left
    unscored and why; nothing for other datasets."""
    out: list[Table | Text] = []
    for d in summary.datasets:
        tables = [_label_table(summary.agent, d, by, values) for by, values in by_label(d.breakdown or []).items()]
        if d.metrics:
            metrics = Table(title=f"agent {escape(summary.agent)} · {escape(d.dataset)}: its own metrics",
                            title_justify="left")
            metrics.add_column("metric")
            metrics.add_column("value", justify="right")
            for name, value in d.metrics.items():
                metrics.add_row(escape(name), metric_text(value))
            tables.append(metrics)
        out += tables
        note = unscored_note(d, judged)
        if tables and note:
            out.append(Text(f"{summary.agent} · {d.dataset}: {note}"))
    return out


def _label_table(agent: str, d: DatasetSummary, by: str, values: list[LabelSummary]) -> Table:
    table = Table(title=f"agent {escape(agent)} · {escape(d.dataset)} by {escape(by)}", title_justify="left")
    for col, just in ((escape(by), "left"), ("score", "right"), ("tests", "right"), ("memory distance", "right"),
                      ("unscored/errored", "right")):
        table.add_column(col, justify=just)  # type: ignore[arg-type]
    for b in values:
        table.add_row(escape(b.value), f"{b.score:.2f}" if b.scored else "-", str(b.tests), _gap(b.memory_distance),
                      f"{b.unscored}/{b.errored}")
    table.add_section()
    table.add_row(f"all of {escape(d.dataset)}", f"{d.score:.2f} ± {d.std:.2f}", str(d.tests), _gap(d.memory_distance),
                  f"{d.unscored}/{d.errored}")
    return table


def _llm_line(summary: AgentSummary) -> str:
    """Cost by role, LLM calls, retries and cache hits, when the agent or the judge used an LLM."""
    u = summary.usage
    if not u.calls and not summary.cost_usd:
        return ""
    split = ", ".join(f"{role} ${cost:.4f}" for role, cost in summary.cost_split.items() if cost)
    text = f"\ncost ${summary.cost_usd:.4f}" + (f" ({split})" if split else "")
    if u.calls:
        text += "   LLM calls " + ", ".join(f"{role} {n}" for role, n in u.calls.items())
        retries = sum(u.retries.values())
        cached = sum(u.cached.values())
        text += (f"   retries {retries}" if retries else "") + (f"   cache hits {cached}" if cached else "")
    if u.unpriced_models:
        text += f"   no price known for {', '.join(u.unpriced_models)} (add it to llm.prices)"
    return text


def comparison_table(run: RunSummary) -> Table:
    names = sorted({d.dataset for a in run.agents for d in a.datasets})
    table = Table(title=f"run {escape(run.run_name)}: mean score per dataset", title_justify="left")
    table.add_column("dataset")
    for a in run.agents:
        table.add_column(escape(a.agent), justify="right")
    for name in names:
        row = [name]
        for a in run.agents:
            d = next((d for d in a.datasets if d.dataset == name), None)
            row.append("-" if d is None else f"{d.score:.2f}")
        table.add_row(*row)
        _label_rows(table, name, [a.agent for a in run.agents],
                    [b for a in run.agents for b in breakdown_rows(run.run_name, a.agent, a.agent, a)],
                    [m for a in run.agents for m in metric_rows(run.run_name, a.agent, a.agent, a)])
    table.add_row("[b]benchmark[/b]", *[f"[b]{a.benchmark_score:.2f}[/b]/{a.max_benchmark_score}" for a in run.agents])
    table.add_row("LTM score", *[f"{a.ltm_score:,.0f}" for a in run.agents])
    table.add_row(LTM_TESTS, *[str(a.ltm_tests("gap")) for a in run.agents])
    if any(a.ltm_score_memory_distance is not None for a in run.agents):
        table.add_row("LTM score on memory distance", *["-" if a.ltm_score_memory_distance is None
                                                        else f"{a.ltm_score_memory_distance:,.0f}" for a in run.agents])
    _caution(table, [(a.agent, a.benchmark_score / a.max_benchmark_score if a.max_benchmark_score else 0.0, a.ltm_score)
                     for a in run.agents])
    return table


def _label_rows(table: Table, dataset: str, columns: list[str], breakdown: list[BreakdownRow],
                metrics: list[MetricRow]) -> None:
    """Under a dataset's row of an agents-as-columns table: its mean score per label value (a benchmark's categories
    or question types), then its own named metrics; nothing for a dataset without them. `columns`: the agents' labels
    as the rows name them."""
    cells = {(b.label, b.by, b.value): b for b in breakdown if b.dataset == dataset}
    for by, value in dict.fromkeys((b.by, b.value) for b in breakdown if b.dataset == dataset):
        row = []
        for column in columns:
            b = cells.get((column, by, value))
            row.append("-" if b is None else f"{b.score:.2f}" if b.scored else "unscored")
        table.add_row(escape(f"  {by} {value}"), *row)
    named = {(m.label, m.metric): m.value for m in metrics if m.dataset == dataset}
    for metric in dict.fromkeys(m.metric for m in metrics if m.dataset == dataset):
        table.add_row(escape(f"  {metric}"), *[metric_text(named.get((column, metric))) for column in columns])


def _caution(table: Table, agents: list[tuple[str, float, float]]) -> None:
    """The LTM score's one-line explanation under the table, when it ranks the agents against the benchmark."""
    note = ltm_caution(agents)
    if note:
        table.caption, table.caption_justify = escape(note), "left"


def print_run(run: RunSummary, console: Console | None = None) -> None:
    console = console or Console()
    for agent in run.agents:
        console.print(agent_table(agent))
        for part in breakdown_tables(agent, run.judge is not None):
            console.print(part)
    if len(run.agents) > 1:
        console.print(comparison_table(run))


def report_table(title: str, agents: list[AgentRow], datasets: list[DatasetRow], marks: dict[str, str] | None = None,
                 plain: bool = False, breakdown: list[BreakdownRow] | None = None,
                 metrics: list[MetricRow] | None = None) -> Table:
    """The table of a report or comparison: a row per dataset (under it, for a benchmark with labels, a row per
    label value and one per metric of its own), a column per agent (labelled as in the page), then the benchmark
    score, the LTM score and, when anything was priced, the cost. `marks`: a note per label (how its run differs
    from the first); `plain`: ASCII lines, for a pipe or a file."""
    from rich import box

    marks = marks or {}
    names = sorted({d.dataset for d in datasets})
    with_std = len(agents) <= 4  # beyond, the std (in the page and the CSV) would make the table too wide
    table = Table(title=escape(title + (" (± std)" if with_std else "")), title_justify="left",
                  box=box.ASCII if plain else box.HEAVY_HEAD)
    table.add_column("dataset", no_wrap=True, min_width=min(max((len(n) for n in names), default=7), 24))
    for a in agents:
        mark = marks.get(a.label)
        table.add_column(escape(a.label) + (f" ({escape(mark)})" if mark else ""), justify="right", overflow="fold")
    cells = {(d.label, d.dataset): d for d in datasets}
    for name in names:
        row = [escape(name)]
        for a in agents:
            d = cells.get((a.label, name))
            row.append("-" if d is None else f"{d.score:.2f} ± {d.std:.2f}" if with_std else f"{d.score:.2f}")
        table.add_row(*row)
        _label_rows(table, name, [a.label for a in agents], breakdown or [], metrics or [])
    table.add_section()
    table.add_row("benchmark", *[f"[b]{a.benchmark_score:.2f}[/b]/{a.max_benchmark_score}" for a in agents])
    table.add_row("LTM score", *[f"{a.ltm_score:,.0f}" for a in agents])
    table.add_row(LTM_TESTS, *[str(a.ltm_score_tests) for a in agents])
    if any(a.total_cost_usd for a in agents):
        table.add_row("cost", *[f"${a.total_cost_usd:.4f}" for a in agents])
    _caution(table, [(a.label, a.benchmark_share, a.ltm_score) for a in agents])
    return table
