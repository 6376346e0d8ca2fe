"""Running agent and environment code off the event loop's thread, so that time limits always hold.

A `Worker` owns one daemon thread and runs blocking calls there, one at a time, in order; awaiting
`worker.call(...)` leaves the event loop free, so `asyncio.timeout` can end a test case on time
from any thread (no signals, no main-thread requirement, fractions of a second allowed).

Why not `asyncio.to_thread`: a call that never returns would keep a thread of the loop's default
executor busy, and `asyncio.run` waits for that executor at the end, so one stuck agent would hang
the whole suite. A stuck call here only keeps its own daemon thread, which is abandoned (and does
not stop the process from exiting).
"""

from __future__ import annotations

import asyncio
import queue
import threading
from typing import Any, Callable, Coroutine, TypeVar

T = TypeVar("T")
_Job = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any], asyncio.AbstractEventLoop, "asyncio.Future[Any]"]


def _settle(future: "asyncio.Future[Any]", value: Any, error: BaseException | None) -> None:
    if future.done():  # cancelled meanwhile (time limit)
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


class Worker:
    """One daemon thread for the blocking calls of one test case."""

    def __init__(self, name: str = "ltm-harness-worker") -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            fn, args, kwargs, loop, future = job
            value: Any = None
            error: BaseException | None = None
            try:
                value = fn(*args, **kwargs)
            except BaseException as exc:  # handed to the awaiting side, whatever it is
                error = exc
            try:
                loop.call_soon_threadsafe(_settle, future, value, error)
            except RuntimeError:  # the loop is closed: nobody waits for this any more
                pass

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run `fn(*args, **kwargs)` on the worker thread and wait for it without blocking the loop."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._jobs.put((fn, args, kwargs, loop, future))
        return await future

    def stop(self) -> None:
        """Let the thread end after its current call (if that call never returns, the thread is abandoned)."""
        self._jobs.put(None)


def run_sync(make_coro: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to the end from synchronous code, whether or not this thread runs an event
    loop already (in a notebook, or inside async code, it runs on a fresh loop in another thread)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make_coro())
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(make_coro())
        except BaseException as exc:  # re-raised in the calling thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="ltm-harness-run-sync")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value


class CaseFailure(Exception):
    """Agent, environment or evaluator code raised; the message says which call, where."""


async def guarded(what: str, call: Any) -> Any:
    """Await `call`, turning an exception into a CaseFailure naming `what`."""
    try:
        return await call
    except (asyncio.CancelledError, CaseFailure):
        raise
    except Exception as exc:
        raise CaseFailure(f"{what} failed: {type(exc).__name__}: {exc}") from exc
