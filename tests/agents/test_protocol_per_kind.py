"""Independent questions and history that keeps who said it, per agent kind: HTTP agents (with and without the
optional snapshot/rewind requests), the LangGraph and Agents SDK examples, and the mem0 example, on a LoCoMo-shaped
file (no question sees another, calls per question) and on a user-assistant chat (the agent's own earlier replies go
in as its own: an AI message, an assistant item, mem0's assistant role, an HTTP `role`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

import ltm_harness
from ltm_harness import DatasetInterface, TestExample, Wait
from ltm_harness._api import run_async
from ltm_harness._authoring.catalog import DATASETS
from ltm_harness._llm.mock_server import MockLLMServer
from ltm_harness._store.events import TurnEvent
from ltm_harness.testing import make_config, serve_local

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "agents"
LOCOMO = ROOT / "tests" / "data" / "locomo" / "synthetic.json"
QUESTIONS = 11  # in the two conversations of the synthetic file
ASSISTANT_SAID = "For the cello, I recommended practising twenty minutes a day with the teacher Ingrid."


def locomo(**args: Any):
    return make_config([{"name": "locomo", "args": {"data_file": str(LOCOMO), **args}}], span=4000, examples=2)


def question_texts(out, agent: str) -> list[str]:
    return [t.user for events in out.events(agent).values() for t in events if isinstance(t, TurnEvent) and t.question]


def holds(text: str, questions: list[str]) -> int:
    """How many of the questions (their first sentence) the text holds."""
    return sum(q.split("?")[0] in text for q in questions)


class RoleChat(DatasetInterface):
    """A user-assistant chat as history (the assistant's line in its role), then a question on what the assistant
    said."""

    name = "role_chat"
    conversation_per_example = True

    def generate_examples(self, num_examples: int) -> list[TestExample]:
        script = ["I want to learn the cello, any advice?", ASSISTANT_SAID, "Who did you say my cello teacher is?"]
        return [self.make_example(0, script, [False, False, True], ["Ingrid"], observe=[True, True, False],
                                  waits=[Wait(), Wait(), Wait()], roles=["user", "assistant", "user"], oracle_answers=["Ingrid"])]

    def evaluate_correct(self, questions: list[str], responses: list[str], expected: list[Any]):
        ok = "ingrid" in responses[0].lower()
        return float(ok), 1.0, []


@pytest.fixture
def role_chat():
    ltm_harness.register_dataset(RoleChat)
    yield
    DATASETS.unregister("role_chat")


def http_app(can_go_back: bool, seen: list[dict[str, Any]], asked: list[list[str]]) -> web.Application:
    memory: dict[str, list[str]] = {}

    async def chat(request: web.Request) -> web.Response:
        data = await request.json()
        seen.append(data)
        said = memory.setdefault(data["session"], [])
        if data.get("snapshot"):
            if not can_go_back:
                return web.json_response({"error": "message is missing"}, status=400)
            return web.json_response({"snapshot": len(said)})
        if "rewind" in data:
            del said[data["rewind"]:]
            return web.json_response({})
        said.append(f"{data.get('role', 'user')}|{data['message']}")
        if data.get("observe"):
            return web.Response(status=204)
        asked.append(list(said))
        return web.json_response({"reply": "Not mentioned in the conversation."})

    app = web.Application()
    app.router.add_post("/chat", chat)
    return app


@pytest.mark.parametrize("can_go_back", [True, False])
async def test_http_agent_with_and_without_a_way_back(tmp_path, can_go_back):
    seen: list[dict[str, Any]] = []
    asked: list[list[str]] = []
    async with serve_local(http_app(can_go_back, seen, asked)) as url:
        out = await run_async(locomo(), [("web", f"{url}/chat")], results=tmp_path)
    questions = question_texts(out, "web")
    assert len(asked) == QUESTIONS  # one request per question
    summary = out.agent_summary("web").questions
    assert summary is not None
    if can_go_back:
        assert all(holds(" ".join(held), questions) == 1 for held in asked)  # no question saw another
        snapshots = [b for b in seen if b.get("snapshot")]
        rewinds = [b for b in seen if "rewind" in b]
        assert len(snapshots) == 2 and len(rewinds) == QUESTIONS  # one snapshot per conversation, a rewind each
        assert (summary.independent, summary.in_sequence) == (QUESTIONS, 0) and out.warnings == []
    else:
        assert sorted(holds(" ".join(held), questions) for held in asked) == sorted([*range(1, 10), *range(1, 3)])
        assert not any("rewind" in b for b in seen)
        assert (summary.independent, summary.in_sequence) == (0, QUESTIONS)
        assert len(out.warnings) == 1 and "agent web cannot go back" in out.warnings[0]
    # the speakers' roles on the history
    observed = [b for b in seen if b.get("observe")]
    assert {b["role"] for b in observed} == {"Ada", "Bruno", "Chen", "Dara"}


async def test_http_agent_gets_the_assistants_own_lines_in_its_role(tmp_path, role_chat):
    seen: list[dict[str, Any]] = []
    asked: list[list[str]] = []
    async with serve_local(http_app(True, seen, asked)) as url:
        await run_async(make_config(["role_chat"], span=1000), [("web", f"{url}/chat")], results=tmp_path)
    history = [b for b in seen if b.get("observe")]
    assert [b.get("role") for b in history] == [None, "assistant"]  # the user's: no role field
    assert asked == [["user|I want to learn the cello, any advice?", f"assistant|{ASSISTANT_SAID}",
                      "user|Who did you say my cello teacher is?"]]


@pytest.fixture
def examples(tmp_path, monkeypatch):
    """Copies of the shipped examples (they read OPENAI_BASE_URL at import: a copy loads afresh)."""
    copies = tmp_path / "examples"
    copies.mkdir()
    for name in ("langgraph_agent.py", "agents_sdk_agent.py", "mem0.yml"):
        (copies / name).write_bytes((EXAMPLES / name).read_bytes())
    monkeypatch.setenv("LTM_EXAMPLE_MODEL", "mock")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return copies


def chats(server: MockLLMServer) -> list[dict[str, Any]]:
    """The chat model's requests (mem0's own LLM calls ask for JSON; embeddings have no messages)."""
    return [r for r in server.requests if "messages" in r and "response_format" not in r]


async def test_langgraph_and_agents_sdk_examples_answer_each_question_from_the_history(tmp_path, examples,
                                                                                      monkeypatch):
    agents = [("lg", f"langgraph:{examples / 'langgraph_agent.py'}:graph"),
              ("sdk", f"openai-agents:{examples / 'agents_sdk_agent.py'}:agent")]
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        out = await run_async(locomo(), agents, results=tmp_path)
        requests = chats(server)
    assert len(requests) == 2 * QUESTIONS  # one model call per question, none for the history
    questions = question_texts(out, "lg")
    for body in requests:
        text = " ".join(str(m.get("content")) for m in body["messages"])
        assert holds(text, questions) == 1, text[-300:]  # the history and this question alone
        assert not any(m["role"] == "assistant" for m in body["messages"])  # no earlier answer
    for name, _ in agents:
        summary = out.agent_summary(name).questions
        assert summary is not None and (summary.independent, summary.in_sequence) == (QUESTIONS, 0)


async def test_langgraph_and_agents_sdk_keep_the_assistants_lines_as_their_own(tmp_path, examples, monkeypatch,
                                                                               role_chat):
    agents = [("lg", f"langgraph:{examples / 'langgraph_agent.py'}:graph"),
              ("sdk", f"openai-agents:{examples / 'agents_sdk_agent.py'}:agent")]
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        await run_async(make_config(["role_chat"], span=1000), agents, results=tmp_path)
        requests = chats(server)
    assert len(requests) == 2
    for body in requests:
        roles = [(m["role"], str(m["content"])) for m in body["messages"] if m["role"] != "system"]
        assert [r for r, _ in roles] == ["user", "assistant", "user"], roles
        assert roles[1][1] == ASSISTANT_SAID  # as said, no timestamp: the model's own reply


async def test_mem0_example_forgets_each_question_and_stores_the_assistants_lines_as_its_own(tmp_path, examples,
                                                                                            monkeypatch, role_chat):
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        out = await run_async(locomo(), [("m", f"mem0:{examples / 'mem0.yml'}")], results=tmp_path)
        questions = question_texts(out, "m")
        answers = chats(server)
        assert len(answers) == QUESTIONS  # one chat call per question
        for body in answers:  # the memories handed with each question hold no other question
            assert holds(" ".join(str(m.get("content")) for m in body["messages"]), questions) == 1
        summary = out.agent_summary("m").questions
        assert summary is not None and (summary.independent, summary.in_sequence) == (QUESTIONS, 0)
        server.requests.clear()
        await run_async(make_config(["role_chat"], span=1000), [("m", f"mem0:{examples / 'mem0.yml'}")],
                        results=tmp_path / "roles")
        added = [r["messages"][-1]["content"] for r in server.requests if r.get("response_format")]
        assert any(f"assistant: {ASSISTANT_SAID}" in text for text in added), added
