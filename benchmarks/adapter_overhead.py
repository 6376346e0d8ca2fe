"""What the framework adapters add per turn: the framework called directly vs through the harness's adapter.

For each framework the same conversation is played twice on a store in a temporary folder: once calling the
framework as its documentation shows (LangGraph: `graph.ainvoke({"messages": [message]}, config)` on an
`AsyncSqliteSaver`; the Agents SDK: `Runner.run(agent, text, session=SQLiteSession(...))`; mem0: `search`, a chat
completion with the memories found, `add` (user + reply), on local Qdrant and its history DB; Letta:
`agents.messages.create`), once through the adapter's `reply` (and `observe` for history turns). The LangGraph and
SDK models answer at once, without a network (a graph node that returns an AI message with its usage; an SDK `Model`
that returns a canned message); mem0's models are the mock LLM (mock-memory, mock-embed) and Letta is the tests' fake
Letta server, each in a process of its own on 127.0.0.1, so only the client's side is measured. What is measured is
the framework and its store, plus the adapter's own work: the timestamp prefix, the message id and turn tag, reading
the reply and its usage, pricing it, and the turn protocol (for mem0, the undo log's marks in its SQLite files; for
Letta, exporting the agent into the run folder after every turn, which grows with the agent's messages).

Prints CPU microseconds per turn for each (all threads of the process), and the difference; then the adapters'
shared turn protocol alone, over a store that does nothing (the part of the added time that is not the framework's
work). Every fourth turn is history (`observe`; directly: `aupdate_state` as the input then END /
`session.add_items`). On a busy machine the difference between two plays varies by a few percent either way: compare
it with the protocol's own time.

Run: `python benchmarks/adapter_overhead.py [--turns 200] [--repeats 4] [--frameworks langgraph,mem0,...]`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterator
from contextlib import ExitStack, contextmanager

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ltm_harness._agents.base import AgentMessage  # noqa: E402
from ltm_harness._agents.frameworks.base import Answer, FrameworkAgent, ModelUsage  # noqa: E402

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


MEM0_EXAMPLE = ROOT / "examples" / "agents" / "mem0.yml"
FRAMEWORKS = ("langgraph", "openai-agents", "mem0", "letta")


async def mem0_direct(folder: Path, messages: list[AgentMessage], url: str) -> float:
    os.environ["MEM0_TELEMETRY"] = "False"
    from mem0 import AsyncMemory
    from openai import AsyncOpenAI
    from qdrant_client import QdrantClient

    qdrant = QdrantClient(path=str(folder / "direct-qdrant"))
    memory = AsyncMemory.from_config({
        "llm": {"provider": "openai", "config": {"model": "mock-memory", "openai_base_url": url, "api_key": "x"}},
        "embedder": {"provider": "openai", "config": {"model": "mock-embed", "embedding_dims": 256,
                                                      "openai_base_url": url, "api_key": "x"}},
        "vector_store": {"provider": "qdrant", "config": {"client": qdrant, "embedding_model_dims": 256}},
        "history_db_path": str(folder / "direct-history.db")})
    chat = AsyncOpenAI(base_url=url, api_key="x")

    async def play(message: AgentMessage) -> None:
        if message.observe:
            await memory.add([{"role": "user", "content": message.text}], user_id="direct")
            return
        found = await memory.search(message.text, filters={"user_id": "direct"}, top_k=10)
        memories = "\n".join(f"- {m['memory']}" for m in found["results"])
        out = await chat.chat.completions.create(model="mock-memory", messages=[
            {"role": "system", "content": f"Answer from what you remember:\n{memories}"},
            {"role": "user", "content": message.text}])
        reply = out.choices[0].message.content
        assert reply == "Noted."
        await memory.add([{"role": "user", "content": message.text}, {"role": "assistant", "content": reply}],
                         user_id="direct")

    try:
        return await timed(play, messages)
    finally:
        memory.close()
        qdrant.close()
        await chat.close()


async def letta_direct(folder: Path, messages: list[AgentMessage], url: str) -> float:
    from letta_client import AsyncLetta

    client = AsyncLetta(base_url=url)
    agent = await client.agents.create(name="direct", model="openai/mock", embedding="openai/mock-embed")

    async def play(message: AgentMessage) -> None:
        response = await client.agents.messages.create(agent.id, messages=[{"role": "user", "content": message.text}])
        assert [m.content for m in response.messages if m.message_type == "assistant_message"] == ["Noted."]

    try:
        return await timed(play, messages)
    finally:
        await client.close()


LETTA_SERVER = """
import asyncio, sys
from ltm_harness._registry.loading import load_module_file
from pathlib import Path
fake = load_module_file(Path(sys.argv[1]) / "tests" / "agents" / "conftest.py", "bench_fakes").FakeLetta()
async def serve():
    print(await fake.start(), flush=True)
    await asyncio.Event().wait()
asyncio.run(serve())
"""


@contextmanager
def server(command: list[str], pick: Callable[[str], str]) -> Iterator[str]:
    """A server in a process of its own (its CPU time is not the client's), and its URL from its first line."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert proc.stdout is not None
        yield pick(proc.stdout.readline())
    finally:
        proc.terminate()
        proc.wait()


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


async def one(name: str, adapter: bool, messages: list[AgentMessage], urls: dict[str, str]) -> float:
    """One play of the conversation on a fresh store, directly or through the adapter (microseconds per turn)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "graph.py").write_text(GRAPH)
        (folder / "sdk_agent.py").write_text(SDK_AGENT)
        if name == "langgraph":
            from ltm_harness._agents.frameworks.langgraph import LangGraphAgent

            if not adapter:
                return await langgraph_direct(folder, messages)
            return await through_adapter(LangGraphAgent(f"langgraph:{folder / 'graph.py'}:graph"), folder, messages)
        if name == "mem0":
            from ltm_harness._agents.frameworks.mem0 import Mem0Agent

            if not adapter:
                return await mem0_direct(folder, messages, urls["mem0"])
            return await through_adapter(Mem0Agent(f"mem0:{MEM0_EXAMPLE}", base_url=urls["mem0"]), folder, messages)
        if name == "letta":
            from ltm_harness._agents.frameworks.letta import LettaAgent

            if not adapter:
                return await letta_direct(folder, messages, urls["letta"])
            return await through_adapter(LettaAgent(f"letta:{urls['letta']}?model=openai/mock"), folder, messages)
        from ltm_harness._agents.frameworks.openai_agents import OpenAIAgentsAgent

        if not adapter:
            return await sdk_direct(folder, messages)
        agent = OpenAIAgentsAgent(f"openai-agents:{folder / 'sdk_agent.py'}:agent",
                                  base_url="http://127.0.0.1:9/v1")  # never called: the model is local
        return await through_adapter(agent, folder, messages)


class Bare(FrameworkAgent):
    """The adapters' shared protocol over a store that does nothing: what every turn costs before the framework."""

    kind = "bare"

    async def _open(self) -> None:
        pass

    async def _answer(self, text: str, turn: int) -> Answer:
        return Answer("Noted.", [ModelUsage("gpt-4o-mini", 10 * turn, 3)])

    async def _ingest(self, text: str, turn: int) -> None:
        pass

    async def _rollback(self, turns: int) -> None:
        pass


async def measure(turns: int, repeats: int, frameworks: list[str], urls: dict[str, str]) -> None:
    messages = conversation(turns)
    print(f"{turns} turns ({sum(m.observe for m in messages)} of them history); CPU microseconds per turn, median (and "
          f"fastest) of {repeats} plays each, direct and adapter alternating, after one untimed play of each")
    print(f"{'framework':<15} {'direct':>18} {'adapter':>18} {'added (median)':>16}")
    for name in frameworks:
        await one(name, False, messages[:20], urls)  # warm up: imports, first-call caches
        await one(name, True, messages[:20], urls)
        direct, adapted = [], []
        for k in range(repeats):
            for adapter in ((False, True) if k % 2 == 0 else (True, False)):
                (adapted if adapter else direct).append(await one(name, adapter, messages, urls))
        d, a = statistics.median(direct), statistics.median(adapted)
        print(f"{name:<15} {d:>9,.0f} ({min(direct):>6,.0f}) {a:>9,.0f} ({min(adapted):>6,.0f}) "
              f"{a - d:>+9,.0f} ({(a - d) / d:+.1%})")
    with tempfile.TemporaryDirectory() as tmp:
        bare = [await through_adapter(Bare("bare:x:y"), Path(tmp), messages) for _ in range(repeats)]
    print(f"the adapters' shared turn protocol alone (timestamp, turn count, reply, usage and price): "
          f"{statistics.median(bare):,.1f} CPU microseconds per turn")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--frameworks", default=",".join(FRAMEWORKS), help="comma-separated, of: " + ", ".join(FRAMEWORKS))
    args = parser.parse_args()
    frameworks = [f for f in args.frameworks.split(",") if f]
    if unknown := set(frameworks) - set(FRAMEWORKS):
        parser.error(f"unknown frameworks: {', '.join(sorted(unknown))}")
    urls: dict[str, str] = {}
    with ExitStack() as servers:  # the servers mem0 and Letta talk to, for the frameworks measured
        if "mem0" in frameworks:
            urls["mem0"] = servers.enter_context(server([sys.executable, "-m", "ltm_harness", "mock-llm", "--port", "0"],
                                                        lambda line: line.split(" at ")[1].split()[0]))
        if "letta" in frameworks:
            urls["letta"] = servers.enter_context(server([sys.executable, "-c", LETTA_SERVER, str(ROOT)], str.strip))
        asyncio.run(measure(args.turns, args.repeats, frameworks, urls))


if __name__ == "__main__":
    main()
