"""A LangGraph graph with a long-term store (`compile(store=InMemoryStore())`, a node's `store.put`/`search`, as the
LangGraph docs teach long-term memory): each conversation has its own part of the store, history reaches it (the
graph runs), independent questions never see what an earlier question wrote, and a resumed run in a new process gets
the store back as it was after the recorded turns."""

from __future__ import annotations

from pathlib import Path

from ltm_harness._agents.frameworks.langgraph import LangGraphAgent
from ltm_harness._agents.frameworks.langgraph_longterm import JOURNAL
from tests.agents.test_langgraph_adapter import msg

GRAPH = '''
from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore


def remember(state: MessagesState, *, store: BaseStore):
    text = state["messages"][-1].content.partition("] ")[2]
    namespace = ("memories", "user")
    held = [item.value["text"] for item in store.search(namespace, limit=1000)]
    store.put(namespace, f"m{len(held)}", {"text": text})  # every message is kept, questions too
    return {"messages": [AIMessage(content=" | ".join(held) if text.endswith("?") else "Noted.")]}


builder = StateGraph(MessagesState)
builder.add_node("remember", remember)
builder.add_edge(START, "remember")
graph = builder.compile(store=InMemoryStore())
'''


def graph_file(folder: Path, name: str = "store_graph.py") -> Path:
    path = folder / name
    path.write_text(GRAPH)
    return path


def make(path: Path, state_dir: Path | None) -> LangGraphAgent:
    agent = LangGraphAgent(f"langgraph:{path}:graph")
    agent.state_dir = state_dir
    return agent


HISTORY = [msg(0, "My cat is called Tom.", observe=True), msg(1, "I live in Oslo.", observe=True)]


async def test_history_reaches_the_store_and_independent_questions_never_see_each_other(tmp_path: Path) -> None:
    agent = make(graph_file(tmp_path), tmp_path / "state" / "conv-1")
    assert not agent.ingests  # the graph's nodes write the store: history runs the graph
    for m in HISTORY:
        await agent.observe(m)
    point = await agent.snapshot()
    first = await agent.reply(msg(2, "What is my cat called?"))
    await agent.rewind(point)
    second = await agent.reply(msg(3, "Where do I live?"))
    await agent.close()
    assert first.text == "My cat is called Tom. | I live in Oslo."
    assert second.text == first.text  # the first question, which the node stored, was rolled back with the thread


async def test_conversations_sharing_the_users_store_each_have_their_own_part(tmp_path: Path) -> None:
    path = graph_file(tmp_path)
    one, two = make(path, tmp_path / "s" / "one"), make(path, tmp_path / "s" / "two")
    await one.observe(HISTORY[0])
    await two.observe(HISTORY[1])
    assert (await one.reply(msg(2, "What do you know?"))).text == "My cat is called Tom."
    assert (await two.reply(msg(2, "What do you know?"))).text == "I live in Oslo."
    namespaces = await one._user_store.alist_namespaces()  # the user's one store: each conversation under its name
    assert sorted(namespaces) == [("ltm-harness", "one", "memories", "user"), ("ltm-harness", "two", "memories", "user")]
    await one.close()
    await two.close()


async def test_a_resumed_run_in_a_new_process_gets_the_store_after_exactly_the_recorded_turns(tmp_path: Path) -> None:
    state = tmp_path / "state" / "conv-1"
    first = make(graph_file(tmp_path), state)
    turns = []
    for m in HISTORY:
        await first.observe(m)
        turns.append((m, "Noted."))
    await first.reply(msg(2, "I have a dog too."))  # taken in just before the kill: never recorded
    await first.close()
    assert len((state / JOURNAL).read_text().splitlines()) == 3
    again = make(graph_file(tmp_path, "store_graph_new_process.py"), state)  # a new module: an empty InMemoryStore
    await again.restore(turns)
    assert (await again.reply(msg(3, "What do you know?"))).text == "My cat is called Tom. | I live in Oslo."
    await again.close()
    assert len((state / JOURNAL).read_text().splitlines()) == 3  # cut after turn 2, then this turn's write
