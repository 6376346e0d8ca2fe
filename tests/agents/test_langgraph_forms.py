"""The forms LangChain/LangGraph tutorials write agents in, each run by the langgraph: adapter as it is written:
`RunnableWithMessageHistory`, the Functional API (`@entrypoint`, with `previous` and `entrypoint.final`), a prebuilt
ReAct agent with a tool (on the mock's tool-calling model), and a file that imports a module beside it; objects that
are not chat agents are refused in one line saying what was found."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, ToolMessage

from ltm_harness._agents.frameworks.langgraph import LangGraphAgent
from ltm_harness._errors import AgentError
from ltm_harness._llm.mock_server import MockLLMServer
from tests.agents.test_langgraph_adapter import CONVERSATION, msg, play, thread_texts

FORMS = '''
import re

from langchain_core.chat_history import InMemoryChatMessageHistory
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnableLambda
from langchain_core.runnables.history import RunnableWithMessageHistory
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import tool
from langgraph.func import entrypoint
from langgraph.graph.message import add_messages

from {sibling} import words


def answer(messages):
    users = [m.content for m in messages if isinstance(m, HumanMessage)]
    best = max(users[:-1], key=lambda t: len(words(t) & words(users[-1])), default="nothing yet")
    return AIMessage(content=best)


model = RunnableLambda(lambda value: answer(value.to_messages() if hasattr(value, "to_messages") else value))

# RunnableWithMessageHistory, as LangChain's tutorial adds memory to a chain
prompt = ChatPromptTemplate.from_messages([("system", "You are helpful."), MessagesPlaceholder("history"),
                                           ("human", "{{input}}")])
store = {{}}


def get_session_history(session_id):
    return store.setdefault(session_id, InMemoryChatMessageHistory())


with_history = RunnableWithMessageHistory(prompt | model, get_session_history, input_messages_key="input",
                                          history_messages_key="history")
plain_history = RunnableWithMessageHistory(model, get_session_history)


# the Functional API: memory in `previous`, returned with entrypoint.final
@entrypoint()
def workflow(inputs: list, *, previous: list | None = None) -> entrypoint.final[AIMessage, list]:
    messages = add_messages(previous or [], inputs)
    reply = answer(messages)
    return entrypoint.final(value=reply, save=add_messages(messages, [reply]))


@tool
def search_notes(query: str) -> str:
    """Search the notes."""
    return "nothing found"


class Retriever(BaseRetriever):
    def _get_relevant_documents(self, query, *, run_manager=None):
        return []


retriever = Retriever()
prompt_alone = prompt
to_a_tool = prompt | search_notes


def not_decorated(messages):
    return "hi"
'''
SIBLING = '''
import re


def words(text):
    return set(re.findall(r"[a-z]+", text.lower())) - {"what", "is", "my", "the", "a"}
'''


@pytest.fixture
def forms_file(tmp_path: Path) -> Path:
    sibling = f"sibling_{tmp_path.name.replace('-', '_')}"  # a module name of this test's own
    (tmp_path / f"{sibling}.py").write_text(SIBLING)
    path = tmp_path / "forms.py"
    path.write_text(FORMS.format(sibling=sibling))
    return path


def make(path: Path, name: str, state_dir: Path | None = None) -> LangGraphAgent:
    agent = LangGraphAgent(f"langgraph:{path}:{name}")
    agent.state_dir = state_dir
    return agent


@pytest.mark.parametrize("name", ["with_history", "plain_history", "workflow"])
async def test_history_chains_and_workflows_remember_and_resume_from_the_run_folder(forms_file, tmp_path, name):
    """Loaded from a file that imports a module beside it; `session_id` is the harness's; the memory is the thread
    in the run folder, restored to exactly N turns."""
    agent = make(forms_file, name, tmp_path / name / "main")
    turns = await play(agent, [m if name != "workflow" else m.model_copy(update={"observe": False})
                               for m in CONVERSATION])
    assert turns[2][1] == "[2024-01-01 09:00 UTC] My favourite colour is blue."
    assert turns[4][1] == "[2024-01-01 09:01 UTC] The cat is called Tom."
    await agent.close()
    again = make(forms_file, name, tmp_path / name / "main")
    await again.restore(turns[:3])
    reply = await again.reply(msg(5, "What is the cat called?"))
    assert reply.text == "[2024-01-01 09:01 UTC] The cat is called Tom."
    await again.close()


async def test_a_workflow_takes_history_as_turns_it_answers(forms_file, tmp_path):
    agent = make(forms_file, "workflow", tmp_path / "wf" / "main")
    assert agent.functional and not agent.ingests and agent.input_form == "messages"
    said = await agent.observe(msg(0, "My favourite colour is blue.", observe=True))
    assert said is not None and said.text == "nothing yet"  # answered, recorded unscored
    await agent.close()


@pytest.mark.parametrize("name,found", [
    ("search_notes", "a LangChain tool ('search_notes')"), ("retriever", "a retriever (Retriever)"),
    ("prompt_alone", "a prompt template alone (ChatPromptTemplate, no model after it)"),
    ("to_a_tool", "a sequence that ends in a LangChain tool ('search_notes')"),
    ("not_decorated", "a plain function")])
def test_objects_that_are_not_chat_agents_are_refused_saying_what_was_found(forms_file, name, found):
    with pytest.raises(AgentError) as refused:
        make(forms_file, name)
    assert found in str(refused.value) and "\n" not in str(refused.value)


REACT = '''
import os

from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent

NOTES = {{"colour": "Your favourite colour is blue.", "cat": "Your cat is called Tom."}}


@tool
def search_notes(query: str) -> str:
    """Search the user's notes for the query."""
    return next((note for key, note in NOTES.items() if key in query.lower()), "No note found.")


model = ChatOpenAI(model="mock-tools", base_url="{url}", api_key="x", temperature=0)
agent = create_react_agent(model, [search_notes])
'''


async def test_a_react_agent_calls_its_tool_and_every_model_call_is_counted(tmp_path):
    async with MockLLMServer() as server:
        path = tmp_path / "react.py"
        path.write_text(REACT.format(url=server.url))
        agent = make(path, "agent", tmp_path / "react" / "main")
        reply = await agent.reply(msg(0, "Search notes: what is my favourite colour?"))
        assert reply.text == "Your favourite colour is blue."
        assert server.stats["ok_replies"] == 2 and server.stats["tool_calls"] == 1  # the call, then the answer
        prompts = [server._count(request["messages"], "")[0] for request in server.requests]
        assert reply.prompt_tokens == sum(prompts) and len(prompts) == 2  # both calls counted (LangChain callbacks)
        state = await agent.graph.aget_state(agent.thread)
        kinds = [type(m).__name__ for m in state.values["messages"]]
        assert kinds == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]
        assert isinstance(state.values["messages"][2], ToolMessage)
        assert isinstance(state.values["messages"][1], AIMessage) and state.values["messages"][1].tool_calls
        await agent.reply(msg(1, "Search notes for my cat."))  # taken in, then "killed" before it was recorded
        await agent.close()
        made = server.stats["ok_replies"]
        again = make(path, "agent", tmp_path / "react" / "main")
        await again.restore([(msg(0, "x"), reply.text)])
        restored = (await again.graph.aget_state(again.thread)).values["messages"]
        assert [type(m).__name__ for m in restored] == kinds and server.stats["ok_replies"] == made  # nothing sent
        said = await again.reply(msg(1, "Search notes for my cat."))
        assert said.text == "Your cat is called Tom." and len(await thread_texts(again)) == 8
        await again.close()


def test_the_file_folder_is_importable_only_while_it_loads(forms_file):
    """`from sibling import ...` works (as with `python FILE.py`), and the folder is off the path again afterwards."""
    import sys

    make(forms_file, "with_history")
    assert str(forms_file.parent) not in sys.path
