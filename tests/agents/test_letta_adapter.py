"""The letta: adapter, called directly, against a fake Letta server on 127.0.0.1 (tests/agents/conftest.py, the
routes letta-client calls): an agent per conversation, replies from its assistant messages, usage from its report,
exports after every turn and resume by importing them (no message sent again), failures in one line."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from ltm_harness._agents.base import AgentMessage
from ltm_harness._agents.frameworks.letta import STATE, LettaAgent, parse_letta_spec
from ltm_harness._errors import AgentError
from ltm_harness._llm.pricing import PriceTable

T0 = datetime(2024, 1, 1, 9, 0, tzinfo=timezone.utc)


def msg(i: int, text: str, observe: bool = False) -> AgentMessage:
    return AgentMessage(text=text, timestamp=T0 + timedelta(minutes=i), tokens=len(text.split()), observe=observe)


CONVERSATION = [msg(0, "My favourite colour is blue."), msg(1, "The cat is called Tom.", observe=True),
                msg(2, "What is my favourite colour?"), msg(3, "I live in Oslo."), msg(4, "What is the cat called?")]


def make(letta: Any, state_dir: Path | None, tail: str = "") -> LettaAgent:
    agent = LettaAgent(f"letta:{letta.url}{tail}")
    agent.state_dir = state_dir
    return agent


async def play(agent: LettaAgent, messages: list[AgentMessage]) -> list[tuple[AgentMessage, str]]:
    turns = []
    for m in messages:
        reply = await (agent.observe(m) if m.observe else agent.reply(m))
        turns.append((m, "" if m.observe else reply.text))
    return turns


async def test_each_conversation_has_an_agent_of_its_own_that_answers_from_its_messages(letta, tmp_path):
    one, two = make(letta, tmp_path / "s" / "one"), make(letta, tmp_path / "s" / "two")
    turns = await play(one, CONVERSATION)
    assert [r for _, r in turns] == ["Noted.", "", "My favourite colour is blue.", "Noted.", "The cat is called Tom."]
    assert (await two.reply(msg(0, "What is my favourite colour?"))).text == "I don't know."  # never mixed
    assert one.agent_id != two.agent_id and letta.turns_of(one.agent_id) == 5 and letta.stats["created"] == 2
    created = letta.agents[one.agent_id]
    assert created["name"] == "ltm-harness-one" and created["model"] == "openai/gpt-4o-mini"
    assert [b["label"] for b in created["blocks"]] == ["human", "persona"]
    assert letta.sent[0] == (one.agent_id, "[2024-01-01 09:00 UTC] My favourite colour is blue.")
    assert sorted(p.name for p in (tmp_path / "s" / "one" / STATE).iterdir()) == [  # each signed
        "agent.json", "agent.json.sig", *(f"turn-{n}.{part}" for n in (4, 5) for part in (
            "af", "af.sig", "passages.json", "passages.json.sig"))]
    await one.close()
    await two.close()


async def test_usage_is_the_servers_report_priced_by_the_agents_model(letta):
    agent = make(letta, None, "?model=openai/gpt-4o-mini")
    reply = await agent.reply(CONVERSATION[0])
    prompt = letta._tokens.count("[2024-01-01 09:00 UTC] My favourite colour is blue.") + 6
    assert (reply.prompt_tokens, reply.completion_tokens) == (prompt, 3)  # the fake reports them as the mock counts
    assert reply.cost_usd == PriceTable().cost("gpt-4o-mini", prompt, 3) and reply.cost_usd > 0
    await agent.close()


async def test_a_named_agent_is_a_template_copied_for_each_conversation_never_changed(letta, tmp_path):
    template = make(letta, tmp_path / "t" / "main")
    await template.reply(msg(0, "My name is Ada."))
    name = template.agent_id
    agent = make(letta, tmp_path / "s" / "main", f"/{name}")
    assert (await agent.reply(msg(1, "What is my name?"))).text == "My name is Ada."  # the template's memory
    assert agent.agent_id != name and letta.turns_of(name) == 1  # the template itself got no message
    with pytest.raises(AgentError) as missing:
        await make(letta, None, "/agent-nosuch").reply(msg(0, "Hello."))
    assert missing.value.fatal and "404" in str(missing.value) and "\n" not in str(missing.value)
    await agent.close()
    await template.close()


async def test_restore_imports_the_agent_saved_after_exactly_n_turns_and_sends_nothing_again(letta, tmp_path):
    state = tmp_path / "state" / "main"
    first = make(letta, state)
    turns = await play(first, CONVERSATION[:4])  # the last turn was taken in just before a kill
    await first.close()
    sent = len(letta.sent)
    killed = first.agent_id

    again = make(letta, state)
    await again.restore(turns[:3])
    assert len(letta.sent) == sent  # no message was sent again: the agent came from its export
    assert again.agent_id != killed and killed not in letta.agents  # the replaced agent is deleted
    assert letta.turns_of(again.agent_id) == 3
    assert (await again.reply(msg(5, "Where do I live?"))).text == "I don't know."  # turn 4 is not in it
    await again.close()
    third = make(letta, state)
    with pytest.raises(AgentError) as gone:
        await third.restore(turns[:1])  # exports older than the last two turns are not kept
    assert "cannot be resumed: no export of its Letta agent after turn 1" in str(gone.value)


async def test_a_failed_turn_is_undone_by_importing_the_last_export(letta, tmp_path):
    agent = make(letta, tmp_path / "s" / "main")
    await play(agent, CONVERSATION[:2])
    letta.fail_next = 1
    with pytest.raises(AgentError) as failed:
        await agent.reply(CONVERSATION[2])
    line = str(failed.value)
    assert "letta failed answering (InternalServerError" in line and "\n" not in line and not failed.value.fatal
    assert (await agent.reply(CONVERSATION[2])).text == "My favourite colour is blue."
    assert letta.turns_of(agent.agent_id) == 3
    await agent.close()


@pytest.mark.parametrize("spec,says", [
    ("letta:", "write letta:http://HOST:PORT"),
    ("letta:ftp://host", "write letta:http://HOST:PORT"),
    ("letta:http://host:8283/a/b", "give only an agent id"),
    ("letta:http://host:8283?colour=red", "unknown or empty parameter 'colour'"),
    ("letta:http://me:hunter22@host:8283", "give the Letta server's key in LETTA_API_KEY"),
])
def test_a_bad_spec_is_one_line(spec, says):
    with pytest.raises(AgentError) as bad:
        LettaAgent(spec)
    assert says in str(bad.value) and "hunter22" not in str(bad.value)


def test_the_spec_names_the_server_an_agent_and_the_handles_for_new_agents():
    assert parse_letta_spec("letta:http://localhost:8283") == ("http://localhost:8283", None, {})
    assert parse_letta_spec("letta:https://x.example/agent-1?model=openai/gpt-4.1") == (
        "https://x.example", "agent-1", {"model": "openai/gpt-4.1"})


async def test_a_server_that_is_down_fails_the_turn_in_one_line(unused_tcp_port):
    agent = LettaAgent(f"letta:http://127.0.0.1:{unused_tcp_port}")
    with pytest.raises(AgentError) as down:
        await agent.reply(CONVERSATION[0])
    assert "letta failed opening" in str(down.value) or "letta failed answering" in str(down.value)
    assert "APIConnectionError" in str(down.value) and not down.value.fatal


async def test_resume_restores_archival_passages_and_says_in_one_line_which_messages_it_cannot(tmp_path, caplog):
    """A server whose context holds the last 4 messages and whose export holds only those (as Letta's): the agent
    put two passages in its archival memory itself; after a kill the resumed agent has both passages again (saved
    with each turn, inserted after the import) and answers from them, and the messages evicted from its context,
    which no export holds, are said once in one line."""
    from tests.agents.conftest import FakeLetta

    async with FakeLetta(context=4) as letta:
        state = tmp_path / "state" / "main"
        first = make(letta, state)
        said = [msg(0, "Remember: my sister is called Ingrid."), msg(1, "The weather is mild today."),
                msg(2, "Remember: the boat is named Kestrel."), msg(3, "I had soup for lunch."),
                msg(4, "My train was late again."), msg(5, "The bakery was closed.")]
        turns = await play(first, said)
        original = letta.agents[first.agent_id]
        assert len(original["passages"]) == 2 and len(original["messages"]) == 12  # 8 of them evicted
        await first.close()

        again = make(letta, state)
        caplog.clear()  # (the first run said it too, once, when its export first fell short)
        with caplog.at_level("WARNING", logger="ltm_harness.letta"):
            await again.restore(turns)
        restored = letta.agents[again.agent_id]
        assert [p["text"] for p in restored["passages"]] == ["my sister is called Ingrid.", "the boat is named "
                                                                                           "Kestrel."]
        assert [p["tags"] for p in restored["passages"]] == [["remembered"], ["remembered"]]
        assert letta.stats["passages_inserted"] == 2
        assert (await again.reply(msg(6, "What is the boat named?"))).text == "the boat is named Kestrel."
        lines = [r.getMessage() for r in caplog.records if r.name == "ltm_harness.letta"]
        assert len(lines) == 1 and "holds 2 of the 6 user messages sent" in lines[0] and "\n" not in lines[0]
        assert "restores those, its memory blocks and its archival passages" in lines[0]
        await again.close()


async def test_preflight_finds_the_server_and_the_template_agent(letta):
    assert await LettaAgent(f"letta:{letta.url}").preflight() is None
    with pytest.raises(AgentError) as missing:
        await LettaAgent(f"letta:{letta.url}/agent-nope").preflight()
    assert "has no agent 'agent-nope' to copy" in str(missing.value) and missing.value.fatal
    assert "\n" not in str(missing.value)
    assert letta.stats["created"] == 0  # the check made nothing on the server


def test_no_letta_server_stops_the_run_before_it_writes_anything(tmp_path, capsys, unused_tcp_port):
    from ltm_harness._cli.main import main

    results = tmp_path / "results"
    code = main(["run", "-c", "default", "--datasets", "colours", "--limit", "1", "--results", str(results),
                 "-a", f"letta:http://127.0.0.1:{unused_tcp_port}"])
    err = capsys.readouterr().err
    assert code == 2 and not results.exists()
    assert f"no Letta server answers at http://127.0.0.1:{unused_tcp_port}" in err and len(err.strip().splitlines()) == 1
