"""Each LangChain/LangGraph form, written as the tutorials write it, run by `run` on the mock model: it scores above
`null`, and a run cut short (its event log missing its last turns, as after a kill) resumes to the same results
without asking the model again for the turns it kept (issue 28: the forms table)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ltm_harness._api import run_async
from ltm_harness._llm.mock_server import MockLLMServer
from ltm_harness.testing import make_config

FORMS = '''
import os

from langchain_core.chat_history import InMemoryChatMessageHistory
from langchain_core.messages import SystemMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.func import entrypoint
from langgraph.graph.message import add_messages
from langgraph.prebuilt import create_react_agent

from {sibling} import INSTRUCTIONS

model = ChatOpenAI(model="mock", base_url=os.environ["FORMS_URL"], api_key="x", temperature=0)

prompt = ChatPromptTemplate.from_messages([("system", INSTRUCTIONS), MessagesPlaceholder("history"),
                                           ("human", "{{input}}")])
store = {{}}
with_history = RunnableWithMessageHistory(prompt | model, lambda session_id: store.setdefault(
    session_id, InMemoryChatMessageHistory()), input_messages_key="input", history_messages_key="history")


@entrypoint()
def workflow(inputs: list, *, previous: list | None = None):
    messages = add_messages(previous or [], inputs)
    reply = model.invoke([SystemMessage(INSTRUCTIONS), *messages])
    return entrypoint.final(value=reply, save=add_messages(messages, [reply]))


@tool
def search_notes(query: str) -> str:
    """Search the user's notes."""
    return "No note found."


react = create_react_agent(model, [search_notes], prompt=INSTRUCTIONS)
'''


@pytest.fixture
def forms(tmp_path: Path) -> Path:
    sibling = f"instructions_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{sibling}.py").write_text('INSTRUCTIONS = "You are a helpful assistant with a good memory."\n')
    path = tmp_path / "forms.py"
    path.write_text(FORMS.format(sibling=sibling))
    return path


def cut(run: Path, agent: str, lines: int) -> None:
    """The run as a kill would leave it: the agent's logs missing their last `lines` lines, no results yet."""
    folder = run / agent
    for name in ("results.json", "summary.json"):
        (folder / name).unlink(missing_ok=True)
    (run / "summary.json").unlink(missing_ok=True)
    for log in [folder / "events.jsonl", *folder.glob("events/*.jsonl")]:
        if log.is_file():
            kept = log.read_bytes().splitlines(keepends=True)
            log.write_bytes(b"".join(kept[:max(len(kept) - lines, 1)]))


@pytest.mark.parametrize("name", ["with_history", "workflow", "react"])
async def test_each_form_scores_above_null_and_resumes_to_the_same_results(forms, tmp_path, monkeypatch, name):
    cfg = make_config(["colours", "kv"], span=1000)
    async with MockLLMServer() as server:
        monkeypatch.setenv("FORMS_URL", server.url)
        spec = f"{name}=langgraph:{forms}:{name}"
        whole = await run_async(cfg, [spec, "null"], results=tmp_path / "whole")
        score = whole.agent_summary(name).benchmark_score
        assert score > whole.agent_summary("null").benchmark_score, (name, whole.summary.errors)
        shutil.copytree(tmp_path / "whole", tmp_path / "cut")
        cut(tmp_path / "cut" / whole.path.name, name, 3)
        server.requests.clear()
        resumed = await run_async(cfg, [spec, "null"], results=tmp_path / "cut", resume=True)
        assert resumed.results(name) == whole.results(name)
        assert 0 < len(server.requests) <= 3 * (2 if name == "react" else 1)  # only the turns it lost
