"""The study's index (`study.json`): every cell, its state and where it ran, written whole after each change.

The index is what the study command shows and what `report` reads; the truth about a cell is its run folder, so
a driver killed before it wrote a change loses nothing: on the next start every cell's state is read again from
its folder (finished, interrupted, or not started), and the cells are run, resumed or skipped by that.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from ltm_harness._errors import LTMError
from ltm_harness._grid.study import Cell, Study
from ltm_harness._results.outputs import folder_state
from ltm_harness._store.files import read_run_file, write_model
from ltm_harness._store.layout import StudyFolder

INDEX_FORMAT = 1
State = Literal["pending", "running", "finished", "failed", "interrupted"]


class CellEntry(BaseModel):
    cell: Cell
    folder: str  # the cell's run folder, relative to the study folder
    state: State = "pending"
    error: str | None = None  # why it failed (its last attempt)
    runs: int = 0  # times a driver started it (a resume counts again)
    where: str | None = None  # the host and process it last ran in
    wall_seconds: float | None = None  # of its last attempt
    score: float | None = None  # benchmark score share (0..1) when finished
    errored: int = 0  # its tests that errored, when finished


class StudyIndex(BaseModel):
    format: int = INDEX_FORMAT
    study: str
    source: str  # the study file
    executor: str | None = None  # of the last start: local, ray
    updated: str | None = None  # UTC time of the last write
    cells: list[CellEntry] = Field(default_factory=list)

    def entry(self, cell_id: str) -> CellEntry:
        return next(e for e in self.cells if e.cell.id == cell_id)

    def counts(self) -> dict[str, int]:
        out = {s: 0 for s in ("finished", "running", "failed", "interrupted", "pending")}
        for e in self.cells:
            out[e.state] += 1
        return out


def read_index(folder: StudyFolder) -> StudyIndex:
    return read_run_file(folder.index, StudyIndex)


def write_index(folder: StudyFolder, index: StudyIndex) -> None:
    index.updated = datetime.now(timezone.utc).isoformat(timespec="seconds")
    write_model(folder.index, index)


def cell_state(folder: StudyFolder, cell: Cell) -> State:
    """A cell's state read from its run folder: finished (its agent's results are written and it did not stop
    early), interrupted (event logs without results), or pending (nothing yet)."""
    run = folder.cell(cell.id)
    try:
        state = folder_state(run)
    except LTMError:
        return "interrupted"
    if state.finished and run.summary.is_file():
        return "finished"
    return "interrupted" if state else "pending"


def reconcile(folder: StudyFolder, study: Study) -> StudyIndex:
    """The index of `study` in `folder`: the study's cells in its order, each with its state read again from its
    run folder (what an earlier index said is kept for how it ran). Cells of an earlier study file that are no
    longer in it stay, after the study's own, so that nothing a run made is forgotten."""
    earlier: dict[str, CellEntry] = {}
    if folder.index.is_file():
        earlier = {e.cell.id: e for e in read_index(folder).cells}
    entries = []
    for cell in study.cells:
        old = earlier.pop(cell.id, None)
        entry = CellEntry(cell=cell, folder=str(folder.cell(cell.id).path.relative_to(folder.path)))
        if old is not None:
            entry.runs, entry.where, entry.wall_seconds = old.runs, old.where, old.wall_seconds
            entry.score, entry.errored = old.score, old.errored
        entry.state = cell_state(folder, cell)
        if entry.state != "finished" and old is not None and old.state == "failed":
            entry.state, entry.error = "failed", old.error  # said again until it is run again
        entries.append(entry)
    for old in earlier.values():
        old.state = cell_state(folder, old.cell)
        entries.append(old)
    return StudyIndex(study=study.name, source=str(study.path), cells=entries)


def find_study(path: Path) -> StudyFolder | None:
    """The study folder at `path`, if it is one."""
    folder = StudyFolder(path)
    return folder if folder.is_study() else None
