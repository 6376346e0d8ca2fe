"""A test program runs in the session's task (driven by `ProgramDriver`, not as a task of its own), so a cancellation
of that task while the program awaits something is the program's, as it would be in a task: it reaches the await (the
program's own `asyncio.timeout` or anyio cancel scope handles it; a kill goes through the program's clean-up), and one
that comes as the awaited future is done is raised in the program, never lost. Each test is bounded by a hang guard
(not a speed check)."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from ltm_harness._engine.program import ProgramDriver

GUARD = 60  # seconds: a hang guard only


async def test_a_programs_own_timeout_ends_in_the_program_as_a_timeout():
    async def program() -> str:
        try:
            async with asyncio.timeout(0):  # expires at the next turn of the loop, while the program waits
                await asyncio.Event().wait()
        except TimeoutError:
            return "timed out"
        return "not timed out"

    driver = ProgramDriver(program())
    async with asyncio.timeout(GUARD):
        assert await driver.step() is None  # the timeout's cancellation was not raised past the program
    assert driver.done and driver.result == "timed out"


async def test_an_anyio_cancel_scope_in_the_program_cancels_only_its_own_part():
    # as the HTTP client's connect does: a task group whose scope is cancelled while the program waits in it
    async def program() -> str:
        async with anyio.create_task_group() as tg:
            tg.start_soon(anyio.sleep_forever)
            await asyncio.sleep(0)
            tg.cancel_scope.cancel()
            await anyio.sleep_forever()
        with anyio.move_on_after(0):
            await anyio.sleep_forever()
        await asyncio.sleep(0)
        return "went on"

    driver = ProgramDriver(program())
    async with asyncio.timeout(GUARD):
        assert await driver.step() is None
    assert driver.done and driver.result == "went on"


async def test_a_session_cancelled_while_its_program_waits_cancels_the_programs_await():
    awaited: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    seen: list[str] = []

    async def program() -> int:
        try:
            return await awaited
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    driver = ProgramDriver(program())
    session = asyncio.ensure_future(driver.step())
    await asyncio.sleep(0)  # the program now waits for `awaited`
    session.cancel()
    async with asyncio.timeout(GUARD):
        with pytest.raises(asyncio.CancelledError):
            await session
    assert seen == ["cancelled"] and awaited.cancelled()


async def test_a_session_cancelled_as_the_programs_future_is_done_ends_cancelled_in_the_program():
    awaited: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    seen: list[str] = []

    async def program() -> int:
        try:
            value = await awaited
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        seen.append(f"went on with {value}")
        return value

    driver = ProgramDriver(program())
    session = asyncio.ensure_future(driver.step())
    await asyncio.sleep(0)
    awaited.set_result(1)  # the answer and the kill in the same turn of the loop
    session.cancel()
    async with asyncio.timeout(GUARD):
        with pytest.raises(asyncio.CancelledError):
            await session
    assert seen == ["cancelled"]  # the program did not go on with the answer, and its clean-up ran
