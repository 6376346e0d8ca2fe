"""The Ray side of a study (imported only when Ray is): the task that runs a cell in a worker, and the actor that
carries the cells' progress back to the driver."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import ray

from ltm_harness._grid.cell import CellJob, CellOutcome, run_cell, where_now
from ltm_harness._grid.ticks import Ticker


@ray.remote(num_cpus=0)
class ProgressSink:
    """Collects (cell, where it runs, tick) from workers until the driver drains them."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str | None, dict[str, Any] | None]] = []

    def put(self, cell_id: str, where: str | None, tick: dict[str, Any] | None) -> None:
        self.items.append((cell_id, where, tick))

    def drain(self) -> list[tuple[str, str | None, dict[str, Any] | None]]:
        items, self.items = self.items, []
        return items


def _run_in_worker(job: CellJob, sink: Any) -> CellOutcome:
    sink.put.remote(job.cell.id, f"ray {where_now()}", None)
    ticker = Ticker(lambda tick: sink.put.remote(job.cell.id, None, dataclasses.asdict(tick)))
    return asyncio.run(run_cell(job, ticker.on_turn))


def progress_sink() -> Any:
    return ProgressSink.remote()  # type: ignore[attr-defined]


_CELL_TASK = ray.remote(_run_in_worker)


def cell_task() -> Any:
    return _CELL_TASK
