"""An Agents SDK agent with a function tool, and one that hands off, on the mock's tool-calling model (`mock-tools`):
the tool is called and its result answers, the calls and results are in the session, every model call is counted,
and a restore to N turns brings the session back with the tool items of those turns."""

from __future__ import annotations

from pathlib import Path

from ltm_harness._agents.frameworks.openai_agents import OpenAIAgentsAgent
from ltm_harness._llm.mock_server import MockLLMServer
from tests.agents.test_openai_agents_adapter import make, mock_llm, msg  # noqa: F401 (the fixture)

AGENTS = '''
from agents import Agent, function_tool


@function_tool
def search_notes(query: str) -> str:
    """Search the user's notes."""
    return "Your cat is called Tom." if "cat" in query.lower() else "No note found."


with_tool = Agent(name="memory", instructions="Use your tools.", model="mock-tools", tools=[search_notes])
specialist = Agent(name="notes", instructions="Answer from the notes.", model="mock-tools", tools=[search_notes])
triage = Agent(name="triage", instructions="Hand off to notes.", model="mock-tools", handoffs=[specialist])
'''


def item_kinds(items: list) -> list[str]:
    return [str(item.get("type") or item.get("role")) for item in items]


async def test_a_tool_is_called_its_result_answers_and_both_calls_are_counted(mock_llm: MockLLMServer,
                                                                            tmp_path: Path) -> None:
    path = tmp_path / "tool_agents.py"
    path.write_text(AGENTS)
    agent = make(path, "with_tool", tmp_path / "s" / "main")
    reply = await agent.reply(msg(0, "Search notes: what is my cat called?"))
    assert reply.text == "Your cat is called Tom."
    assert mock_llm.stats["ok_replies"] == 2 and mock_llm.stats["tool_calls"] == 1
    sent = sum(mock_llm._count(r["messages"], "")[0] for r in mock_llm.requests)
    assert reply.prompt_tokens == sent  # both calls (the run's usage, as the mock reported each)
    items = await agent.session.get_items()
    assert item_kinds(items) == ["user", "function_call", "function_call_output", "message"]
    await agent.reply(msg(1, "Search notes for my dog."))
    await agent.close()
    again = make(path, "with_tool", tmp_path / "s" / "main")
    await again.restore([(msg(0, "x"), reply.text)])
    assert item_kinds(await again.session.get_items()) == item_kinds(items)
    await again.close()


async def test_a_handoff_goes_to_the_other_agent_which_answers(mock_llm: MockLLMServer, tmp_path: Path) -> None:
    path = tmp_path / "handoff_agents.py"
    path.write_text(AGENTS)
    agent = make(path, "triage", tmp_path / "h" / "main")
    reply = await agent.reply(msg(0, "Please look up my cat."))
    offered = [[t["function"]["name"] for t in r.get("tools", [])] for r in mock_llm.requests]
    assert offered == [["transfer_to_notes"], ["search_notes"]]  # triage hands off; the notes agent answers
    assert mock_llm.stats["tool_calls"] == 1 and reply.text  # (the mock calls one tool per user message)
    items = await agent.session.get_items()
    assert item_kinds(items) == ["user", "function_call", "function_call_output", "message"]
    await agent.close()


NESTED = '''
from agents import Agent, GuardrailFunctionOutput, Runner, function_tool, input_guardrail

helper = Agent(name="helper", instructions="Answer from the question.", model="mock")
checker = Agent(name="checker", instructions="Say whether the message is safe.", model="mock")


@function_tool
async def ask_helper(question: str) -> str:
    """Ask the helper agent."""
    result = await Runner.run(helper, question)  # a run of its own: no RunConfig from the harness
    return "helper says: " + str(result.final_output)


@input_guardrail
async def safe(ctx, agent, message):
    result = await Runner.run(checker, message, context=ctx.context)  # the SDK docs' guardrail that runs an agent
    return GuardrailFunctionOutput(output_info=str(result.final_output), tripwire_triggered=False)


outer = Agent(name="outer", instructions="Use your tools.", model="mock-tools", tools=[ask_helper],
              input_guardrails=[safe])
'''


async def test_agents_run_inside_tools_and_guardrails_use_the_endpoint_and_are_counted(mock_llm: MockLLMServer,
                                                                                     tmp_path: Path) -> None:
    """A tool or guardrail that runs its own agent gets no RunConfig from the harness: it went to /v1/responses (404 on
    a chat-completions endpoint) and its calls were not counted. The whole run is on the endpoint's chat
    completions now, and every call of the turn is in its usage."""
    path = tmp_path / "nested_agents.py"
    path.write_text(NESTED)
    agent = make(path, "outer", tmp_path / "n" / "main")
    reply = await agent.reply(msg(0, "What is my cat called?"))
    await agent.close()
    paths = {r.get("model") for r in mock_llm.requests}
    assert reply.text.startswith("helper says:")
    assert mock_llm.stats["ok_replies"] == 4 and paths == {"mock", "mock-tools"}  # outer x2, helper, checker
    sent = [mock_llm._count(r["messages"], "")[0] for r in mock_llm.requests]
    assert reply.prompt_tokens == sum(sent)  # all four calls, the nested ones too
