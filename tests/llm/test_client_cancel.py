"""A chat call cancelled (a kill, Ctrl-C) exactly as its reply arrives ends cancelled, called directly or from a test
program in a session: the cancellation is never lost for the reply (Python 3.11's `asyncio.wait_for` returned the
reply then, and the run went on). The kill is made from inside the SDK's request, right after it answered, so the
timing is exact; the bounds are hang guards, not speed checks."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ltm_harness._engine.program import ProgramDriver
from ltm_harness._llm.client import LLMClient, LLMSettings
from ltm_harness._llm.endpoint import resolve_endpoint

ASK = [{"role": "user", "content": "What is my cat called?"}]
GUARD = 60  # seconds: a hang guard only


def killed_as_answered(client: LLMClient, victim: list[asyncio.Future[Any]]) -> list[Any]:
    """Make the client's SDK cancel `victim[0]` as soon as a request has its reply (before the caller has it back);
    the replies, as they came."""
    sdk = client._client()
    post, replies = sdk.post, []

    async def answered_then_killed(*args: Any, **kwargs: Any) -> Any:
        reply = await post(*args, **kwargs)
        replies.append(reply)
        victim[0].cancel()
        return reply

    sdk.post = answered_then_killed  # type: ignore[method-assign]
    return replies


async def test_a_call_cancelled_as_its_reply_arrives_ends_cancelled(mock_llm):
    client = LLMClient(resolve_endpoint("test", mock_llm.url), LLMSettings())
    victim: list[asyncio.Future[Any]] = []
    replies = killed_as_answered(client, victim)
    victim.append(asyncio.ensure_future(client.chat("judge", "mock", ASK)))
    async with asyncio.timeout(GUARD):
        with pytest.raises(asyncio.CancelledError):
            await victim[0]
    assert len(replies) == 1 and mock_llm.stats["requests"] == 1  # answered, and not asked again
    # the call's place in its pool was given back: the next call is made
    assert (await client.chat("judge", "mock", ASK)).text
    await client.close()


async def test_a_session_cancelled_as_its_programs_chat_call_is_answered_ends_cancelled(mock_llm):
    client = LLMClient(resolve_endpoint("test", mock_llm.url), LLMSettings())
    victim: list[asyncio.Future[Any]] = []
    replies = killed_as_answered(client, victim)
    went_on: list[str] = []

    async def program() -> str:  # a test program judging an answer, as a session runs it
        text = (await client.chat("judge", "mock", ASK)).text
        went_on.append("answered")
        await asyncio.sleep(0)  # its next step: the kill must stop it here at the latest
        went_on.append("went on")
        return text

    driver = ProgramDriver(program())
    victim.append(asyncio.ensure_future(driver.step()))
    async with asyncio.timeout(GUARD):
        with pytest.raises(asyncio.CancelledError):
            await victim[0]
    assert len(replies) == 1 and went_on == ["answered"] and not driver.done
    await client.close()
