"""The openai-agents: adapter, called directly, on the mock LLM server (127.0.0.1): the SQLiteSession is the agent's
memory, history goes into it without a run, and restore / a failed turn take the session back to exactly N turns
(never sending turns to the model again)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import AsyncIterator

import pytest

from ltm_harness._agents.base import AgentMessage
from ltm_harness._agents.frameworks.openai_agents import STATE_FILE, OpenAIAgentsAgent
from ltm_harness._errors import AgentError
from ltm_harness._llm.mock_server import FaultSettings, MockLLMServer

AGENTS = '''
from agents import Agent
from pydantic import BaseModel


class Answer(BaseModel):
    text: str


agent = Agent(name="memory", instructions="Answer from the conversation.", model="mock")
unknown_model = Agent(name="memory", instructions="Answer from the conversation.", model="no-such-model")
structured = Agent(name="memory", instructions="Answer.", model="mock-fixed:{\\"text\\": \\"hi\\"}", output_type=Answer)
structured_on_mock = Agent(name="memory", instructions="Answer.", model="mock", output_type=Answer)
not_an_agent = "agent"
'''

T0 = datetime(2024, 1, 1, 9, 0, tzinfo=timezone.utc)


def msg(i: int, text: str, observe: bool = False) -> AgentMessage:
    return AgentMessage(text=text, timestamp=T0 + timedelta(minutes=i), tokens=len(text.split()), observe=observe)


CONVERSATION = [msg(0, "My favourite colour is blue."), msg(1, "The cat is called Tom.", observe=True),
                msg(2, "What is my favourite colour?"), msg(3, "I live in Oslo.", observe=True),
                msg(4, "What is the cat called?")]


@pytest.fixture
async def mock_llm(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[MockLLMServer]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        yield server


@pytest.fixture
def agents_file(tmp_path: Path) -> Path:
    path = tmp_path / "sdk_agents.py"
    path.write_text(AGENTS)
    return path


def make(path: Path, name: str = "agent", state_dir: Path | None = None, query: str = "") -> OpenAIAgentsAgent:
    agent = OpenAIAgentsAgent(f"openai-agents:{path}:{name}{query}")
    agent.state_dir = state_dir
    return agent


async def play(agent: OpenAIAgentsAgent, messages: list[AgentMessage]) -> list[tuple[AgentMessage, str]]:
    turns = []
    for m in messages:
        if m.observe:
            assert await agent.observe(m) is None
            turns.append((m, ""))
        else:
            turns.append((m, (await agent.reply(m)).text))
    return turns


def texts(items: list) -> list[str]:
    """The session's items as text: user messages, and the assistant's output text."""
    out = []
    for item in items:
        content = item.get("content")
        out.append(content if isinstance(content, str) else "".join(part.get("text", "") for part in content))
    return out


async def test_replies_come_from_the_session_and_observed_history_costs_no_model_call(mock_llm, agents_file, tmp_path):
    agent = make(agents_file, state_dir=tmp_path / "state" / "main")
    turns = await play(agent, CONVERSATION)
    assert [r for _, r in turns] == ["Noted.", "", "My favourite colour is blue.", "", "The cat is called Tom."]
    assert mock_llm.stats["requests"] == 3  # the two observed messages made no request...
    sent = [m["content"] for m in mock_llm.requests[-1]["messages"]]
    assert sent[0] == "Answer from the conversation."
    assert "[2024-01-01 09:03 UTC] I live in Oslo." in sent  # ...yet it went to the model with the next turn
    assert "tools" not in mock_llm.requests[-1] and mock_llm.requests[-1]["model"] == "mock"
    assert (tmp_path / "state" / "main" / STATE_FILE).is_file() and agent.session.session_id == "main"
    assert len(await agent.session.get_items()) == 8
    await agent.close()


async def test_usage_is_the_runs_own_report_priced_by_the_agents_model(mock_llm, agents_file):
    agent = make(agents_file)
    reply = await agent.reply(msg(0, "Hello there."))
    counted = mock_llm._count(mock_llm.requests[-1]["messages"], "Noted.")  # what the server reported as usage
    assert (reply.prompt_tokens, reply.completion_tokens) == counted and reply.cost_usd == 0.0  # the free mock model
    structured = make(agents_file, "structured")
    assert (await structured.reply(msg(0, "Hi."))).text == '{"text":"hi"}'  # structured output as its JSON


async def test_restore_takes_the_session_back_to_exactly_n_turns_from_its_file(mock_llm, agents_file, tmp_path):
    state = tmp_path / "state" / "main"
    first = make(agents_file, state_dir=state)
    turns = await play(first, CONVERSATION)
    await first.close()  # killed after its last turn reached the session, before the harness recorded it
    made = mock_llm.stats["requests"]

    again = make(agents_file, state_dir=state)
    await again.restore(turns[:4])
    assert mock_llm.stats["requests"] == made  # nothing was sent again: the session came from the file
    assert texts(await again.session.get_items()) == [
        "[2024-01-01 09:00 UTC] My favourite colour is blue.", "Noted.",
        "[2024-01-01 09:01 UTC] The cat is called Tom.",
        "[2024-01-01 09:02 UTC] What is my favourite colour?", "My favourite colour is blue.",
        "[2024-01-01 09:03 UTC] I live in Oslo."]
    assert (await again.reply(CONVERSATION[4])).text == turns[4][1]
    assert len(await again.session.get_items()) == 8  # the turn taken before the kill is not in it twice
    await again.close()
    third = make(agents_file, state_dir=state)
    await third.restore([])
    assert await third.session.get_items() == []


async def test_a_failed_turn_leaves_nothing_in_the_session(mock_llm, agents_file, tmp_path):
    agent = make(agents_file, state_dir=tmp_path / "s" / "main")
    await play(agent, CONVERSATION[:2])
    mock_llm.set_faults(FaultSettings(script=["500"] * 3))  # the client's own retries fail too
    with pytest.raises(AgentError) as failed:
        await agent.reply(CONVERSATION[2])
    assert "openai-agents failed answering (InternalServerError" in str(failed.value) and not failed.value.fatal
    await agent.reply(CONVERSATION[2])
    items = texts(await agent.session.get_items())
    assert len(items) == 5 and items.count("[2024-01-01 09:02 UTC] What is my favourite colour?") == 1
    await agent.close()


async def test_an_unknown_model_stops_the_agent(mock_llm, agents_file):
    agent = make(agents_file, "unknown_model")
    with pytest.raises(AgentError) as failed:
        await agent.reply(msg(0, "Hello."))
    assert failed.value.fatal and "no-such-model" in str(failed.value)


async def test_the_endpoint_comes_from_the_config_before_the_environment(mock_llm, agents_file, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    agent = OpenAIAgentsAgent(f"openai-agents:{agents_file}:agent", base_url=mock_llm.url)
    assert (await agent.reply(msg(0, "Hello."))).text == "Noted."


def test_an_object_that_is_no_agent_is_one_line(agents_file):
    with pytest.raises(AgentError, match="the object is a str, not an OpenAI Agents SDK Agent"):
        make(agents_file, "not_an_agent")


async def test_an_agent_with_an_output_type_runs_on_the_mock_model(mock_llm, agents_file):
    """The mock honours `response_format` (the SDK's json_schema for `output_type`): the structured reply is the
    answer the mock gives, as JSON (it failed: the mock answered plain text)."""
    agent = make(agents_file, "structured_on_mock")
    turns = await play(agent, CONVERSATION[:3])
    await agent.close()
    assert turns[2][1] == '{"text":"My favourite colour is blue."}'
