"""The report as one self-contained HTML page: tables and SVG charts rendered here, per-test details as
JSON blocks that the inline script turns into text on demand.

Every string from a run (agent names, replies, reasons, dataset names) is escaped here, or put into
JSON blocks with `<`, `>` and `&` escaped and shown by the script as text. A Content-Security-Policy
allows no network request and runs only the page's own script (by its hash), so even markup that
slipped through could neither load anything nor execute.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from ltm_harness._results.causes import cause_lines, group_causes
from ltm_harness._report.assets import CSS, JS
from ltm_harness._report.csp import content_security_policy
from ltm_harness._report.conversation import CallStats, SessionLog
from ltm_harness._report.conversation_view import MAX_TEXT, Histories, benchmark_view, clip as _clip  # noqa: F401
from ltm_harness._report.lazy import INLINE_TESTS_BYTES, LazyParts
from ltm_harness._report.breakdown import breakdown_section
from ltm_harness._report.html import esc as _e, num as _num, protocol_marks, score_class as _score_class
from ltm_harness._report.load import RunData
from ltm_harness._report.colours import colour_css, slot_colour
from ltm_harness._report.compat import Difference
from ltm_harness._report.imported_section import NAV as IMPORTED_NAV, imported_section
from ltm_harness._report.stats_section import NAV as STATS_NAV, report_statistics, statistics_section
from ltm_harness._stats import Statistics
from ltm_harness._report.curves import (GAP, MAX_POINTS, MEMORY_DISTANCE, QUANTITIES, Quantity, dataset_points,
                                        has_values, label_points, xy)
from ltm_harness._report.labels import by_label
from ltm_harness._report.svg import Bar, bar_chart, money
from ltm_harness._report.svg_cost import cost_chart
from ltm_harness._report.svg_score import MIN_BIN, Series, score_panel, x_range
from ltm_harness._report.summary import agent_legend, header, summary_table, swatch, swatch_class
from ltm_harness._report.tables import (COST_ROLES, Entry, Tables, benchmark_text, sorted_results,
                                        sort_key_of_test)
from ltm_harness._results.models import DatasetSummary, GapPoint, TestResult
from ltm_harness._store.layout import RunFolder
from ltm_harness._tokens import plural


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f} ms"


def _json_block(block_id: str, obj: Any) -> str:
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    return f'<script type="application/json" id="{_e(block_id)}">{text}</script>'


def _expected(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


# -- per-test data ----------------------------------------------------------------------------------
def payload_of_test(r: TestResult, session: SessionLog | None, histories: Histories | None = None,
                    definitions: Path | None = None, taken: set[int] | None = None, spans: bool = True) -> dict[str, Any]:
    """One test's details; a benchmark's test (history the agent only took in) shows its history and questions
    (conversation_view), any other its own lines with what came between collapsed. `spans`: its dataset is the GoodAI
    benchmark's, where the memory span and the information gaps (target, achieved, error) mean something (a benchmark
    asked question by question: left out)."""
    uid = f"{r.dataset}/{r.example_id}"
    view = None
    if session is not None and histories is not None and definitions is not None:
        view = benchmark_view(r, session, histories, definitions, set() if taken is None else taken)
    conv = session.conversation(uid, r) if session is not None and view is None else []
    for item in conv:
        if item["t"] == "line":
            item["user"], item["reply"] = _clip(item["user"]), _clip(item["reply"])
    return {
        "id": uid, "status": r.status, "score": r.score, "max": r.max_score, "norm": r.normalized,
        "span": r.memory_span if spans else None, "target": r.target_gap if spans else None,
        "achieved": r.achieved_gap if spans else None,
        "turns": [r.start_turn, r.end_turn], "tokens": r.tokens,
        "questions": [_clip(q) for q in r.questions], "responses": [_clip(x) for x in r.responses],
        "expected": [_clip(_expected(x)) for x in r.expected], "reasons": [_clip(x) for x in r.reasons],
        "verdicts": [{"question": _clip(v.question), "score": v.score, "reason": _clip(v.reason), "model": v.model,
                      "prompt_hash": v.prompt_hash, "raw": _clip(v.raw), "cached": v.cached} for v in r.verdicts],
        "gaps": [{"line": g.line, "target": g.target_tokens, "achieved": g.achieved_tokens} for g in r.gaps] if spans else [],
        "conv": conv, **(view or {}),
    }


def agent_payload(entry: Entry, histories: Histories | None = None) -> dict[str, Any]:
    by_test: dict[str, SessionLog] = {}
    for session in entry.agent.sessions:
        for uid in session.tests():
            by_test.setdefault(uid, session)
    judged = entry.run.summary.judge is not None
    goodai = {d.dataset for d in entry.agent.summary.datasets if d.quoted(judged).spec.goodai}
    definitions = RunFolder(entry.run.folder).definitions
    taken: dict[str, set[int]] = {}  # per test, the question turns shown for its results so far
    tests = []
    for r in sorted_results(entry):
        uid = f"{r.dataset}/{r.group or r.example_id}"  # a result scoring one question of a test: that test's log
        tests.append(payload_of_test(r, by_test.get(uid), histories, definitions, taken.setdefault(uid, set()),
                                     r.dataset in goodai))
    return {"label": entry.label, "tests": tests}


def index_payload(entries: Sequence[Entry]) -> dict[str, Any]:
    """Every test id with each agent's normalised score and status (null where the agent has no such test)."""
    per_agent = [{f"{r.dataset}/{r.example_id}": r for r in e.agent.results} for e in entries]
    ids = sorted({uid for results in per_agent for uid in results},
                 key=lambda uid: sort_key_of_test(*uid.split("/", 1)) if "/" in uid else (uid, (), ""))
    tests = []
    for uid in ids:
        found = [results.get(uid) for results in per_agent]
        tests.append([uid, [r.normalized if r is not None and r.status == "ok" else None for r in found],
                      [r.status if r is not None else None for r in found]])
    return {"agents": [{"key": e.key, "label": e.label, "colour": swatch_class(e)} for e in entries],
            "tests": tests}


# -- sections ---------------------------------------------------------------------------------------
def _problems(runs: Sequence[RunData]) -> str:
    items = []
    for run in runs:
        prefix = f"run {run.name}: " if len(runs) > 1 else ""
        items += [f'<p class="err">{_e(prefix)}agent {_e(agent)} did not finish: {_e(msg)}</p>'
                  for agent, msg in run.errors.items()]
        items += [f'<p class="warn">{_e(prefix + w)}</p>' for w in run.warnings]
    return f'<section id="problems"><h2>Problems</h2>{"".join(items)}</section>' if items else ""


def _series(entries: Sequence[Entry], points: Sequence[dict[str, list[GapPoint]]], quantity: Quantity,
            dataset: str | None = None) -> tuple[list[Series], bool]:
    """Series for a score panel (of one dataset, or of all), and whether every test's point is drawn (not beyond
    MAX_POINTS: then the points of bins too small for a mean only)."""
    series = [Series(e.label, slot_colour(e.slot), xy(by, quantity, dataset), e.variant) for e, by in zip(entries, points)]
    return series, sum(len(s.points) for s in series) <= MAX_POINTS


def _panels(entries: Sequence[Entry], points: Sequence[dict[str, list[GapPoint]]], quantity: Quantity,
            datasets: Sequence[str]) -> str:
    """The pooled panel of every test, then one small panel per dataset, all against `quantity`."""
    series, every = _series(entries, points, quantity)
    bounds = x_range(series)  # every panel on the x range of all of them: comparable by eye
    pooled = score_panel(f"score against {quantity.name}: all datasets", series, quantity.axis, width=620, height=300,
                         draw_points=every, empty=quantity.missing, bounds=bounds)
    small = []
    for name in datasets:
        series, each = _series(entries, points, quantity, name)
        small.append(score_panel(f"{name}: score vs {quantity.short}", series, quantity.axis.replace(" (tokens, log scale)", " (tokens)"),
                                 width=300, height=210, draw_points=each, empty=quantity.missing, bounds=bounds))
    note = "" if every else (f'<p class="note">Many tests: only the mean score of each range of {quantity.name}s and '
                             "the tests of sparse ranges are drawn; each test's score is in the tables.</p>")
    return f'<h3>Score against {_e(quantity.name)}</h3><div class="charts panels">{pooled}{"".join(small)}</div>{note}'


def _charts(entries: Sequence[Entry], tables: Tables) -> str:
    datasets = sorted({d.dataset for e in entries for d in e.agent.summary.datasets})
    goodai = all(r.goodai for r in tables.headline)  # the GoodAI benchmark's aggregate belongs to its datasets alone
    overview = bar_chart("benchmark score (share of max)",
                         [Bar(e.label, slot_colour(e.slot), row.benchmark_share, 0.0,
                              f" ({row.benchmark_score:.2f} of {row.benchmark_datasets_scored})", e.variant)
                          for e, row in zip(entries, tables.agents)]) if goodai else ""
    per_dataset = []
    for name in datasets:
        bars, metric = [], "score"
        for e in entries:
            d = next((d for d in e.agent.summary.datasets if d.dataset == name), None)
            quoted = d.quoted(e.run.summary.judge is not None) if d is not None else None
            lead = quoted.values[0] if quoted is not None and quoted.values else None
            if d is None or lead is None or quoted is None or quoted.spec.goodai:  # the mean score, ± its std
                bars.append(Bar(e.label, slot_colour(e.slot), None if d is None else d.score,
                                0.0 if d is None else d.std, "" if d is None else f" over {d.scored} scored tests",
                                e.variant))
                continue
            metric = lead.name  # the number the benchmark is quoted by (its headline), as everywhere else
            bars.append(Bar(e.label, slot_colour(e.slot), lead.value, 0.0,
                            f" over {lead.scored:,} of {lead.tests:,} questions", e.variant))
        per_dataset.append(bar_chart(name if metric == "score" else f"{name} · {metric}", bars))
    # A benchmark quoted per category or type is drawn per category (By category and type), never pooled here.
    pooled = {d.dataset for e in entries for d in e.agent.summary.datasets
              if d.quoted(e.run.summary.judge is not None).spec.goodai}
    points = [{k: v for k, v in dataset_points(e.agent).items() if k in pooled} for e in entries]
    panels = "".join(_panels(entries, points, q, [n for n in datasets if n in pooled])
                     for q in QUANTITIES if pooled and (q is GAP or has_values(points, q)))
    cost = ""
    if any(row.total_cost_usd > 0 for row in tables.agents):  # drawn only when something was priced
        chart = cost_chart("benchmark score against cost",
                           [(e.label, slot_colour(e.slot), row.total_cost_usd, row.benchmark_share)
                            for e, row in zip(entries, tables.agents)])
        cost = f'<h3>Score against cost</h3><div class="charts">{chart}</div>'
    return (f'<section id="charts"><h2>Charts</h2>{agent_legend(entries)}'
            f'<h3>Score per dataset</h3><div class="charts">{overview}{"".join(per_dataset)}</div>'
            f"{panels}"
            '<p class="note">Score panels: a dot per scored test (errored tests count 0) at its longest achieved gap '
            "(or its memory distance); "
            "a bigger dot is several tests on one spot, and agents on the same spot are set side by side. Tests are "
            f"binned by the x quantity (each bin twice as wide as the one before); a bin of at least {MIN_BIN} tests also gets "
            "its mean (a diamond), joined by a line to the neighbouring bins' means. Hover a bar or a point for its "
            f"numbers.</p>{cost}</section>")


def _calls_table(rows: list[tuple[str, str, CallStats]]) -> str:
    head = ('<tr><th>agent</th><th>role</th><th class="num">calls</th><th class="num">prompt tokens</th>'
            '<th class="num">completion tokens</th><th class="num">retries</th><th class="num">cached</th>'
            '<th class="num">mean latency</th><th class="num">p95 latency</th><th class="num">cost</th><th>models</th></tr>')
    body = "".join(
        f'<tr><td>{_e(label)}</td><td>{_e(role)}</td><td class="num">{_num(c.calls)}</td>'
        f'<td class="num">{_num(c.prompt_tokens)}</td><td class="num">{_num(c.completion_tokens)}</td>'
        f'<td class="num">{_num(c.retries)}</td><td class="num">{_num(c.cached)}</td>'
        f'<td class="num">{_ms(c.mean_latency_ms)}</td><td class="num">{_ms(c.p95_latency_ms)}</td>'
        f'<td class="num">{money(c.cost_usd)}</td><td>{_e(", ".join(sorted(c.models)))}</td></tr>'
        for label, role, c in rows)
    return f'<div class="scroll"><table>{head}{body}</table></div>'


def _usage(entries: Sequence[Entry], tables: Tables) -> str:
    split_rows = [(e, row) for e, row in zip(entries, tables.agents) if any(e.agent.cost_split.values())]
    call_rows = [(e.label, role, stats) for e in entries for role, stats in sorted(e.agent.calls().items())]
    if not split_rows and not call_rows:
        return ""
    parts = ['<section id="usage"><h2>LLM calls and cost</h2>']
    if split_rows:
        head = ("<tr><th>agent</th>" + "".join(f'<th class="num">{r}</th>' for r in COST_ROLES) +
                '<th class="num">other</th><th class="num">total</th></tr>')
        body = []
        for e, row in split_rows:
            split = e.agent.cost_split
            other = sum(v for k, v in split.items() if k not in COST_ROLES)
            body.append(f"<tr><td>{_e(e.label)}</td>" + "".join(f'<td class="num">{money(split.get(r, 0.0))}</td>' for r in COST_ROLES)
                        + f'<td class="num">{money(other)}</td><td class="num"><b>{money(row.total_cost_usd)}</b></td></tr>')
        parts.append(f'<h3>Cost by role</h3><div class="scroll"><table>{head}{"".join(body)}</table></div>')
    if call_rows:
        parts.append("<h3>Calls by role</h3>" + _calls_table(call_rows))
    parts.append("</section>")
    return "".join(parts)


def _by_value_charts(e: Entry, d: DatasetSummary) -> str:
    """A benchmark's score against memory distance for one agent, a line per value of each label it is broken down
    by (LoCoMo: one per category), never pooled across them."""
    charts = []
    for by, found in by_label(d.breakdown or [], d.quoted(e.run.summary.judge is not None).spec).items():
        points = [(b.value, label_points(e.agent, d.dataset, by, b.value)) for b in found]
        quantity = MEMORY_DISTANCE if has_values([p for _, p in points], MEMORY_DISTANCE) else GAP
        series = [Series(value, slot_colour(i), xy(p, quantity, d.dataset)) for i, (value, p) in enumerate(points)]
        charts.append(score_panel(f"{e.label} · {d.dataset}: score against {quantity.name}, a line per {by}", series,
                                  quantity.axis, width=520, height=240,
                                  draw_points=sum(len(s.points) for s in series) <= MAX_POINTS, empty=quantity.missing,
                                  legend=True))
    return "".join(charts)


def _own_score(d: DatasetSummary, judged: bool) -> str:
    """A dataset's cell in an agent's own table: the GoodAI benchmark's mean ± std, another benchmark's own number
    (its headline's lead: F1, the average of the ten abilities), as everywhere else."""
    quoted = d.quoted(judged)
    if quoted.spec.goodai or not quoted.values:
        return (f'<td class="num {_score_class(d.score)}">{d.score:.2f} ± {d.std:.2f}</td>' if d.score is not None
                else '<td class="num">–</td>')
    lead = quoted.values[0]
    if lead.value is None:
        return '<td class="num">–</td>'
    return f'<td class="num {_score_class(lead.value)}">{_e(lead.name)} {lead.value:.2f}</td>'


def _failed_tries(n: int) -> str:
    """The tries of turns that got no reply, when there were any (wall-clock history: the logs' side files)."""
    if not n:
        return ""
    return f" · {_num(n)} failed {'try' if n == 1 else 'tries'} of turns, asked again or failed"


def _agent_section(e: Entry, row: Any, open_: bool, tests: str) -> str:
    """An agent's section; `tests`: the block of its tests' details (empty when they are a file beside the page)."""
    s = e.agent.summary
    judged = e.run.summary.judge is not None
    if all(d.quoted(judged).spec.goodai for d in s.datasets):
        numbers = (f"benchmark {benchmark_text(s.benchmark_score, s.scored_datasets, len(s.datasets))} · "
                   f"LTM {_num(s.ltm_score)} tokens · ")
    else:
        leads = [(d.dataset, d.quoted(judged).values[0]) for d in s.datasets if d.quoted(judged).values]
        numbers = "".join(f"{d} {v.name} {'–' if v.value is None else f'{v.value:.2f}'} · " for d, v in leads)
    parts = [f'<details class="agent" id="{e.key}"{" open" if open_ else ""}><summary>{swatch(e)}{_e(e.label)} — '
             f"{_e(numbers)}{plural(row.tests, 'test')}{protocol_marks(e.marks)}</summary>"]
    parts.append(f'<p class="meta">run {_e(e.run.name)} · folder {_e(e.agent.folder)} · {_num(s.turns)} turns '
                 f"({_num(s.filler_turns)} filler) · {_num(s.conversation_tokens)} conversation tokens · "
                 f"agent tokens {_num(s.agent_prompt_tokens)} prompt + {_num(s.agent_completion_tokens)} completion · "
                 f"cost {money(row.total_cost_usd)} · wall {s.wall_seconds:,.2f} s"
                 f"{_failed_tries(e.agent.failed_tries)}</p>")
    if s.usage_note:
        parts.append(f'<p class="note">Agent tokens and cost are partial: {_e(s.usage_note)}.</p>')
    if e.agent.earlier:
        parts.append('<p class="note">Not in this run\'s summary.json: its results were left in the run folder by an '
                     "earlier invocation on the same tests.</p>")
    parts += [f'<p class="warn">{_e(w)}</p>' for w in e.agent.warnings]
    parts += [f'<p class="warn causes">{_e(line)}</p>' for line in cause_lines(group_causes(e.agent.results), "report")]
    own = {d.dataset for d in s.datasets if d.quoted(judged).spec.goodai}  # benchmarks: a line per category, below
    head = ('<tr><th>dataset</th><th class="num">score</th><th class="num">tests</th><th class="num">unscored</th>'
            '<th class="num">errored</th>' + ('<th class="num">target gap</th><th class="num">achieved gap</th>'
                                              if own else "") + '<th class="num">memory distance</th></tr>')
    body = "".join(
        f'<tr><td>{_e(d.dataset)}</td>' + _own_score(d, judged)
        + f'<td class="num">{d.tests}</td><td class="num">{d.unscored}</td><td class="num">{d.errored}</td>'
        + (f'<td class="num">{_num(d.target_gap)}</td><td class="num">{_num(d.achieved_gap)}</td>' if own else "")
        + f'<td class="num">{_num(d.memory_distance)}</td></tr>'
        for d in s.datasets)
    series, every = _series([e], [{k: v for k, v in dataset_points(e.agent).items() if k in own}], GAP)
    chart = score_panel(f"{e.label}: score against achieved gap", series, GAP.axis, width=520, height=240,
                        draw_points=every, empty=GAP.missing) if own else ""
    by_value = "".join(_by_value_charts(e, d) for d in s.datasets if not d.quoted(judged).spec.goodai)
    parts.append(f'<div class="charts"><div class="scroll"><table>{head}{body}</table></div>{chart}{by_value}</div>')
    filler_turns = sum(x.filler_turns for x in e.agent.sessions)
    if filler_turns:
        filler_tokens = sum(x.filler_tokens for x in e.agent.sessions)
        share = filler_tokens / s.conversation_tokens if s.conversation_tokens else 0.0
        sample = next((x.filler_sample for x in e.agent.sessions if x.filler_sample), "")
        parts.append(f"<details><summary>Filler: {_num(filler_turns)} messages, {_num(filler_tokens)} tokens with the "
                     f"replies ({share:.0%} of the conversation); not shown in the tests' conversations. "
                     f'An example</summary><pre class="text">{_e(_clip(sample))}</pre></details>')
    calls = e.agent.calls()
    if calls:
        parts.append("<h3>LLM calls</h3>" + _calls_table([(e.label, role, c) for role, c in sorted(calls.items())]))
    parts.append(f'<h3>Tests</h3><div class="browser" data-agent="{e.key}">'
                 '<noscript>The per-test details need JavaScript; the tables next to this file hold every '
                 "test's score.</noscript></div>")
    parts.append(tests)
    parts.append("</details>")
    return "".join(parts)


def _tests_blocks(entries: Sequence[Entry], parts: LazyParts | None) -> list[str]:
    """Each agent's tests' details: in the page, or (all of them past INLINE_TESTS_BYTES) files beside it."""
    histories = Histories(parts) if parts is not None else None
    payloads = [agent_payload(e, histories) for e in entries]
    blocks = [_json_block(f"data-{e.key}", payload) for e, payload in zip(entries, payloads)]
    if parts is None or sum(len(b) for b in blocks) <= INLINE_TESTS_BYTES:
        return blocks
    for e, payload in zip(entries, payloads):
        parts.add_tests(e.key, payload)
    return ["" for _ in entries]


def build_page(title: str, runs: Sequence[RunData], entries: Sequence[Entry], tables: Tables,
               found: Sequence[Difference] = (), stats: Statistics | None = None,
               parts: LazyParts | None = None) -> str:
    """The page; `found`: how the runs of a comparison differ (compared anyway, with --force), marked in it;
    `parts`: what the page loads when a reader opens it (benchmark histories, a big run's tests), written beside it
    by the caller (LazyParts.write); without, everything is in the page but the histories."""
    css = CSS + colour_css(e.slot for e in entries)
    nav = ['<a href="#summary">agents</a>']
    breakdown = breakdown_section(entries)
    if breakdown:
        nav.append('<a href="#breakdown">by category and type</a>')
    statistics = statistics_section(stats if stats is not None else report_statistics(entries))
    nav += [STATS_NAV] if statistics else []
    imported = imported_section(entries)
    nav += [IMPORTED_NAV] if imported else []
    nav.append('<a href="#charts">charts</a>')
    usage = _usage(entries, tables)
    if usage:
        nav.append('<a href="#usage">LLM calls and cost</a>')
    nav += ['<a href="#tests">tests</a>', '<a href="#agents">per agent</a>']
    tests = _tests_blocks(entries, parts)
    agents = "".join(_agent_section(e, row, len(entries) == 1, block)
                     for e, row, block in zip(entries, tables.agents, tests))
    lazy = _json_block("report-lazy", parts.block()) if parts is not None and parts.files else ""
    csp = content_security_policy(JS, css, own_files=bool(lazy))
    matrix = ('<section id="tests"><h2>Tests</h2><p class="note">Each test\'s normalised score per agent '
              "(unscored and errored tests are named). Click a score for the test's questions, replies, reasons "
              'and conversation.</p><div id="matrix"><noscript>This table needs JavaScript.</noscript></div>'
              + _json_block("report-index", index_payload(entries)) + "</section>")
    return ("<!DOCTYPE html>\n"
            f'<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{_e(title)}</title><style>{css}</style></head><body>"
            f"{header(title, runs, entries, found)}<nav>{''.join(nav)}</nav><main>"
            f"{summary_table(entries, tables, found)}{_problems(runs)}{breakdown}{statistics}{imported}{_charts(entries, tables)}{usage}{matrix}"
            f'<section id="agents"><h2>Per agent</h2>{agents or "<p class=note>No agent finished.</p>"}</section>{lazy}'
            f"</main><script>{JS}</script></body></html>\n")
