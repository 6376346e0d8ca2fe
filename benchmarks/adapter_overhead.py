"""What the framework adapters add per turn: the framework called directly vs through the harness's adapter.

For each framework the same conversation is played twice on a store in a temporary folder: once calling the
framework as its documentation shows (LangGraph: `graph.ainvoke({"messages": [message]}, config)` on an
`AsyncSqliteSaver`; the Agents SDK: `Runner.run(agent, text, session=SQLiteSession(...))`), once through the
adapter's `reply` (and `observe` for history turns). The models answer at once, without a network (a graph node that
returns an AI message with its usage; an SDK `Model` that returns a canned message), so what is measured is the
framework and its store, plus the adapter's own work: the timestamp prefix, the message id and turn tag, reading
the reply and its usage, pricing it, and the turn protocol.

Prints CPU microseconds per turn for each (all threads of the process), and the difference. Every fourth turn is history (`observe`: directly,
`aupdate_state` as the input then END / `session.add_items`).

Run: `python benchmarks/adapter_overhead.py [--turns 200] [--repeats 4]`.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Awaitable, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ltm_harness._agents.base import AgentMessage  # noqa: E402
from ltm_harness._agents.frameworks.base import FrameworkAgent  # noqa: E402

GRAPH = '''
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph


def respond(state):
    return {"messages": [AIMessage(content="Noted.", usage_metadata={"input_tokens": 10 * len(state["messages"]),
                                   "output_tokens": 3, "total_tokens": 10 * len(state["messages"]) + 3},
                                   response_metadata={"model_name": "gpt-4o-mini"})]}


builder = StateGraph(MessagesState)
builder.add_node("respond", respond)
builder.add_edge(START, "respond")
builder.add_edge("respond", END)
graph = builder.compile()
'''

SDK_AGENT = '''
from agents import Agent, ModelResponse, Usage
from agents.models.interface import Model
from agents.testing import assistant_message


class Instant(Model):
    """Answers every request at once, with no network."""

    async def get_response(self, system_instructions, input, *args, **kwargs):
        return ModelResponse(output=[assistant_message("Noted.")], usage=Usage(requests=1, input_tokens=10,
                             output_tokens=3, total_tokens=13), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError


agent = Agent(name="bench", instructions="Answer briefly.", model=Instant())
'''

T0 = datetime(2024, 1, 1, 9, 0, tzinfo=timezone.utc)


def conversation(turns: int) -> list[AgentMessage]:
    return [AgentMessage(text=f"Fact {i}: the value of key {i} is {i * 7}. Please remember it.",
                         timestamp=T0 + timedelta(minutes=i), tokens=16, observe=i % 4 == 3) for i in range(turns)]


async def timed(play: Callable[[AgentMessage], Awaitable[Any]], messages: list[AgentMessage]) -> float:
    """CPU microseconds per turn, of this process's threads (the stores' SQLite work runs in threads): on a shared
    machine, wall-clock time mostly measures the other processes."""
    started = time.process_time()
    for message in messages:
        await play(message)
    return (time.process_time() - started) / len(messages) * 1e6


async def langgraph_direct(folder: Path, messages: list[AgentMessage]) -> float:
    import aiosqlite
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from langgraph.graph import END, START

    from ltm_harness._registry.loading import load_object

    conn = await aiosqlite.connect(str(folder / "direct.sqlite"))
    graph = load_object(f"{folder / 'graph.py'}:graph", "bench").copy(update={"checkpointer": AsyncSqliteSaver(conn)})
    config = {"configurable": {"thread_id": "direct"}}

    async def play(message: AgentMessage) -> None:
        if message.observe:
            await graph.aupdate_state(config, {"messages": [HumanMessage(message.text)]}, as_node=START)
            await graph.aupdate_state(config, None, as_node=END)
        else:
            out = await graph.ainvoke({"messages": [HumanMessage(message.text)]}, config)
            assert out["messages"][-1].content == "Noted."

    try:
        return await timed(play, messages)
    finally:
        await conn.close()


async def sdk_direct(folder: Path, messages: list[AgentMessage]) -> float:
    from agents import RunConfig, Runner, SQLiteSession

    from ltm_harness._registry.loading import load_object

    agent = load_object(f"{folder / 'sdk_agent.py'}:agent", "bench")
    session = SQLiteSession("direct", folder / "direct.sqlite")
    run_config = RunConfig(tracing_disabled=True)

    async def play(message: AgentMessage) -> None:
        if message.observe:
            await session.add_items([{"role": "user", "content": message.text}])
        else:
            result = await Runner.run(agent, message.text, session=session, run_config=run_config)
            assert result.final_output == "Noted."

    try:
        return await timed(play, messages)
    finally:
        session.close()


async def through_adapter(agent: FrameworkAgent, folder: Path, messages: list[AgentMessage]) -> float:
    agent.state_dir = folder / "state" / "main"

    async def play(message: AgentMessage) -> None:
        if message.observe:
            await agent.observe(message)
        else:
            assert (await agent.reply(message)).text == "Noted."

    try:
        return await timed(play, messages)
    finally:
        await agent.close()


async def one(name: str, adapter: bool, messages: list[AgentMessage]) -> float:
    """One play of the conversation on a fresh store, directly or through the adapter (microseconds per turn)."""
    from ltm_harness._agents.frameworks.langgraph import LangGraphAgent
    from ltm_harness._agents.frameworks.openai_agents import OpenAIAgentsAgent

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "graph.py").write_text(GRAPH)
        (folder / "sdk_agent.py").write_text(SDK_AGENT)
        if name == "langgraph":
            if not adapter:
                return await langgraph_direct(folder, messages)
            return await through_adapter(LangGraphAgent(f"langgraph:{folder / 'graph.py'}:graph"), folder, messages)
        if not adapter:
            return await sdk_direct(folder, messages)
        agent = OpenAIAgentsAgent(f"openai-agents:{folder / 'sdk_agent.py'}:agent",
                                  base_url="http://127.0.0.1:9/v1")  # never called: the model is local
        return await through_adapter(agent, folder, messages)


async def measure(turns: int, repeats: int) -> None:
    messages = conversation(turns)
    print(f"{turns} turns ({sum(m.observe for m in messages)} of them history); CPU microseconds per turn, median (and "
          f"fastest) of {repeats} plays each, direct and adapter alternating, after one untimed play of each")
    print(f"{'framework':<15} {'direct':>18} {'adapter':>18} {'added (median)':>16}")
    for name in ("langgraph", "openai-agents"):
        await one(name, False, messages[:20])  # warm up: imports, first-call caches
        await one(name, True, messages[:20])
        direct, adapted = [], []
        for k in range(repeats):
            for adapter in ((False, True) if k % 2 == 0 else (True, False)):
                (adapted if adapter else direct).append(await one(name, adapter, messages))
        d, a = statistics.median(direct), statistics.median(adapted)
        print(f"{name:<15} {d:>9,.0f} ({min(direct):>6,.0f}) {a:>9,.0f} ({min(adapted):>6,.0f}) "
              f"{a - d:>+9,.0f} ({(a - d) / d:+.1%})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=4)
    args = parser.parse_args()
    asyncio.run(measure(args.turns, args.repeats))


if __name__ == "__main__":
    main()
