"""The mem0 adapter, called directly, on the mock LLM (mock-memory answers and extracts, mock-embed embeds): replies
from mem0's memories, history into mem0 without a chat call, usage, and resume from mem0's own files (nothing added
again), a bad config or a failing call as one line."""

from __future__ import annotations

import importlib.metadata

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from ltm_harness._agents.base import AgentMessage
from ltm_harness._agents.frameworks.mem0 import MEMORY_HEADING, NOTHING_YET, STORE, Mem0Agent
from ltm_harness._errors import AgentError
from ltm_harness._llm.mock_server import FaultSettings, MockLLMServer

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agents" / "mem0.yml"
T0 = datetime(2024, 1, 1, 9, 0, tzinfo=timezone.utc)


def msg(i: int, text: str, observe: bool = False) -> AgentMessage:
    return AgentMessage(text=text, timestamp=T0 + timedelta(minutes=i), tokens=len(text.split()), observe=observe)


@pytest.fixture
async def llm():
    async with MockLLMServer() as server:
        yield server


def make(llm: MockLLMServer, state_dir: Path | None, config: Path = EXAMPLE) -> Mem0Agent:
    agent = Mem0Agent(f"mem0:{config}", base_url=llm.url)
    agent.state_dir = state_dir
    return agent


def chats(llm: MockLLMServer) -> list[dict]:
    """The chat model's requests (mem0's own LLM calls ask for JSON)."""
    return [r for r in llm.requests if "messages" in r and "response_format" not in r]


def extractions(llm: MockLLMServer) -> list[str]:
    """The conversation text of each of mem0's extraction calls (one per `add`)."""
    return [r["messages"][-1]["content"].split("## New Messages\n")[1].split("\n\n## ")[0]
            for r in llm.requests if r.get("response_format") == {"type": "json_object"}]


CONVERSATION = [msg(0, "My favourite colour is blue."), msg(1, "The cat is called Tom.", observe=True),
                msg(2, "What is my favourite colour?"), msg(3, "I live in Oslo.", observe=True),
                msg(4, "What is the cat called?"), msg(5, "Where do I live?")]


async def play(agent: Mem0Agent, messages: list[AgentMessage]) -> list[tuple[AgentMessage, str]]:
    turns = []
    for m in messages:
        turns.append((m, "" if m.observe else (await agent.reply(m)).text))
        if m.observe:
            assert (await agent.observe(m)).text == ""  # no reply, only mem0's usage
    return turns


async def test_replies_come_from_mem0s_memories_and_history_goes_in_without_a_chat_call(llm, tmp_path):
    agent = make(llm, tmp_path / "state" / "main")
    turns = await play(agent, CONVERSATION)
    assert [r for _, r in turns] == ["Noted.", "", "My favourite colour is blue.", "", "The cat is called Tom.",
                                     "I live in Oslo."]
    assert len(chats(llm)) == 4  # the two observed messages made no chat call...
    assert len(extractions(llm)) == 6  # ... but went into mem0 like every turn
    first, last = chats(llm)[0]["messages"], chats(llm)[-1]["messages"]
    assert first[0]["content"].endswith(f"{MEMORY_HEADING}\n{NOTHING_YET}")
    assert "- [2024-01-01 09:03 UTC] I live in Oslo." in last[0]["content"]  # the memory found, in the system prompt
    assert last[1] == {"role": "user", "content": "[2024-01-01 09:05 UTC] Where do I live?"}
    assert (tmp_path / "state" / "main" / STORE / "history.db").is_file()
    assert list((tmp_path / "state" / "main" / STORE / "qdrant" / "collection").iterdir())
    await agent.close()


async def test_usage_counts_the_chat_call_and_mem0s_llm_calls(llm, tmp_path):
    from ltm_harness._llm.mock_server import memory_reply

    agent = make(llm, None)  # no folder: the store lives in a temporary one
    reply = await agent.reply(CONVERSATION[0])
    chat, extraction = [r for r in llm.requests if "messages" in r]
    counted = [llm._count(chat["messages"], "Noted."),
               llm._count(extraction["messages"], memory_reply(extraction["messages"]))]  # as the mock reports them
    assert (reply.prompt_tokens, reply.completion_tokens) == (sum(c[0] for c in counted), sum(c[1] for c in counted))
    assert reply.cost_usd == 0.0  # mock models are priced at 0
    observed = await agent.observe(msg(1, "The cat is called Tom.", observe=True))
    assert observed is not None and observed.text == "" and observed.prompt_tokens > 1000  # mem0's extraction
    config = tmp_path / "raw.yml"
    config.write_text(EXAMPLE.read_text().replace("observe: infer", "observe: raw"))
    raw = make(llm, None, config)
    assert await raw.observe(msg(1, "The cat is called Tom.", observe=True)) is None  # stored as said: no LLM call
    assert sum(1 for r in llm.requests if r.get("response_format")) == 2
    await agent.close()
    await raw.close()


async def test_restore_reads_mem0s_files_back_to_exactly_n_turns_and_adds_nothing_again(llm, tmp_path):
    state = tmp_path / "state" / "main"
    first = make(llm, state)
    turns = await play(first, CONVERSATION[:4])  # the last one (I live in Oslo) taken in just before a kill
    await first.memory.add([{"role": "user", "content": "half of a turn: I own a boat."}], user_id=first.session_name,
                           metadata={"turn": 5}, infer=False)  # ... and half of the next one written
    await first.close()
    added = len(extractions(llm))

    again = make(llm, state)
    await again.restore(turns[:3])
    assert len(extractions(llm)) == added  # nothing was added to mem0 again: its store came from the files
    memories = (await again.memory.get_all(filters={"user_id": again.session_name}))["results"]
    assert sorted(m["memory"] for m in memories) == ["[2024-01-01 09:00 UTC] My favourite colour is blue.",
                                                     "[2024-01-01 09:01 UTC] The cat is called Tom."]
    assert (await again.reply(msg(5, "Where do I live?"))).text == "I don't know."  # turn 4 was rolled back
    assert (await again.reply(msg(6, "What is the cat called?"))).text == "The cat is called Tom."
    await again.close()

    third = make(llm, state)  # the turn before the last can still be gone back to; older ones cannot
    await third.restore([*turns[:3], (msg(5, "Where do I live?"), "I don't know.")])
    with pytest.raises(AgentError) as refused:
        await third.restore(turns[:1])
    assert "cannot be resumed" in str(refused.value) and "at the earliest" in str(refused.value)
    await third.restore([])  # a fresh conversation: nothing remembered
    assert (await third.memory.get_all(filters={"user_id": third.session_name}))["results"] == []
    await third.close()


async def test_a_failed_turn_leaves_nothing_behind_and_a_retry_adds_it_once(llm, tmp_path):
    agent = make(llm, tmp_path / "s" / "main")
    await play(agent, CONVERSATION[:2])
    # the next turn: search embeds (ok), the chat model answers (ok), mem0 embeds (ok), then its LLM fails 3 times
    llm.set_faults(FaultSettings(script=["ok", "ok", "ok", "500", "500", "500"]))
    with pytest.raises(AgentError) as failed:
        await agent.reply(CONVERSATION[2])
    line = str(failed.value)
    assert line.startswith(f"agent 'mem0:{EXAMPLE}': mem0 failed answering (") and "\n" not in line
    assert not failed.value.fatal
    await agent.reply(CONVERSATION[2])
    memories = (await agent.memory.get_all(filters={"user_id": agent.session_name}))["results"]
    assert len(memories) == 2  # the question itself holds no fact; nothing doubled
    await agent.close()


async def test_an_unknown_model_fails_the_turn_in_one_line_that_stops_the_agent(llm, tmp_path):
    config = tmp_path / "bad.yml"
    config.write_text(EXAMPLE.read_text().replace("config: {model: mock-memory}", "config: {model: gpt-9}"))
    agent = make(llm, tmp_path / "s" / "main", config)
    with pytest.raises(AgentError) as failed:
        await agent.reply(CONVERSATION[0])
    assert failed.value.fatal and "\n" not in str(failed.value) and "gpt-9" in str(failed.value)
    await agent.close()


MEM0 = f"mem0 {importlib.metadata.version('mem0ai')}"


@pytest.mark.parametrize("text,says", [
    (None, "cannot be read"),
    ("chat: [1, 2", "not valid YAML"),
    ("chat: {model: x, colour: red}", "chat.colour is not a setting of a mem0 agent config; valid keys: max_tokens, "
     "model, system_prompt, temperature"),
    ("serach: {top_k: 3}", "serach is not a setting of a mem0 agent config; did you mean search?"),
    ("chat: {modle: x}", "chat.modle is not a setting of a mem0 agent config; did you mean model?"),
    # mem0's own config, checked against the installed mem0's MemoryConfig and provider config classes
    ("mem0: {custom_instruction: Only food.}", f"mem0.custom_instruction is not a setting of {MEM0}'s "
     "MemoryConfig; did you mean custom_instructions?"),
    ("mem0: {custom_fact_extraction_prompt: Only food.}", "mem0.custom_fact_extraction_prompt is the older name of "
     f"custom_instructions ({MEM0}'s MemoryConfig); rename it"),
    ("mem0: {llm: {provider: openai, config: {modle: gpt-4.1-nano}}}", "mem0.llm.config.modle is not a setting of "
     f"{MEM0}'s openai llm; did you mean model?"),
    ("mem0: {embedder: {provider: openai, confg: {}}}", f"mem0.embedder.confg is not a setting of {MEM0}'s "
     "embedder section; did you mean config?"),
    ("mem0: {embedder: {config: {embedding_dim: 8}}}", "mem0.embedder.config.embedding_dim is not a setting of "
     f"{MEM0}'s openai embedder; did you mean embedding_dims?"),
    ("search: {top_k: 0}", "search.top_k: Input should be greater than or equal to 1"),
    ("mem0: {vector_store: {provider: qdrant, config: {host: db.example, port: 6333}}}",
     "mem0.vector_store: the adapter keeps mem0's store in the run folder"),
    ("mem0: {history_db_path: /tmp/h.db}", "mem0.history_db_path"),
    ("mem0: {llm: {provider: nosuch, config: {}}}", "mem0.llm.config: Unsupported LLM provider: nosuch"),
])
def test_a_bad_config_file_is_one_line_naming_it(tmp_path, text, says):
    path = tmp_path / "agent.yml"
    if text is not None:
        path.write_text(text)
    with pytest.raises(AgentError) as bad:
        Mem0Agent(f"mem0:{path}")
    line = str(bad.value)
    assert says in line and str(path) in line and "\n" not in line


def test_the_spec_takes_a_config_file_or_nothing():
    assert Mem0Agent("mem0").settings.chat.model == "gpt-4o-mini"
    with pytest.raises(AgentError, match="write mem0 or mem0:CONFIG.yml"):
        Mem0Agent("mem0:")
