"""Every model call a LangGraph turn makes is counted (LangChain callbacks), not only the reply's: a graph that
summarises the thread every third turn (a model call whose message never reaches the thread) is charged for each
call the mock model served."""

from __future__ import annotations

from pathlib import Path

from ltm_harness._agents.frameworks.langgraph import LangGraphAgent
from ltm_harness._llm.mock_server import MockLLMServer
from ltm_harness._llm.pricing import Price, PriceTable
from tests.agents.test_langgraph_adapter import msg

SUMMARISING = '''
from typing import Annotated

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, MessagesState, StateGraph

model = ChatOpenAI(model="mock", base_url="{url}", api_key="x", temperature=0)


class State(MessagesState):
    summary: str


async def respond(state):
    reply = await model.ainvoke([SystemMessage("Summary: " + state.get("summary", "")), *state["messages"]])
    update = {{"messages": [reply]}}
    if len(state["messages"]) % 3 == 0:  # every third turn: summarise (a call of its own)
        summary = await model.ainvoke([*state["messages"], HumanMessage("Summarise the conversation.")])
        update["summary"] = summary.content
    return update


builder = StateGraph(State)
builder.add_node("respond", respond)
builder.add_edge(START, "respond")
builder.add_edge("respond", END)
graph = builder.compile()
'''


async def test_a_summarising_graph_is_charged_for_every_call(tmp_path: Path) -> None:
    async with MockLLMServer() as server:
        path = tmp_path / "summarising.py"
        path.write_text(SUMMARISING.format(url=server.url))
        agent = LangGraphAgent(f"langgraph:{path}:graph")
        agent._prices = PriceTable({"mock": Price(prompt=1.0, completion=2.0)})
        agent.state_dir = tmp_path / "state" / "main"
        counted: list[int] = []
        answer = agent._answer

        async def counting(text: str, turn: int):  # type: ignore[no-untyped-def]
            got = await answer(text, turn)
            counted.append(len(got.usage))
            return got

        agent._answer = counting  # type: ignore[method-assign]
        replies = [await agent.reply(msg(i, f"Fact {i}: the code is {i * 11}.")) for i in range(28)]
        made = server.stats["ok_replies"]
        assert made == 37 == 28 + sum(1 for i in range(28) if (2 * i + 1) % 3 == 0)  # the replies, 9 summaries
        assert sum(counted) == 37  # each call counted once
        sent = sum(server._count(r["messages"], "")[0] for r in server.requests)
        assert sum(r.prompt_tokens or 0 for r in replies) == sent  # every call's prompt counted, summaries too
        cost = sum(r.cost_usd or 0 for r in replies)
        assert abs(cost - sum(((r.prompt_tokens or 0) * 1.0 + (r.completion_tokens or 0) * 2.0) / 1e6
                              for r in replies)) < 1e-9 and cost > 0
        await agent.close()
