"""`results/index.html`: every run of a results folder on one page, like a log viewer's list: its date, state,
agents with their scores, judge, and a link to its report; comparisons made there below. Offline and self-contained
(inline style and script, allowed by hash, nothing loaded), sortable by any column and filtered as one types.

It is rewritten whole (never half-written, also when two processes finish at once) after every run, re-scoring,
report and comparison, reading only the summaries that changed since the last time (`index_rows.KnownRows`: the
rule is there). A folder that cannot be read is listed as damaged with the reason; nothing in a folder stops the
index from being written.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import NamedTuple

from ltm_harness._errors import LTMError
from ltm_harness._guard.limits import cut_words
from ltm_harness._report.csp import content_security_policy
from ltm_harness._report.colours import colour_css, folder_slots
from ltm_harness._report.html import marks_legend, protocol_marks
from ltm_harness._report.index_rows import AgentCell, KnownRows, RowRecord, signature
from ltm_harness._results.marks import KINDS, Mark, is_imported, marks_of, rank_key
from ltm_harness._results.check import as_results_say
from ltm_harness._results.models import AgentSummary, RunSummary
from ltm_harness._results.outputs import read_results
from ltm_harness._store.files import read_run_file, write_shared_text
from ltm_harness._store.layout import COMPARE_PREFIX, SUITES, RunFolder, results_index
from ltm_harness._tokens import plural

class Written(NamedTuple):
    """A run folder and the summary this process has just written there, from the results it holds."""

    folder: Path
    summary: RunSummary


MAX_REASON = 300  # characters of a damaged folder's reason shown
DISTRUSTED = ('<p class="note">The rows the earlier index remembered were not as ltm-harness wrote them on this machine '
              "(edited, damaged, or from elsewhere): they were dropped and every folder was read again.</p>")


@dataclass
class AgentScore:
    name: str
    score: float
    max_score: int
    slot: int = 0  # its colour on the index page: by name, one per name (colours.page_slots)
    metric: str | None = None  # a benchmark's leading number's name (F1, accuracy): score is that number, or -1 (none)
    marks: list[Mark] = field(default_factory=list)  # its protocol marks (ltm_harness/_results/marks.py)


@dataclass
class IndexRow:
    """One folder of the results folder, as the index lists it."""

    name: str
    link: str  # relative to the index: the report, else the folder
    state: str  # finished, unfinished, damaged
    when: float  # seconds since the epoch: when its summary (or, unfinished, the folder) was last written
    kind: str = "run"  # run, aiq, suite
    agents: list[AgentScore] = field(default_factory=list)
    judge: str | None = None
    note: str = ""  # why it is damaged, which agents did not finish, ...


def _when(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _row(folder: RunFolder, root: Path, written: RunSummary | None = None) -> IndexRow | None:
    """The index's row for one folder (None: not a run's folder). `written`: the summary this process has just
    written there, from the results it holds, so neither is read back."""
    rel = folder.path.relative_to(root).as_posix()
    kind = "aiq" if folder.aiq_report.is_file() else "suite" if folder.path.parent.name == SUITES else "run"
    link = f"{rel}/{folder.report.name}" if folder.report.is_file() else f"{rel}/"
    if folder.summary.is_file():
        try:
            summary = written or read_run_file(folder.summary, RunSummary)
        except LTMError as exc:
            return IndexRow(folder.name, link, "damaged", _when(folder.summary), kind, note=cut_words(str(exc), MAX_REASON))
        except (OSError, ValueError, RecursionError) as exc:  # whatever is in the file, the index is still written
            return IndexRow(folder.name, link, "damaged", _when(folder.summary), kind,
                            note=cut_words(f"{folder.summary} cannot be read: {exc}", MAX_REASON))
        checked, disagreed = [], []
        for a in summary.agents:  # the numbers are the results' own (a summary edited or damaged says otherwise)
            agent = folder.agent(a.agent)
            if written is None and agent.results.is_file():
                a, line = as_results_say(a, read_results(agent))
                disagreed += [line] if line else []
            checked.append(a)
        agents = sorted((_agent_score(a, summary.judge, is_imported(folder.path, a.agent)) for a in checked),
                        key=lambda a: rank_key(a.marks))  # a marked agent after those without
        note = "; ".join([f"{agent} did not finish" for agent in summary.errors] + disagreed)
        return IndexRow(summary.run_name, link, "finished", _when(folder.summary), kind, agents, summary.judge,
                        cut_words(note, MAX_REASON))
    if folder.is_run() or any(a.has_logs() for a in folder.agent_folders()):
        return IndexRow(folder.name, f"{rel}/", "unfinished", _when(folder.path), kind,
                        note="no summary.json: interrupted or still running; `run --resume` continues it")
    return None


def _record(row: IndexRow) -> RowRecord:
    return RowRecord(name=row.name, link=row.link, state=row.state, when=row.when, kind=row.kind, judge=row.judge,
                     note=row.note, agents=[AgentCell(name=a.name, score=a.score, max_score=a.max_score, metric=a.metric,
                                                      marks=[(m.kind, m.detail) for m in a.marks]) for a in row.agents])


def _from_record(r: RowRecord) -> IndexRow:
    agents = [AgentScore(a.name, a.score, a.max_score, metric=a.metric,
                         marks=[Mark(kind, detail) for kind, detail in a.marks if kind in KINDS]) for a in r.agents]
    return IndexRow(r.name, r.link, r.state, r.when, r.kind, agents, r.judge, r.note)


def _same_folder(path: Path, other: Path) -> bool:
    return path.name == other.name and path.resolve() == other.resolve()


def index_rows(root: Path, known: KnownRows | None = None, written: Written | None = None) -> list[IndexRow]:
    """A row per run folder under `root` (and under root/suites/), newest first. With `known` (an earlier index's
    rows), a finished folder whose files are as they were is not read again, and the rows made are kept in it.
    `written`: a run folder and the summary this process has just written there (its row is made from it)."""
    rows: list[IndexRow] = []
    candidates: list[Path] = []
    for parent in (root, root / SUITES):
        try:
            candidates += [p for p in sorted(parent.iterdir()) if p.is_dir() and not p.name.startswith(".")
                           and not (parent == root and p.name == SUITES)]
        except OSError:
            continue
    for path in candidates:
        folder = RunFolder(path)
        rel = path.relative_to(root).as_posix()
        sig = signature(folder) if known is not None else None
        record = known.get(rel, sig) if known is not None and sig is not None else None
        if record is not None:
            rows.append(_from_record(record))
            continue
        try:
            row = _row(folder, root, written.summary if written is not None and _same_folder(path, written.folder) else None)
            if known is not None and sig is not None and row is not None and row.state == "finished":
                known.keep(rel, sig, _record(row))
        except OSError as exc:
            row = IndexRow(path.name, f"{path.relative_to(root).as_posix()}/", "damaged", 0.0,
                           note=cut_words(f"cannot be read: {exc.strerror or exc}", MAX_REASON))
        except (LTMError, ValueError, RecursionError) as exc:  # whatever a folder holds, the index is still written
            row = IndexRow(path.name, f"{path.relative_to(root).as_posix()}/", "damaged", 0.0,
                           note=cut_words(f"cannot be read: {exc}", MAX_REASON))
        if row is not None:
            rows.append(row)
    return sorted(rows, key=lambda r: (-r.when, r.name))


def _date(when: float) -> str:
    if not when:
        return "–"
    return dt.datetime.fromtimestamp(when, dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _agent_score(a: AgentSummary, judge: str | None, imported: bool) -> AgentScore:
    """The GoodAI benchmark score of an agent of its datasets; of a benchmark quoted by its own number (a run of one
    such dataset), that number by name (-1: nothing scored); with its protocol marks either way."""
    quoted = [d.quoted(judge is not None) for d in a.datasets]
    marks = marks_of(a, judge, imported)
    if len(quoted) == 1 and not quoted[0].spec.goodai and quoted[0].values:
        lead = quoted[0].values[0]
        return AgentScore(a.agent, -1.0 if lead.value is None else lead.value, 1, metric=lead.name, marks=marks)
    return AgentScore(a.agent, a.benchmark_score, a.scored_datasets, marks=marks)


def _score_class(share: float) -> str:
    return f"s{max(0, min(10, round(share * 10)))}" if math.isfinite(share) else "s0"


def _run_row(r: IndexRow) -> str:
    agents = "".join(
        f'<span class="agent"><span class="swatch c{a.slot}"></span>{_e(a.name)} ' + (
            (f'{_e(a.metric)} ' + ('–' if a.score < 0 else f'<b class="{_score_class(a.score)}">{a.score:.2f}</b>'))
            if a.metric else
            f'<b class="{_score_class(a.score / a.max_score if a.max_score else 0.0)}">{a.score:.2f}</b>/{a.max_score}')
        + f'{protocol_marks(a.marks)}</span>'
        for a in r.agents) or '<span class="note">–</span>'
    best = max((a.score / a.max_score for a in r.agents if a.max_score), default=-1.0)
    text = " ".join([r.name, r.state, r.kind, r.judge or "", r.note, *(a.name for a in r.agents)]).lower()
    note = f'<div class="note">{_e(r.note)}</div>' if r.note else ""
    return (f'<tr data-text="{_e(text)}" data-state="{_e(r.state)}">'
            f'<td data-v="{r.when:.0f}" class="date">{_e(_date(r.when))}</td>'
            f'<td data-v="{_e(r.name.lower())}" class="run"><a href="{_e(r.link)}">{_e(r.name)}</a>{note}</td>'
            f'<td data-v="{_e(r.state)}"><span class="state {_e(r.state)}">{_e(r.state)}</span></td>'
            f'<td data-v="{_e(r.kind)}">{_e(r.kind)}</td>'
            f'<td data-v="{best:.4f}">{agents}</td>'
            f'<td data-v="{_e(r.judge or "")}">{_e(r.judge or "–")}</td></tr>')


def _comparisons(root: Path) -> str:
    try:
        pages = sorted(root.glob(f"{COMPARE_PREFIX}*.html"), key=lambda p: (-_when(p), p.name))
    except OSError:
        return ""
    if not pages:
        return ""
    rows = "".join(f'<tr data-text="{_e(p.name.lower())}" data-state="comparison"><td data-v="{_when(p):.0f}" class="date">'
                   f'{_e(_date(_when(p)))}</td><td data-v="{_e(p.name.lower())}"><a href="{_e(p.name)}">{_e(p.name)}</a></td></tr>'
                   for p in pages)
    return ('<h2>Comparisons</h2><table class="list"><thead><tr><th data-sort="num">date</th><th>page</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>")


CSS = """
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #222; }
header { padding: 16px 24px 8px; border-bottom: 1px solid #ddd; }
h1 { margin: 0 0 4px; font-size: 21px; }
h2 { font-size: 17px; margin: 20px 0 6px; }
main { padding: 8px 24px 40px; }
.note, .meta { color: #666; font-size: 13px; }
.controls { display: flex; gap: 10px; flex-wrap: wrap; align-items: center; margin: 8px 0; }
.controls input { padding: 3px 6px; min-width: 240px; }
table { border-collapse: collapse; width: 100%; }
th, td { border-bottom: 1px solid #e4e4e4; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f6f7f9; cursor: pointer; user-select: none; white-space: nowrap; }
th[aria-sort=ascending]::after { content: " ▲"; } th[aria-sort=descending]::after { content: " ▼"; }
td.date { white-space: nowrap; font-variant-numeric: tabular-nums; }
td .note, td a { overflow-wrap: anywhere; }
td.run a { white-space: nowrap; overflow-wrap: normal; }
.pmark { color: #8a2b00; background: #ffe9d6; border-radius: 3px; padding: 0 3px; margin-left: 3px; font-size: 11px; cursor: help; }
.agent { display: inline-block; margin: 0 12px 2px 0; white-space: nowrap; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 5px; }
.agent b { padding: 0 3px; border-radius: 3px; }
.state { padding: 0 6px; border-radius: 8px; font-size: 12px; white-space: nowrap; }
.state.finished { background: #e3f4e1; } .state.unfinished { background: #fff3d6; } .state.damaged { background: #fbe0e0; color: #8b0000; }
tr.hidden { display: none; }
""" + "\n".join(f".s{i} {{ background: hsl({i * 12} 65% 86%); }}" for i in range(11)) + "\n"  # agents: colour_css

JS = r"""
"use strict";
(() => {
  const text = document.getElementById("filter");
  const state = document.getElementById("state");
  const count = document.getElementById("count");
  function filter() {
    const q = text.value.trim().toLowerCase();
    let shown = 0, total = 0;
    for (const row of document.querySelectorAll("table.list tbody tr")) {
      const ok = (!q || q.split(/\s+/).every((w) => row.dataset.text.includes(w))) &&
        (state.value === "all" || row.dataset.state === state.value || row.dataset.state === "comparison");
      row.classList.toggle("hidden", !ok);
      if (row.dataset.state !== "comparison") { total++; if (ok) shown++; }
    }
    count.textContent = `${shown} of ${total} runs`;
  }
  for (const table of document.querySelectorAll("table.list")) {
    const heads = [...table.querySelectorAll("thead th")];
    heads.forEach((th, col) => th.addEventListener("click", () => {
      const down = th.getAttribute("aria-sort") !== "descending";
      heads.forEach((h) => h.removeAttribute("aria-sort"));
      th.setAttribute("aria-sort", down ? "descending" : "ascending");
      const numeric = th.dataset.sort === "num";
      const body = table.tBodies[0];
      const rows = [...body.rows];
      const key = (r) => r.cells[col] ? r.cells[col].dataset.v || "" : "";
      rows.sort((a, b) => {
        const x = key(a), y = key(b);
        const c = numeric ? Number(x) - Number(y) : x.localeCompare(y);
        return down ? -c : c;
      });
      body.append(...rows);
    }));
  }
  text.addEventListener("input", filter);
  state.addEventListener("change", filter);
  filter();
  document.body.dataset.ready = "1";
})();
"""


def build_index(root: Path, written: Written | None = None) -> str:
    known = KnownRows.load(results_index(root))
    rows = index_rows(root, known, written)
    slots = folder_slots(root, (a.name for r in rows for a in r.agents))  # one per name, as on the folder's pages
    for r in rows:
        for a in r.agents:
            a.slot = slots[a.name]
    css = CSS + colour_css(slots.values())
    body = "".join(_run_row(r) for r in rows)
    counts = {s: sum(r.state == s for r in rows) for s in ("finished", "unfinished", "damaged")}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no runs yet"
    table = ('<table class="list"><thead><tr><th data-sort="num" aria-sort="descending">date</th><th>run</th>'
             '<th>state</th><th>kind</th><th data-sort="num">agents and benchmark scores</th><th>judge</th></tr></thead>'
             f"<tbody>{body}</tbody></table>{marks_legend(m.kind for r in rows for a in r.agents for m in a.marks)}")
    controls = ('<div class="controls"><input id="filter" type="search" placeholder="filter: run, agent, judge, state">'
                '<select id="state"><option value="all">every state</option><option value="finished">finished</option>'
                '<option value="unfinished">unfinished</option><option value="damaged">damaged</option></select>'
                '<span id="count" class="note"></span></div>')
    title = f"ltm-harness runs in {root.name or root}"
    return ("<!DOCTYPE html>\n"
            '<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{content_security_policy(JS, css)}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{_e(title)}</title><style>{css}</style></head><body>"
            f'<header><h1>{_e(title)}</h1><p class="meta">{plural(len(rows), "folder")}: {_e(summary)} · newest first; click '
            "a column to sort, type to filter. Written by ltm-harness after each run, report and comparison.</p>"
            f"{DISTRUSTED if known.distrusted else ''}</header>"
            f"<main>{controls}{table}{_comparisons(root)}</main><script>{JS}</script>{known.block()}</body></html>\n")


def write_index(root: Path, written: Written | None = None) -> Path:
    """Write `root/index.html` (whole, atomically) listing every run under `root`; `written` as for `index_rows`."""
    path = results_index(root)
    write_shared_text(path, build_index(root, written))
    return path


def refresh_index(root: Path, written: Written | None = None) -> str | None:
    """Rewrite the index of `root` if it exists as a folder; a warning when it cannot be written (never raises: a run
    or report is not failed by its index). `written` as for `index_rows`."""
    if not root.is_dir():
        return None
    try:
        write_index(root, written)
    except OSError as exc:
        return f"the results index {results_index(root)} was not updated: {exc.strerror or exc}"
    return None
