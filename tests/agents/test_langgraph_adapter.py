"""The langgraph: adapter, called directly: the thread is the agent's memory, history goes into it without running
the graph, and restore / a failed turn roll the checkpointer back to exactly N turns (never feeding turns again).

The graphs here answer from the thread without a model: a node that repeats the earlier user message sharing most
words with the question, counting its calls in the module's CALLS list (the test's view of "model calls")."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from ltm_harness._agents.base import AgentMessage
from ltm_harness._agents.frameworks.langgraph import STATE_FILE, TURN_KEY, LangGraphAgent
from ltm_harness._errors import AgentError
from ltm_harness._llm.pricing import PriceTable
from ltm_harness._registry.loading import load_object
from ltm_harness._tokens import get_tokenizer

GRAPH = '''
import asyncio
import re
from typing import Annotated

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.message import add_messages

CALLS = []   # the thread each call of the node saw (its messages' texts)
FAIL = []    # exceptions (or "hang") the next calls meet, in order


def words(text):
    return set(re.findall(r"[a-z]+", text.lower())) - {"what", "is", "my", "the", "a"}


def answer(messages):
    """The earlier user message sharing most words with the last one (the thread is the memory)."""
    texts = [m.content for m in messages]
    CALLS.append(texts)
    if FAIL:
        raise FAIL.pop(0)
    users = [m.content for m in messages if isinstance(m, HumanMessage)]
    best = max(users[:-1], key=lambda t: len(words(t) & words(users[-1])), default="nothing yet")
    return best


async def respond(state):
    if FAIL and FAIL[0] == "hang":
        FAIL.pop(0)
        await asyncio.sleep(30)
    text = answer(state["messages"])
    return {"messages": [AIMessage(content=[{"type": "text", "text": "You said: "}, {"type": "text", "text": text},
                                             {"type": "image_url", "image_url": {"url": "x"}}],
                                   usage_metadata={"input_tokens": 100, "output_tokens": 7, "total_tokens": 107},
                                   response_metadata={"model_name": "gpt-4o-mini"})]}


def plain(state):
    return {"messages": [AIMessage(content=answer(state["messages"]))]}


def build(node, state=MessagesState, **compile_args):
    builder = StateGraph(state)
    builder.add_node("respond", node)
    builder.add_edge(START, "respond")
    builder.add_edge("respond", END)
    return builder.compile(**compile_args)


graph = build(respond)
unpriced = build(plain)
builder = StateGraph(MessagesState)
builder.add_node("respond", respond)
builder.add_edge(START, "respond")
builder.add_edge("respond", END)
with_memory_saver = build(respond, checkpointer=InMemorySaver())
messages_graph = build(lambda messages: [AIMessage(content=answer(messages))], Annotated[list, add_messages])
runnable = RunnableLambda(lambda messages: answer(messages))
prompt = ChatPromptTemplate.from_messages([("system", "Answer from the conversation."), MessagesPlaceholder("messages")])
prompt_chain = prompt | RunnableLambda(lambda prompt: AIMessage(content=answer(prompt.to_messages())))
not_a_graph = 42
question_prompt = ChatPromptTemplate.from_messages([("human", "{question}")]) | RunnableLambda(lambda p: "x")
'''

T0 = datetime(2024, 1, 1, 9, 0, tzinfo=timezone.utc)


def msg(i: int, text: str, observe: bool = False) -> AgentMessage:
    return AgentMessage(text=text, timestamp=T0 + timedelta(minutes=i), tokens=len(text.split()), observe=observe)


@pytest.fixture
def graph_file(tmp_path: Path) -> Path:
    path = tmp_path / "graphs.py"
    path.write_text(GRAPH)
    return path


def module_list(path: Path, name: str) -> list[Any]:
    return load_object(f"{path}:{name}", "test")  # the same module object the adapter loaded (unchanged source)


def make(path: Path, name: str = "graph", state_dir: Path | None = None, query: str = "") -> LangGraphAgent:
    agent = LangGraphAgent(f"langgraph:{path}:{name}{query}")
    agent.state_dir = state_dir
    return agent


async def thread_texts(agent: LangGraphAgent) -> list[str]:
    state = await agent.graph.aget_state(agent.thread)
    assert state.next == ()  # nothing pending: the thread is at rest
    values = state.values
    return [m.content if isinstance(m.content, str) else "".join(
        b["text"] for b in m.content if b.get("type") == "text") for m in (values if isinstance(values, list)
                                                                             else values["messages"])]


CONVERSATION = [msg(0, "My favourite colour is blue."), msg(1, "The cat is called Tom.", observe=True),
                msg(2, "What is my favourite colour?"), msg(3, "I live in Oslo.", observe=True),
                msg(4, "What is the cat called?")]


async def play(agent: LangGraphAgent, messages: list[AgentMessage]) -> list[tuple[AgentMessage, str]]:
    turns = []
    for m in messages:
        if m.observe:
            assert await agent.observe(m) is None
            turns.append((m, ""))
        else:
            turns.append((m, (await agent.reply(m)).text))
    return turns


async def test_replies_come_from_the_thread_and_observed_history_costs_no_graph_run(graph_file, tmp_path):
    agent = make(graph_file, state_dir=tmp_path / "state" / "main")
    calls = module_list(graph_file, "CALLS")
    turns = await play(agent, CONVERSATION)
    assert [r for _, r in turns] == ["You said: nothing yet", "",
                                     "You said: [2024-01-01 09:00 UTC] My favourite colour is blue.", "",
                                     "You said: [2024-01-01 09:01 UTC] The cat is called Tom."]
    assert len(calls) == 3  # the two observed messages ran no node
    assert calls[-1][-2] == "[2024-01-01 09:03 UTC] I live in Oslo."  # ... yet are in the thread the node reads
    assert (tmp_path / "state" / "main" / STATE_FILE).is_file() and agent.session_name == "main"
    assert len(await thread_texts(agent)) == 8
    await agent.close()


async def test_usage_comes_from_usage_metadata_priced_by_model_else_from_the_harness_count(graph_file):
    agent = make(graph_file)
    reply = await agent.reply(msg(0, "Hello there."))
    assert (reply.prompt_tokens, reply.completion_tokens) == (100, 7)
    assert reply.cost_usd == PriceTable().cost("gpt-4o-mini", 100, 7) and reply.cost_usd > 0
    plain = make(graph_file, "unpriced")
    reply = await plain.reply(msg(0, "Hello there."))
    count = get_tokenizer().count
    assert reply.prompt_tokens == count("[2024-01-01 09:00 UTC] Hello there.")
    assert reply.completion_tokens == count(reply.text) and reply.cost_usd is None


async def test_restore_takes_the_thread_back_to_exactly_n_turns_from_the_checkpointer(graph_file, tmp_path):
    state = tmp_path / "state" / "main"
    first = make(graph_file, state_dir=state)
    calls = module_list(graph_file, "CALLS")
    turns = await play(first, CONVERSATION)
    await first.close()  # killed after its last turn reached the checkpointer, before the harness recorded it
    made = len(calls)

    again = make(graph_file, state_dir=state)
    await again.restore(turns[:4])
    assert len(calls) == made  # nothing was sent to the graph again: the thread came from the file
    assert await thread_texts(again) == ["[2024-01-01 09:00 UTC] My favourite colour is blue.",
                                         "You said: nothing yet",
                                         "[2024-01-01 09:01 UTC] The cat is called Tom.",
                                         "[2024-01-01 09:02 UTC] What is my favourite colour?",
                                         "You said: [2024-01-01 09:00 UTC] My favourite colour is blue.",
                                         "[2024-01-01 09:03 UTC] I live in Oslo."]
    replay = await again.reply(CONVERSATION[4])
    assert replay.text == turns[4][1] and len(calls) == made + 1
    assert len(await thread_texts(again)) == 8  # the turn taken before the kill is not in the thread twice
    await again.close()

    third = make(graph_file, state_dir=state)  # restoring an earlier point again (of the last turns the store
    await third.restore(turns[:2])             # keeps: langgraph_store.KEEP_TURNS), and to no turn at all
    assert len(await thread_texts(third)) == 3
    await third.restore([])
    assert (await third.graph.aget_state(third.thread)).values == {}
    await third.close()


async def test_a_failed_or_timed_out_turn_leaves_nothing_in_the_thread(graph_file, tmp_path):
    agent = make(graph_file, state_dir=tmp_path / "s" / "main")
    fail = module_list(graph_file, "FAIL")
    await play(agent, CONVERSATION[:2])
    fail.append(ConnectionError("the model's server went away"))
    with pytest.raises(AgentError) as failed:
        await agent.reply(CONVERSATION[2])
    assert "langgraph failed answering (ConnectionError: the model's server went away)" in str(failed.value)
    assert not failed.value.fatal
    fail.append("hang")
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(agent.reply(CONVERSATION[2]), 0.5)  # cut off by the turn timeout
    await agent.reply(CONVERSATION[2])  # tried again: on the thread as it was after two turns
    texts = await thread_texts(agent)
    assert len(texts) == 5 and texts.count("[2024-01-01 09:02 UTC] What is my favourite colour?") == 1
    state = await agent.graph.aget_state(agent.thread)
    assert state.metadata.get(TURN_KEY) == 3
    await agent.close()


async def test_a_fresh_conversation_starts_an_empty_thread_whatever_the_folder_holds(graph_file, tmp_path):
    state = tmp_path / "state" / "main"
    first = make(graph_file, state_dir=state)
    await play(first, CONVERSATION[:3])
    await first.close()
    fresh = make(graph_file, state_dir=state)
    await fresh.reply(msg(0, "What is my favourite colour?"))
    assert len(await thread_texts(fresh)) == 2
    await fresh.reset()  # a new conversation in the same agent
    await fresh.observe(msg(1, "I am new here.", observe=True))
    assert await thread_texts(fresh) == ["[2024-01-01 09:01 UTC] I am new here."]
    await fresh.close()


@pytest.mark.parametrize("name,form", [("runnable", "dict"), ("prompt_chain", "dict"),
                                       ("messages_graph", "messages"), ("builder", "dict")])
async def test_runnables_list_state_graphs_and_builders_keep_the_conversation_in_a_thread(graph_file, tmp_path,
                                                                                           name, form):
    """A Runnable is handed the thread as it takes it (a list, or {"messages": ...} for a prompt with a `messages`
    placeholder, read from its input schema)."""
    agent = make(graph_file, name, tmp_path / name / "main")
    assert agent.input_form == form  # how the graph (for a Runnable: the one made around it) takes a message
    turns = await play(agent, CONVERSATION)
    assert turns[4][1].endswith("The cat is called Tom.")
    await agent.close()
    again = make(graph_file, name, tmp_path / name / "main")
    await again.restore(turns[:3])
    assert len(await thread_texts(again)) == 5  # a reply (2 messages), an observed one (1), a reply (2)
    await again.close()


async def test_the_input_form_set_in_the_spec_is_the_one_used(graph_file):
    assert make(graph_file, "messages_graph", query="?input=messages").input_form == "messages"
    wrong = make(graph_file, "runnable", query="?input=dict")  # handed {"messages": ...}, it fails: one line
    with pytest.raises(AgentError, match=r"langgraph failed answering \(AttributeError: 'str' object"):
        await wrong.reply(msg(0, "Hello."))


async def test_a_graph_whose_own_checkpointer_forgot_the_thread_cannot_resume_said_in_one_line(graph_file, tmp_path):
    first = make(graph_file, "with_memory_saver", tmp_path / "s" / "main")
    turns = await play(first, CONVERSATION[:3])
    graph_file.write_text(GRAPH + "\n# edited: loaded again, as by a new process, with a new InMemorySaver\n")
    again = make(graph_file, "with_memory_saver", tmp_path / "s" / "main")
    with pytest.raises(AgentError) as failed:
        await again.restore(turns)
    line = str(failed.value)
    assert "cannot be resumed" in line and "InMemorySaver" in line and "\n" not in line
    assert not (tmp_path / "s" / "main" / STATE_FILE).exists()  # the graph's own checkpointer was used


def test_a_runnable_that_takes_no_messages_is_one_line(graph_file):
    with pytest.raises(AgentError, match="its input has no `messages` key \\(it takes question\\); keep the conversation"):
        make(graph_file, "question_prompt")


def test_an_object_that_is_no_graph_or_runnable_is_one_line(graph_file):
    with pytest.raises(AgentError, match="the object is an int, not a compiled LangGraph graph or a LangChain Runnable"):
        make(graph_file, "not_a_graph")
