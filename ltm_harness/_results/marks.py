"""Protocol marks: the one place that decides, from results, which of an agent's numbers broke the benchmark's
protocol (ARCHITECTURE invariant 12), so that the terminal, the report, `compare`, the results index and a study's
page show the same marks with the same legend.

An agent's number carries a mark when

* `seq`: questions the benchmark asks independently (LoCoMo, BEAM) were asked in sequence (the agent cannot go back);
* `unscored`: some of its tests were left unscored (not answered in an imported file, no judge, no verdict), so the
  number covers only the rest;
* `imported`: its answers were imported from another tool's file (`import-answers`), not played live;
* `judge`: the run was judged by another model than the benchmark's reference (its `Headline.judge`).

A marked agent never ranks above an agent without marks (`rank_key`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Literal, Sequence

from ltm_harness._results.models import AgentSummary, DatasetSummary
from ltm_harness._store.layout import RunFolder

Kind = Literal["seq", "unscored", "imported", "judge"]
KINDS: tuple[Kind, ...] = ("seq", "unscored", "imported", "judge")

LEGEND: dict[Kind, str] = {
    "seq": "asked in sequence: the benchmark asks each question independently, this agent could not go back",
    "unscored": "partly unscored: the number covers only the tests that were scored",
    "imported": "imported: answers from another tool's file (import-answers), not played here",
    "judge": "another judge: judged by a model other than the benchmark's reference judge",
}


@dataclass(frozen=True)
class Mark:
    """One protocol mark on an agent's number, with what it means for this agent."""

    kind: Kind
    detail: str


def _model(name: str) -> str:
    """A judge model's name as compared: lower case, without a provider prefix (`openai/gpt-4o-mini`)."""
    return name.strip().lower().rsplit("/", 1)[-1]


def _dataset_marks(d: DatasetSummary, judge: str | None) -> list[Mark]:
    out = []
    if d.unscored:
        out.append(Mark("unscored", f"{d.dataset}: {d.unscored:,} of {d.tests:,} tests unscored"))
    reference = d.headline.spec.judge if d.headline is not None else None
    if judge is not None and reference is not None and _model(judge) != _model(reference):
        out.append(Mark("judge", f"{d.dataset}: judged by {judge}, the reference judges with {reference}"))
    return out


def marks_of(agent: AgentSummary, judge: str | None, imported: bool = False,
             dataset: str | None = None) -> list[Mark]:
    """The marks on an agent's numbers (`judge`: the run's judge model; `imported`: its answers came from a file;
    `dataset`: only that dataset's numbers, else the agent's as a whole), in the order of `KINDS`."""
    found: list[Mark] = []
    if agent.questions is not None and agent.questions.in_sequence:
        n = agent.questions.in_sequence
        found.append(Mark("seq", f"{n:,} question{'' if n == 1 else 's'} asked in sequence"))
    for d in agent.datasets:
        if dataset is None or d.dataset == dataset:
            found += _dataset_marks(d, judge)
    if imported:
        found.append(Mark("imported", "answers imported from a file"))
    merged: dict[Kind, list[str]] = {}
    for m in found:
        merged.setdefault(m.kind, []).append(m.detail)
    return [Mark(kind, "; ".join(merged[kind])) for kind in KINDS if kind in merged]


def is_imported(folder: Path, agent: str) -> bool:
    """Whether `agent` of the run in `folder` answered from an imported file (`import-answers` kept its match report)."""
    return RunFolder(folder).imported(agent).is_file()


def mark_text(marks: Sequence[Mark]) -> str:
    """The marks as plain text beside a number: "[seq, unscored]" ("" for none)."""
    return f"[{', '.join(m.kind for m in marks)}]" if marks else ""


def legend_lines(kinds: Iterable[Kind]) -> list[str]:
    """The legend of the marks shown (in the order of `KINDS`), one line each: "[seq] asked in sequence: ..."."""
    shown = set(kinds)
    return [f"[{k}] {LEGEND[k]}" for k in KINDS if k in shown]


def rank_key(marks: Sequence[Mark]) -> int:
    """Sorts agents so that none with a mark comes before one without (stable: the order is kept otherwise)."""
    return 1 if marks else 0


def kinds_in(texts: Iterable[str]) -> list[Kind]:
    """The kinds named by marks as text (`mark_text`: "[seq, unscored]"), in the order of `KINDS`: for a legend made
    from table rows."""
    named = {part.strip() for t in texts for part in t.strip("[]").split(",")}
    return [k for k in KINDS if k in named]
