"""One cell of a study, run as an ordinary run through the library's `run_async`: its folder is claimed under the
run-folder lock and always in the Resume mode, so a cell that never started starts, one that was interrupted
(its driver or its worker killed) goes on from its own event log without asking an answered turn again, and one
that finished is read back as it is. Executors (local, Ray) only decide where and when this runs."""

from __future__ import annotations

import asyncio
import os
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from pydantic import BaseModel

from ltm_harness._api import run_async
from ltm_harness._engine.progress import OnTurn
from ltm_harness._errors import Audience, LTMError, audience, speaking_to
from ltm_harness._grid.study import Cell
from ltm_harness._runner.config import RunConfig


@dataclass
class CellJob:
    """Everything a process needs to run a cell (picklable: it travels to Ray workers)."""

    cell: Cell
    config: RunConfig
    source: str  # where the config's relative paths start
    cells_root: Path  # absolute: the study's `cells/` folder
    study_index: Path  # absolute: the study's index, which a worker checks it can see
    audience: Audience = field(default_factory=audience)  # who reads the cell's errors (a worker does not know)


class CellOutcome(BaseModel):
    cell_id: str
    state: str  # finished, failed
    error: str | None = None
    where: str
    wall_seconds: float
    score: float | None = None  # benchmark score share (0..1)
    errored: int = 0  # tests that errored in a cell that finished
    notes: list[str] = []


def where_now() -> str:
    return f"{socket.gethostname()} pid {os.getpid()}"


async def run_cell(job: CellJob, on_turn: OnTurn | None = None) -> CellOutcome:
    """Run (or resume, or read back) one cell; a problem of the cell is its outcome, never an exception."""
    started = time.perf_counter()
    where = where_now()

    def outcome(state: str, error: str | None = None, score: float | None = None, errored: int = 0,
                notes: list[str] | None = None) -> CellOutcome:
        return CellOutcome(cell_id=job.cell.id, state=state, error=error, where=where, score=score, errored=errored,
                           notes=notes or [], wall_seconds=round(time.perf_counter() - started, 3))

    if not job.study_index.is_file():
        return outcome("failed", f"the study folder {job.study_index.parent} is not visible on {socket.gethostname()}; "
                                 "put the study's --results folder on storage every node mounts at the same path")
    try:
        with speaking_to(job.audience):
            out = await run_async(job.config, [job.cell.spec], results=job.cells_root, run_name=job.cell.id,
                                  resume=True, source=job.source, on_turn=on_turn)
    except LTMError as exc:
        return outcome("failed", str(exc))
    except Exception as exc:  # a bug in an agent's or dataset's code: this cell fails, the others go on
        return outcome("failed", f"{type(exc).__name__}: {exc}")
    summary = out.summary
    if summary.errors:
        return outcome("failed", next(iter(summary.errors.values())), notes=out.notes)
    agent = summary.agents[0]
    share = agent.benchmark_score / agent.max_benchmark_score if agent.max_benchmark_score else 0.0
    return outcome("finished", score=share, errored=sum(d.errored for d in agent.datasets), notes=out.notes)


def run_cell_sync(job: CellJob) -> CellOutcome:
    """`run_cell` in a process of its own (a Ray worker)."""
    return asyncio.run(run_cell(job))
