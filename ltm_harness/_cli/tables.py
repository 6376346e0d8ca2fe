"""Terminal tables of a run's results (rich): each dataset by the numbers it is quoted by (its headline: F1,
accuracy, ...; ltm_harness/_results/headline.py), the GoodAI benchmark's score, LTM score and gaps only where they
belong, and agents compared on the tests scored for all of them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Collection, Mapping, Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ltm_harness._report.labels import DATA_PREFIX, by_label, count_text, metric_text, split_metrics, unscored_note
from ltm_harness._report.tables import (AgentRow, BreakdownRow, DatasetRow, HeadlineRow, MetricRow, Quoted,
                                        benchmark_text, breakdown_rows, common_benchmark, headline_rows, ltm_caution,
                                        metric_rows)
from ltm_harness._guard.limits import cut_words
from ltm_harness._results.headline import DatasetHeadline, count_word, played_text
from ltm_harness._results.marks import is_imported, kinds_in, legend_lines, mark_text, marks_of, rank_key
from ltm_harness._results.models import AgentSummary, DatasetSummary, LabelSummary, RunSummary, TestResult
from ltm_harness._tokens import plural


LTM_TESTS = "  tests it averages"  # the row under the LTM score: its perfectly answered tests


def _gap(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _cell(value: float | None, scored: int, tests: int, word: str) -> str:
    """A headline number: "-" over nothing scored, "(n of N scored)" beside it over a subset."""
    if value is None:
        return "-"
    return f"{value:.2f}" if scored >= tests else f"{value:.2f} ({scored:,} of {tests:,} {word})"


def _goodai(summary: AgentSummary, judged: bool) -> bool:
    """Every dataset of the agent is the GoodAI benchmark's: its benchmark score and LTM score mean something."""
    return all(d.quoted(judged).spec.goodai for d in summary.datasets)


def agent_table(summary: AgentSummary, judged: bool = False, judge: str | None = None, imported: bool = False) -> Table:
    """An agent's numbers per dataset, each with its protocol marks (`judge`: the run's judge model; `imported`: its
    answers came from a file), and what was played, the cost and the calls under them."""
    table = Table(title=f"agent {escape(summary.agent)}", title_justify="left")
    gaps = any(d.quoted(judged).spec.goodai for d in summary.datasets)
    named = not _goodai(summary, judged)  # a benchmark quoted by its own names: the metric's name beside its value
    columns = [("dataset", "left")] + ([("metric", "left"), ("value", "right")] if named else [("score", "right")])
    columns += [("tests", "right")]
    columns += [("target gap", "right"), ("achieved gap", "right")] if gaps else []
    columns += [("memory distance", "right"), ("unscored/errored", "right")]
    for col, just in columns:
        table.add_column(col, justify=just)  # type: ignore[arg-type]
    played = []
    for d in summary.datasets:
        quoted = d.quoted(judged)
        lead = quoted.values[0] if quoted.values else None
        word = count_word(quoted.spec, quoted.judged)
        value = "-" if lead is None else _cell(lead.value, lead.scored, lead.tests, word)
        shown = mark_text(marks_of(summary, judge, imported, d.dataset))
        value += f" {escape(shown)}" if shown and lead is not None else ""
        row = [escape(d.dataset)] + ([escape(lead.name if lead else "score"), value] if named else [value]) + [str(d.tests)]
        if gaps:
            row += [_gap(d.target_gap), _gap(d.achieved_gap)] if quoted.spec.goodai else ["", ""]
        table.add_row(*row, _gap(d.memory_distance), f"{d.unscored}/{d.errored}")
        if quoted.played is not None and not quoted.spec.goodai:
            played.append(f"{d.dataset}: {played_text(quoted.played, quoted.spec)}")
    caption = ""
    if _goodai(summary, judged):
        caption = (f"benchmark score {benchmark_text(summary.benchmark_score, summary.scored_datasets, len(summary.datasets))}   "
                   f"LTM score {summary.ltm_score:,.0f} tokens over {plural(summary.ltm_tests('gap'), 'perfect test')}"
                   + (f" ({summary.ltm_score_memory_distance:,.0f} on memory distance)"
                      if summary.ltm_score_memory_distance is not None else "") + "   ")
    caption += "".join(f"{escape(p)}   " for p in played)
    table.caption = (caption + f"turns {summary.turns} ({summary.filler_turns} filler)   "
                     f"conversation {summary.conversation_tokens:,} tokens   wall {summary.wall_seconds:.2f} s"
                     + _llm_line(summary))
    table.caption_justify = "left"
    _legend(table, [mark_text(marks_of(summary, judge, imported))])
    return table


def breakdown_tables(summary: AgentSummary, judged: bool) -> list[Table | Text]:
    """For each dataset quoted by more than one number or carrying labels (a benchmark's categories or question
    types): its headline numbers and own metrics, a table per label (a row per value, then the dataset as a whole),
    and a line saying how many were left unscored and why; nothing for other datasets."""
    out: list[Table | Text] = []
    for d in summary.datasets:
        quoted = d.quoted(judged)
        tables: list[Table | Text] = []
        own, _ = split_metrics(d.metrics)
        if len(quoted.values) > 1 or own:
            word = count_word(quoted.spec, quoted.judged)
            metrics = Table(title=f"agent {escape(summary.agent)} · {escape(d.dataset)}: the numbers it is quoted by",
                            title_justify="left")
            metrics.add_column("metric")
            metrics.add_column("value", justify="right")
            for v in quoted.values:
                metrics.add_row(escape(v.name), _cell(v.value, v.scored, v.tests, word))
            for name, value in own.items():
                metrics.add_row(escape(name), metric_text(value))
            tables.append(metrics)
        tables += [_label_table(summary.agent, d, by, values, quoted)
                   for by, values in by_label(d.breakdown or [], quoted.spec).items()]
        out += tables
        note = unscored_note(d, judged)
        if tables and note:
            out.append(Text(f"{summary.agent} · {d.dataset}: {note}"))
    return out


def _label_table(agent: str, d: DatasetSummary, by: str, values: list[LabelSummary], quoted: DatasetHeadline) -> Table:
    """A dataset's numbers by one label (a LoCoMo category, a BEAM ability), each over the tests it scored, and the
    dataset's leading number under them: the mean it is quoted by, never a plain mean standing in for it."""
    lead = quoted.values[0] if quoted.values else None
    word = count_word(quoted.spec, quoted.judged)
    table = Table(title=f"agent {escape(agent)} · {escape(d.dataset)} by {escape(by)}", title_justify="left")
    # the rows are means over each value's tests; a lead that averages per-value means (BEAM's average of the ten
    # abilities) names only the last row
    averaged = bool(quoted.spec.metrics and quoted.spec.metrics[0].by)
    head = "score" if lead is None or averaged else lead.name
    for col, just in ((escape(by), "left"), (escape(head), "right"), ("tests", "right"),
                      ("memory distance", "right"), ("unscored/errored", "right")):
        table.add_column(col, justify=just)  # type: ignore[arg-type]
    for b in values:
        table.add_row(escape(b.value), _cell(b.score if b.scored else None, b.scored, b.tests, word), str(b.tests),
                      _gap(b.memory_distance), f"{b.unscored}/{b.errored}")
    table.add_section()
    if lead is not None:
        overall = _cell(lead.value, lead.scored, lead.tests, word)
    else:
        overall = f"{d.score:.2f} ± {d.std:.2f}" if d.scored else "-"
    label = f"all of {d.dataset}" + (f": {lead.name}" if averaged and lead is not None else "")
    table.add_row(escape(label), overall, str(d.tests), _gap(d.memory_distance),
                  f"{d.unscored}/{d.errored}")
    return table


def _llm_line(summary: AgentSummary) -> str:
    """Cost by role, LLM calls, retries and cache hits, when the agent or the judge used an LLM; what the agent's
    usage leaves out, when its adapter says it cannot count every call."""
    u = summary.usage
    partial = f"\nagent usage partial: {summary.usage_note}" if summary.usage_note else ""
    if not u.calls and not summary.cost_usd:
        return partial
    split = ", ".join(f"{role} ${cost:.4f}" for role, cost in summary.cost_split.items() if cost)
    text = f"\ncost ${summary.cost_usd:.4f}" + (f" ({split})" if split else "")
    if u.calls:
        text += "   LLM calls " + ", ".join(f"{role} {n}" for role, n in u.calls.items())
        retries = sum(u.retries.values())
        cached = sum(u.cached.values())
        text += (f"   retries {retries}" if retries else "") + (f"   cache hits {cached}" if cached else "")
    if u.unpriced_models:
        text += f"   no price known for {', '.join(u.unpriced_models)} (add it to llm.prices)"
    return text + partial


def comparison_table(run: RunSummary, results: Mapping[str, Sequence[TestResult]] | None = None,
                     imported: Collection[str] = (), width: int | None = None) -> Table:
    """Agents side by side, each dataset by its headline numbers; with `results` (agent -> its results), over the
    tests scored for every agent (saying how many), else each over its own. An agent with a protocol mark comes
    after those without (`imported`: the agents whose answers came from a file)."""
    judged = run.judge is not None
    agents = sorted(run.agents, key=lambda a: rank_key(marks_of(a, run.judge, a.agent in imported)))
    run = run.model_copy(update={"agents": agents})
    quoted = [Quoted(run.run_name, a.agent, a.agent, a, (results or {}).get(a.agent, []), judged, run.judge,
                     a.agent in imported) for a in run.agents]
    rows = headline_rows(quoted)
    metrics = [m for a in run.agents for m in metric_rows(run.run_name, a.agent, a.agent, a)]
    breakdown = [b for a in run.agents for b in breakdown_rows(run.run_name, a.agent, a.agent, a)]
    title = "headline numbers per dataset" + (", on the tests scored for every agent" if results else "")
    table = Table(title=f"run {escape(run.run_name)}: {title}", title_justify="left")
    table.add_column("dataset")
    for a in run.agents:
        header, wide = _header(a.agent, _column_room(len(run.agents), width))
        table.add_column(header, justify="right", min_width=wide)
    columns = [a.agent for a in run.agents]
    for name in sorted({d.dataset for a in run.agents for d in a.datasets}):
        _dataset_rows(table, name, columns, rows, metrics, breakdown)
    if all(_goodai(a, judged) for a in run.agents):
        _benchmark_row(table, [a.agent for a in run.agents], rows,
                       [(a.benchmark_score, a.scored_datasets, len(a.datasets)) for a in run.agents])
        table.add_row("LTM score", *[f"{a.ltm_score:,.0f}" for a in run.agents])
        table.add_row(LTM_TESTS, *[str(a.ltm_tests("gap")) for a in run.agents])
        if any(a.ltm_score_memory_distance is not None for a in run.agents):
            table.add_row("LTM score on memory distance", *["-" if a.ltm_score_memory_distance is None
                                                            else f"{a.ltm_score_memory_distance:,.0f}" for a in run.agents])
        _caution(table, [(a.agent, a.benchmark_score / a.max_benchmark_score if a.max_benchmark_score else 0.0,
                          a.ltm_score) for a in run.agents])
    _legend(table, [r.marks for r in rows])
    return table


def _dataset_rows(table: Table, dataset: str, columns: list[str], rows: Sequence[HeadlineRow],
                  metrics: Sequence[MetricRow], breakdown: Sequence[BreakdownRow] = ()) -> None:
    """A dataset's headline numbers in an agents-as-columns table (`columns`: the agents' labels as the rows name
    them): its leading number on the dataset's row, the others under it, then its own named metrics. In a comparison
    the numbers are over the tests scored for every agent ("common" rows), the row saying over how many when that is
    fewer than an agent's, with a row of each agent's own count. A dataset whose headline has no number per label
    value gets its mean per label value (`breakdown`: categories, question types) instead."""
    mine = [r for r in rows if r.dataset == dataset]
    over = "common" if any(r.over == "common" for r in mine) else "own"
    own = {(r.label, r.metric): r for r in mine if r.over == "own"}
    cells = {(r.label, r.metric): r for r in mine if r.over == over}
    word = mine[0].word if mine else "scored"
    names = list(dict.fromkeys(r.metric for r in mine if r.over == over))
    for i, metric in enumerate(names):
        found = [cells.get((c, metric)) for c in columns]
        label = (dataset if mine and mine[0].goodai and metric == "score" else f"{dataset} · {metric}") if i == 0 \
            else f"  {metric}"
        table.add_row(escape(label), *["-" if r is None else _cell(r.value, r.scored, r.tests, word)
                                       + (f" {escape(r.marks)}" if r.marks and i == 0 else "") for r in found])
        if i == 0 and over == "common":
            counts = [own.get((c, metric)) for c in columns]
            if any(o is not None and o.scored < o.tests for o in counts):
                common = max((r.tests for r in found if r is not None), default=0)
                table.add_row(escape(f"  {word} by all"),
                              *["-" if o is None else f"{common:,} of {o.tests:,}" for o in counts])
                table.add_row(escape(f"  {word} by each"),
                              *["-" if o is None else f"{o.scored:,} of {o.tests:,}" for o in counts])
    if not any(" · " in name for name in names):
        found_b = {(b.label, b.by, b.value): b for b in breakdown if b.dataset == dataset}
        for by, value in dict.fromkeys((b.by, b.value) for b in breakdown if b.dataset == dataset):
            table.add_row(escape(f"  {by} {value}"), *["-" if (b := found_b.get((c, by, value))) is None or not b.scored
                                                       else f"{b.score:.2f}" for c in columns])
    agents = [m for m in metrics if m.dataset == dataset and not m.metric.startswith(DATA_PREFIX)]
    named = {(m.label, m.metric): m.value for m in agents}
    for metric in dict.fromkeys(m.metric for m in agents):
        table.add_row(escape(f"  {metric}"), *[metric_text(named.get((column, metric))) for column in columns])


def _benchmark_row(table: Table, columns: list[str], rows: Sequence[HeadlineRow],
                   own: list[tuple[float, int, int]]) -> None:
    """The GoodAI benchmark score per agent: over the tests scored for every agent when compared (the sum of the
    datasets' numbers above it, the row saying how many datasets that is), else each agent's own."""
    common = [common_benchmark(rows, column) for column in columns]
    if all(c is not None for c in common):
        summed = [c for c in common if c is not None]
        n, total = summed[0][1], summed[0][2]
        label = "[b]benchmark[/b]" + (f" ({n} of {total} datasets scored by all)" if n < total else "")
        table.add_row(label, *[f"[b]{s:.2f}[/b]/{k}" for s, k, _ in summed])
    else:
        table.add_row("[b]benchmark[/b]", *[f"[b]{escape(benchmark_text(*mine))}[/b]" for mine in own])


def _caution(table: Table, agents: list[tuple[str, float, float]]) -> None:
    """The LTM score's one-line explanation under the table, when it ranks the agents against the benchmark."""
    note = ltm_caution(agents)
    if note:
        table.caption, table.caption_justify = escape(note), "left"


def print_run(run: RunSummary, console: Console | None = None,
              results: Mapping[str, Sequence[TestResult]] | None = None, folder: Path | None = None) -> None:
    """Each agent's tables, then, with several agents, the comparison (`results`, agent -> its results: over the tests
    scored for every agent; `folder`: the run's, where imported agents are known)."""
    console = console or Console()
    imported = {a.agent for a in run.agents if folder is not None and is_imported(folder, a.agent)}
    for agent in run.agents:
        console.print(agent_table(agent, run.judge is not None, run.judge, agent.agent in imported))
        for part in breakdown_tables(agent, run.judge is not None):
            console.print(part)
    if len(run.agents) > 1:
        console.print(comparison_table(run, results, imported, console.width))
    for line in data_lines(run.agents):
        console.print(Text(line))


def data_lines(agents: Sequence[AgentSummary]) -> list[str]:
    """Per dataset, the known errors counted in its data file (the same for every agent, so said once)."""
    out: dict[str, str] = {}
    for a in agents:
        for d in a.datasets:
            _, data = split_metrics(d.metrics)
            if data and d.dataset not in out:
                counts = ", ".join(f"{k.removeprefix(DATA_PREFIX)} {count_text(v)}" for k, v in data.items())
                out[d.dataset] = f"{d.dataset} · known errors in its data file (mended or left out): {counts}"
    return list(out.values())


def report_table(title: str, agents: list[AgentRow], datasets: list[DatasetRow], marks: dict[str, str] | None = None,
                 plain: bool = False, breakdown: list[BreakdownRow] | None = None,
                 metrics: list[MetricRow] | None = None, headline: list[HeadlineRow] | None = None,
                 width: int | None = None) -> Table:
    """The table of a report or comparison: a row per dataset by its headline numbers, over the tests scored for
    every agent (under it its other headline numbers and its own metrics), a column per agent (labelled as in the
    page), then, for the GoodAI benchmark's datasets, the benchmark score and the LTM score, and, when anything was
    priced, the cost. `marks`: a note per label (how its run differs from the first); `plain`: ASCII lines, for a
    pipe or a file; `width`: the console's, which the agents' columns share (their names wrapped, never mid-word)."""
    from rich import box

    marks = marks or {}
    names = sorted({d.dataset for d in datasets})
    table = Table(title=escape(title), title_justify="left", box=box.ASCII if plain else box.HEAVY_HEAD)
    table.add_column("dataset", no_wrap=True, min_width=min(max((len(n) for n in names), default=7), 24))
    agents = sorted(agents, key=lambda a: bool(a.marks))  # a marked agent never before one without (results/marks.py)
    for a in agents:
        mark = marks.get(a.label)
        header, wide = _header(a.label, _column_room(len(agents), width))
        table.add_column(header + (f" ({escape(mark)})" if mark else ""), justify="right", min_width=wide)
    for name in names:
        _dataset_rows(table, name, [a.label for a in agents], headline or _plain_rows(datasets, name), metrics or [],
                      breakdown or [])
    goodai = all(r.goodai for r in headline or []) and bool(names)
    if goodai:
        table.add_section()
        _benchmark_row(table, [a.label for a in agents], headline or [],
                       [(a.benchmark_score, a.benchmark_datasets_scored, a.max_benchmark_score) for a in agents])
        table.add_row("LTM score", *[f"{a.ltm_score:,.0f}" for a in agents])
        table.add_row(LTM_TESTS, *[str(a.ltm_score_tests) for a in agents])
    if any(a.total_cost_usd for a in agents):
        table.add_row("cost", *[f"${a.total_cost_usd:.4f}" for a in agents])
    if goodai:
        _caution(table, [(a.label, a.benchmark_share, a.ltm_score) for a in agents])
    _legend(table, [a.marks for a in agents] + [r.marks for r in headline or []])
    return table


MAX_HEADER = 40  # an agent's label longer than this is cut (at a word boundary) in a column's header


def _column_room(agents: int, width: int | None) -> int:
    """How wide an agent's column can be so that the table fits `width` (the dataset's column and the borders
    first); MAX_HEADER when the width is not known."""
    if width is None:
        return MAX_HEADER
    return max(8, min(MAX_HEADER, (width - 26 - 3 * (agents + 1)) // max(agents, 1)))


def _wrap_name(label: str, room: int) -> list[str]:
    """A name in lines of at most `room` characters, broken at spaces or after a separator (-, :, @, /, _, .) and
    never inside a word; a part still wider than `room` is cut where the limit falls, with "..."."""
    lines, line = [], ""
    for word in label.split():
        for k, part in enumerate(re.findall(r"[^-:@/_.]+[-:@/_.]*|[-:@/_.]+", word)):
            glue = " " if line and k == 0 else ""
            if line and len(line) + len(glue) + len(part) > room:
                lines.append(line)
                line, glue = "", ""
            line += glue + part
    lines.append(line)
    return [cut_words(x, room) for x in lines if x] or [label]


def _header(label: str, room: int = MAX_HEADER) -> tuple[str, int]:
    """An agent's column header, and the column's width: its label wrapped to `room` (`_wrap_name`)."""
    lines = _wrap_name(label, room)
    return escape("\n".join(lines)), max(len(line) for line in lines)


def _legend(table: Table, marks: Sequence[str]) -> None:
    """The legend of the protocol marks in the table, under it (after any caption)."""
    lines = legend_lines(kinds_in(marks))
    if lines:
        caption = "\n".join(escape(line) for line in lines)
        table.caption = f"{table.caption}\n{caption}" if table.caption else caption
        table.caption_justify = "left"


def _plain_rows(datasets: Sequence[DatasetRow], name: str) -> list[HeadlineRow]:
    """Headline rows made from dataset rows alone (the dataset's mean score, each agent over its own tests)."""
    return [HeadlineRow(run=d.run, agent=d.agent, label=d.label, dataset=d.dataset, metric=d.metric, value=d.score,
                        scored=d.scored, tests=d.tests, word="scored", lead=True, over="own", goodai=True)
            for d in datasets if d.dataset == name]
