"""Where a study's cells run: on this process's asyncio loop (the default: nothing to install or start), or as Ray
tasks (`--ray`), each with its cell's resources and retried when its worker dies. Both run `run_cell`, and report
to the driver the same way: a cell started, how far it got (ticks), and its outcome."""

from __future__ import annotations

import asyncio
import os
from typing import Any, Protocol, Sequence

from ltm_harness._errors import ConfigError
from ltm_harness._tokens import plural
from ltm_harness._grid.cell import CellJob, CellOutcome, run_cell, where_now
from ltm_harness._grid.ticks import TICK_EVERY, CellTick, Ticker

RAY_INSTALL = "--ray needs Ray, which is not installed; install it with: pip install 'ltm-harness[ray]'"
FORWARDED_ENV = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "LTM_HTTP_TIMEOUT")  # given to Ray workers when set here


class CellEvents(Protocol):
    def started(self, cell_id: str, where: str) -> None: ...

    def tick(self, cell_id: str, tick: CellTick) -> None: ...

    def finished(self, outcome: CellOutcome) -> None: ...


async def run_local(jobs: Sequence[CellJob], concurrency: int, events: CellEvents) -> None:
    """Every cell on this process's event loop, at most `concurrency` at a time."""
    gate = asyncio.Semaphore(concurrency)

    async def one(job: CellJob) -> None:
        async with gate:
            events.started(job.cell.id, where_now())
            ticker = Ticker(lambda tick: events.tick(job.cell.id, tick))
            outcome = await run_cell(job, ticker.on_turn)
            events.finished(outcome)

    await asyncio.gather(*(one(job) for job in jobs))


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError(RAY_INSTALL) from None
    return ray


def start_ray(address: str | None) -> Any:
    """Join the Ray cluster at `address` (or RAY_ADDRESS), or start a local one; reuse one this process started."""
    ray = import_ray()
    if ray.is_initialized():
        return ray
    import logging

    address = address or os.environ.get("RAY_ADDRESS") or None
    if address is not None:
        check_reachable(address)
    env = {k: os.environ[k] for k in FORWARDED_ENV if os.environ.get(k)}
    try:
        ray.init(address=address, include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False,
                 runtime_env={"env_vars": env} if env else None)
    except ConnectionError as exc:
        raise ConfigError(f"--ray-address {address}: cannot join a Ray cluster there ({exc}); start one with "
                          "`ray start --head` and give its address") from None
    return ray


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Refuse at once an address of a Ray cluster that nothing answers at (Ray itself retries for minutes)."""
    import socket

    where = address.removeprefix("ray://")
    host, sep, port = where.rpartition(":")
    if not sep or not port.isdigit():
        if address in ("auto", "local"):
            return
        raise ConfigError(f"Ray address {address!r}: give HOST:PORT of the cluster's head (e.g. 10.0.0.1:6379), as "
                          "`ray start --head` prints it")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise ConfigError(f"Ray address {address}: nothing answers there ({exc.strerror or exc}); start the cluster "
                          "with `ray start --head` on that machine, or give its address") from None


def run_ray(jobs: Sequence[CellJob], concurrency: int | None, retries: int, events: CellEvents,
            address: str | None = None) -> None:
    """Every cell as a Ray task with its resources, at most `concurrency` submitted at a time (default: as many as
    the cluster's resources take). A task whose worker dies is run again by Ray up to `retries` times; it resumes
    its cell from the event log its killed attempt left."""
    ray = start_ray(address)
    from ltm_harness._grid import ray_tasks  # here, not at the top: it imports Ray, an optional extra

    sink = ray_tasks.progress_sink()
    task = ray_tasks.cell_task()
    queue = list(jobs)
    pending: dict[Any, CellJob] = {}
    limit = concurrency or len(queue) or 1
    try:
        while queue or pending:
            while queue and len(pending) < limit:
                job = queue.pop(0)
                r = job.cell.resources
                options: dict[str, Any] = {"num_cpus": 1 if r.num_cpus is None else r.num_cpus,
                                           "max_retries": retries, "retry_exceptions": False,
                                           "name": f"ltm-harness cell {job.cell.id}"}
                if r.num_gpus:
                    options["num_gpus"] = r.num_gpus
                if r.resources:
                    options["resources"] = dict(r.resources)
                pending[task.options(**options).remote(job, sink)] = job  # started when a worker takes it
            done, _ = ray.wait(list(pending), num_returns=1, timeout=TICK_EVERY)
            for cell_id, where, tick in ray.get(sink.drain.remote()):
                if where is not None:
                    events.started(cell_id, where)
                if tick is not None:
                    events.tick(cell_id, CellTick(**tick))
            for ref in done:
                job = pending.pop(ref)
                try:
                    outcome = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                    outcome = CellOutcome(cell_id=job.cell.id, state="failed", where="ray", wall_seconds=0.0,
                                          error=f"its Ray task failed after {plural(retries, 'retry', 'retries')}: {first}")
                events.finished(outcome)
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
