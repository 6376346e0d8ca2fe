"""Servers for the framework adapters' tests: a fake Letta server, and any test server served from a thread.

A fake Letta server (aiohttp) with the routes `letta-client` 1.x calls for the letta: adapter, in their shapes:

    POST   /v1/agents/                   create an agent (AgentState)
    GET    /v1/agents/{id}               the agent (AgentState)
    DELETE /v1/agents/{id}
    POST   /v1/agents/{id}/messages      a turn (LettaResponse: reasoning, assistant_message, stop_reason, usage)
    GET    /v1/agents/{id}/export        the agent as an agent file (JSON text): the messages in its context only,
                                         no archival passages (as Letta's export route)
    POST   /v1/agents/import             multipart `file`: an agent file -> {"agent_ids": [...]}
    GET    /v1/agents/{id}/archival-memory   its archival passages (Passage list; ascending, after, limit)
    POST   /v1/agents/{id}/archival-memory   insert a passage {text, tags, created_at}
    GET    /fake/stats                   for tests: what was asked of it

An agent's memory is its message history. It answers like the mock LLM's `mock` model (the earlier user sentence that
shares most words with a question, "Noted." to a statement, arithmetic filler as JSON), and counts tokens as the mock
does. `fail_next` makes the next message requests answer 500. Ids are numbered, so runs are repeatable.
With `context=N`, an agent's context holds its last N messages (older ones are evicted: still its history, not in
its exports); a user message starting "Remember:" is also inserted as an archival passage by the agent itself (as a
Letta agent's `archival_memory_insert` does), and answers come from the context and the passages.

`in_thread(server)` serves a FakeLetta or a MockLLMServer from a thread of its own, for tests whose harness runs in a
subprocess (killed and started again while the server keeps its state, as a real server would).

Fixtures: `letta` (a FakeLetta on this test's loop), `letta_in_thread`, `mock_llm_in_thread`.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

import pytest
from aiohttp import web

from ltm_harness._llm.mock_server import MockLLMServer, retrieval_reply
from ltm_harness._tokens import get_tokenizer

DATE = "2024-01-01T00:00:00Z"


class FakeLetta:
    def __init__(self, model: str = "openai/mock", context: int | None = None) -> None:
        self.model = model
        self.context = context
        self.agents: dict[str, dict[str, Any]] = {}
        self.stats: Counter[str] = Counter()
        self.sent: list[tuple[str, str]] = []  # (agent id, user text) of every message request answered
        self.fail_next = 0
        self._ids = 0
        self._tokens = get_tokenizer()
        self._runner: web.AppRunner | None = None
        self.url = ""

    def _id(self, kind: str) -> str:
        self._ids += 1
        return f"{kind}-00000000-0000-4000-8000-{self._ids:012d}"

    def _state(self, agent: dict[str, Any]) -> dict[str, Any]:
        return {"id": agent["id"], "name": agent["name"], "model": agent["model"], "embedding": agent["embedding"],
                "agent_type": "letta_v1_agent", "memory": {"blocks": agent["blocks"]}, "tools": [], "tags": [],
                "created_at": DATE}

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/v1/health/", self._health)
        app.router.add_post("/v1/agents/", self._create)
        app.router.add_post("/v1/agents/import", self._import)
        app.router.add_get("/v1/agents/{agent_id}", self._retrieve)
        app.router.add_delete("/v1/agents/{agent_id}", self._delete)
        app.router.add_post("/v1/agents/{agent_id}/messages", self._message)
        app.router.add_get("/v1/agents/{agent_id}/export", self._export)
        app.router.add_get("/v1/agents/{agent_id}/archival-memory", self._passages)
        app.router.add_post("/v1/agents/{agent_id}/archival-memory", self._insert)
        app.router.add_get("/fake/stats", self._stats)
        return app

    async def _stats(self, request: web.Request) -> web.Response:
        return web.json_response(dict(self.stats))

    def _agent(self, request: web.Request) -> dict[str, Any]:
        agent = self.agents.get(request.match_info["agent_id"])
        if agent is None:
            raise web.HTTPNotFound(text=json.dumps({"detail": "Agent not found"}), content_type="application/json")
        return agent

    def _new(self, name: str, model: str, embedding: str, blocks: list[Any], messages: list[Any]) -> dict[str, Any]:
        agent = {"id": self._id("agent"), "name": name, "model": model, "embedding": embedding, "blocks": blocks,
                 "messages": messages, "passages": []}
        self.agents[agent["id"]] = agent
        return agent

    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response({"version": "fake", "status": "ok"})

    async def _create(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.stats["created"] += 1
        agent = self._new(body.get("name") or "agent", body.get("model") or self.model,
                          body.get("embedding") or "openai/mock-embed", body.get("memory_blocks") or [], [])
        return web.json_response(self._state(agent))

    async def _retrieve(self, request: web.Request) -> web.Response:
        return web.json_response(self._state(self._agent(request)))

    async def _delete(self, request: web.Request) -> web.Response:
        self.agents.pop(self._agent(request)["id"])
        self.stats["deleted"] += 1
        return web.json_response({})

    async def _message(self, request: web.Request) -> web.Response:
        agent = self._agent(request)
        if self.fail_next:
            self.fail_next -= 1
            return web.json_response({"detail": "the model's server went away (fake)"}, status=500)
        body = await request.json()
        texts = [m["content"] if isinstance(m["content"], str) else "".join(p.get("text", "") for p in m["content"])
                 for m in body.get("messages") or [] if m.get("role") == "user"]
        history = agent["messages"]
        for text in texts:
            history.append({"role": "user", "content": text})
            self.sent.append((agent["id"], text))
        for text in texts:
            if "Remember:" in text:
                self._passage(agent, text.split("Remember:", 1)[1].strip(), ["remembered"], DATE)
        remembered = [{"role": "user", "content": p["text"]} for p in agent["passages"]]
        reply = retrieval_reply(remembered + self.in_context(agent))  # what it can see: passages and its context
        prompt = sum(self._tokens.count(m["content"]) + 3 for m in history) + 3
        history.append({"role": "assistant", "content": reply})
        self.stats["messages"] += 1
        return web.json_response({
            "messages": [
                {"id": self._id("message"), "date": DATE, "message_type": "reasoning_message",
                 "reasoning": "The user wrote; I answer from what I remember."},
                {"id": self._id("message"), "date": DATE, "message_type": "assistant_message", "content": reply},
            ],
            "stop_reason": {"stop_reason": "end_turn", "message_type": "stop_reason"},
            "usage": {"message_type": "usage_statistics", "prompt_tokens": prompt,
                      "completion_tokens": self._tokens.count(reply), "total_tokens": prompt, "step_count": 1},
        })

    async def _export(self, request: web.Request) -> web.Response:
        agent = self._agent(request)
        self.stats["exported"] += 1
        schema = {"version": "fake-letta-1", "agents": [{**{k: agent[k] for k in ("name", "model", "embedding",
                                                                                   "blocks")},
                                                          "messages": self.in_context(agent)}]}
        return web.Response(text=json.dumps(schema), content_type="application/json")

    async def _import(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload = form.get("file")
        if not isinstance(upload, web.FileField):
            return web.json_response({"detail": "file is required"}, status=422)
        schema = json.loads(upload.file.read())
        self.stats["imported"] += 1
        ids = [self._new(a["name"], a["model"], a["embedding"], a["blocks"], list(a["messages"]))["id"]
               for a in schema["agents"]]
        return web.json_response({"agent_ids": ids})

    def in_context(self, agent: dict[str, Any]) -> list[dict[str, Any]]:
        messages = agent["messages"]
        return list(messages if self.context is None else messages[-self.context:])

    def _passage(self, agent: dict[str, Any], text: str, tags: list[str] | None, date: str | None) -> dict[str, Any]:
        passage = {"id": self._id("passage"), "text": text, "tags": tags, "created_at": date or DATE}
        agent["passages"].append(passage)
        return passage

    async def _passages(self, request: web.Request) -> web.Response:
        passages = self._agent(request)["passages"]
        after, limit = request.query.get("after"), int(request.query.get("limit", "1000"))
        start = next((i + 1 for i, p in enumerate(passages) if p["id"] == after), 0) if after else 0
        return web.json_response(passages[start:start + limit])

    async def _insert(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.stats["passages_inserted"] += 1
        return web.json_response([self._passage(self._agent(request), body["text"], body.get("tags"),
                                                body.get("created_at"))])

    def turns_of(self, agent_id: str) -> int:
        """The user messages the agent holds."""
        return sum(1 for m in self.agents[agent_id]["messages"] if m["role"] == "user")

    # -- serving -----------------------------------------------------------------------------------------------
    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        self._runner = web.AppRunner(self.app(), access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, host, port).start()
        self.url = f"http://{host}:{self._runner.addresses[0][1]}"
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> "FakeLetta":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


class _Server(Protocol):
    async def start(self, host: str = ..., port: int = ...) -> str: ...

    async def stop(self) -> None: ...


S = TypeVar("S", bound=_Server)


@contextmanager
def in_thread(server: S) -> Iterator[S]:
    """Serve `server` from a thread of its own (with its own event loop) while the block runs."""
    loop = asyncio.new_event_loop()
    started = threading.Event()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(server.start())
        started.set()
        loop.run_forever()
        loop.run_until_complete(server.stop())
        loop.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert started.wait(30), "the server did not start"
    try:
        yield server
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)


@pytest.fixture
async def letta() -> Any:
    async with FakeLetta() as server:
        yield server


@pytest.fixture
def letta_in_thread() -> Iterator[FakeLetta]:
    with in_thread(FakeLetta()) as server:
        yield server


@pytest.fixture
def mock_llm_in_thread() -> Iterator[MockLLMServer]:
    with in_thread(MockLLMServer()) as server:
        yield server
