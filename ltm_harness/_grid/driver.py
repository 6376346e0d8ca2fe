"""Driving a study: hold its folder, read every cell's state from its run folder, run the cells that did not finish
on an executor, and keep the index up to date as cells start and end."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Literal

from ltm_harness._grid.cell import CellJob, CellOutcome
from ltm_harness._grid.executors import CellEvents, run_local, run_ray
from ltm_harness._grid.index import StudyIndex, reconcile, write_index
from ltm_harness._grid.study import LOCAL_CONCURRENCY, Study
from ltm_harness._grid.ticks import CellTick
from ltm_harness._store.layout import StudyFolder

Executor = Literal["local", "ray"]


@dataclass
class StudyRun:
    """What a study command did: the folder, the index at the end, and the cells it ran now."""

    folder: StudyFolder
    index: StudyIndex
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # finished before
    notes: list[str] = field(default_factory=list)


class _Recorder:
    """Applies the executor's events to the index (written whole after each change), then passes them on."""

    def __init__(self, folder: StudyFolder, index: StudyIndex, then: CellEvents | None, ray: bool) -> None:
        self.folder, self.index, self.then, self.ray = folder, index, then, ray
        self.ended: set[str] = set()

    def started(self, cell_id: str, where: str) -> None:
        if cell_id in self.ended:  # a worker's word that it started, arriving after its result
            return
        entry = self.index.entry(cell_id)
        if entry.state != "running":
            entry.runs += 1
            entry.state, entry.error = "running", None
        entry.where = where
        write_index(self.folder, self.index)
        if self.then is not None:
            self.then.started(cell_id, where)

    def tick(self, cell_id: str, tick: CellTick) -> None:
        if self.then is not None:
            self.then.tick(cell_id, tick)

    def finished(self, outcome: CellOutcome) -> None:
        self.ended.add(outcome.cell_id)
        entry = self.index.entry(outcome.cell_id)
        entry.state = "finished" if outcome.state == "finished" else "failed"
        entry.error, entry.wall_seconds, entry.score = outcome.error, outcome.wall_seconds, outcome.score
        entry.errored = outcome.errored
        if outcome.where != "ray":  # where the task that ended ran
            entry.where = f"ray {outcome.where}" if self.ray else outcome.where
        write_index(self.folder, self.index)
        if self.then is not None:
            self.then.finished(outcome)


def study_jobs(study: Study, folder: StudyFolder, index: StudyIndex) -> list[CellJob]:
    """A job for every cell of the study that has not finished, in the study's order."""
    jobs = []
    cells_root = folder.cells.resolve()
    for cell in study.cells:
        if index.entry(cell.id).state == "finished":
            continue
        config, source = study.cell_config(cell)
        jobs.append(CellJob(cell, config, source, cells_root, folder.index.resolve()))
    return jobs


def prepare_study(study: Study, results_root: Path) -> tuple[StudyFolder, StudyIndex]:
    """The study's folder and its index as the cells' run folders say (without holding the folder)."""
    folder = StudyFolder.named(results_root, study.name)
    return folder, reconcile(folder, study)


def run_study(study: Study, results_root: Path, executor: Executor = "local", *, address: str | None = None,
              events: CellEvents | None = None, on_ready: Callable[[StudyRun], None] | None = None) -> StudyRun:
    """Run every cell of `study` that did not finish (skipping finished ones, resuming interrupted ones) under
    `results_root/<study>/`, while holding that folder's lock (a second driver is refused)."""
    folder = StudyFolder.named(results_root, study.name)
    lock = folder.lock().acquire()
    try:
        index = reconcile(folder, study)
        index.executor = executor
        write_index(folder, index)
        jobs = study_jobs(study, folder, index)
        run = StudyRun(folder, index, [j.cell.id for j in jobs],
                       [c.id for c in study.cells if index.entry(c.id).state == "finished"])
        if lock.took_over:
            run.notes.append(f"the study's last driver (process {lock.took_over}) ended while it ran; its cells are "
                             "resumed from their event logs")
        if on_ready is not None:
            on_ready(run)
        recorder = _Recorder(folder, index, events, executor == "ray")
        if executor == "ray":
            run_ray(jobs, study.concurrency, study.spec.retries, recorder, address)
        else:
            asyncio.run(run_local(jobs, study.concurrency or LOCAL_CONCURRENCY, recorder))
        for entry in index.cells:  # a cell left running (an executor stopped early) is interrupted
            if entry.state == "running":
                entry.state = "interrupted"
        write_index(folder, index)
        return run
    finally:
        lock.release()
