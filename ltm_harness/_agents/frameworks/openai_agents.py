"""OpenAI Agents SDK agents: `-a openai-agents:FILE.py:NAME` or `-a openai-agents:MODULE:NAME`.

NAME is an `agents.Agent`. Each conversation is one `SQLiteSession` (its id: the harness's session) on the file
`agents_sdk.sqlite` in the conversation's `state_dir` (in memory when the run keeps no folder); a turn is
`Runner.run(agent, text, session=session, run_config=...)` and the reply is `result.final_output` (structured output
as its JSON). Its usage is every model call the turn made on the endpoint (tool calls, handoffs, and agents run
inside a tool or a guardrail), counted by the endpoint's client as each answer comes back and priced by the model
that answered; an agent given a `Model` object of its own is counted from the run's report (`result.raw_responses`,
priced when the agents that ran share a model).

The model: an agent whose model is a name (or unset: the SDK's default model) is run through chat completions on
the harness's OpenAI-compatible endpoint (`OpenAIChatCompletionsModel` on an `AsyncOpenAI` client for the config's
`openai.base_url`/key, else OPENAI_BASE_URL/OPENAI_API_KEY; a local server needs no key), as `openai:` agents are;
an agent given a `Model` object keeps it. The SDK's process-wide defaults are set to the same client and chat
completions, so an agent that a tool or a guardrail runs by itself (no RunConfig) is on the endpoint too, never on
the Responses API. Tracing is off (`RunConfig(tracing_disabled=True)`, and the SDK's default) unless the spec says
`?tracing=on`.

History that needs no reply (`observe`) is added to the session as a user item (`session.add_items`), with no run
and no model call. Rolling back to turn N (`--resume`, or after a failed turn) deletes the session's items after
those of the first N turns (each turn begins with exactly one user item: the message the harness sent), so the
session is the SDK's memory after exactly those turns, read from its file, not rebuilt.
"""

from __future__ import annotations

import json
import sqlite3
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from agents import Agent as SDKAgent
from agents import (RunConfig, Runner, SQLiteSession, set_default_openai_api, set_default_openai_client,
                    set_tracing_disabled)
from agents.exceptions import UserError
from agents.models.interface import Model, ModelProvider
from agents.models.openai_provider import OpenAIProvider
from pydantic import BaseModel

from ltm_harness._agents.frameworks.base import Answer, FrameworkAgent, ModelUsage, load_target
from ltm_harness._agents.frameworks.store_trust import UntrustedStore, check_tree, stores_trusted
from ltm_harness._errors import AgentError
from ltm_harness._llm.endpoint import Endpoint, resolve_endpoint
from ltm_harness._tokens import DEFAULT_ENCODING

STATE_FILE = "agents_sdk.sqlite"


class OpenAIAgentsAgent(FrameworkAgent):
    description = "an OpenAI Agents SDK Agent (openai-agents:FILE.py:NAME), one SQLiteSession per conversation"
    kind = "openai-agents"
    params = {"tracing": ("off", "on")}

    def __init__(self, spec: str, *, base_url: str | None = None, api_key: str | None = None,
                 tokenizer: str = DEFAULT_ENCODING, runtime: Any = None) -> None:
        super().__init__(spec, tokenizer=tokenizer, runtime=runtime)
        agent = load_target(spec, self.target)
        if not isinstance(agent, SDKAgent):
            raise AgentError(f"agent {spec!r}: the object is a {type(agent).__name__}, not an OpenAI Agents SDK Agent; "
                             "name an agents.Agent(...)")
        self.agent: SDKAgent[Any] = agent
        self._endpoint_args = (base_url, api_key)
        resolve_endpoint(f"agent {spec!r}", base_url, "checked-later")  # the URL's form, before any network
        self.model_name = _model_name(agent.model)
        self._models: EndpointModels | None = None
        self._session: SQLiteSession | None = None
        self._run_config: RunConfig | None = None

    @property
    def session(self) -> SQLiteSession:
        assert self._session is not None, "opened"
        return self._session

    async def _open(self) -> None:
        url, key = self._endpoint_args
        self._models = EndpointModels(resolve_endpoint(f"agent {self.spec!r}", url, key))
        sdk_client(self._models.endpoint)  # nested runs (an agent run inside a tool or a guardrail) go there too
        if self.options["tracing"] == "off":
            set_tracing_disabled(True)  # nested runs included
        self._run_config = RunConfig(model_provider=self._models, tracing_disabled=self.options["tracing"] == "off")
        path = self.state_file(STATE_FILE)
        if path is not None:
            check_tree(path.parent, "Agents SDK")
            check_items(path)
        self._session = SQLiteSession(self.session_name, ":memory:" if path is None else path)

    async def _answer(self, text: str, turn: int) -> Answer:
        calls: list[ModelUsage] = []
        token = _TURN.set(calls)
        try:
            result = await Runner.run(self.agent, text, session=self.session, run_config=self._run_config)
        finally:
            _TURN.reset(token)
        # every call made through the endpoint in this turn (nested runs too); an agent given a Model object of its
        # own makes none there: the run's own report
        return Answer(_output_text(result.final_output), calls or run_usage(result, self.model_name))

    async def _ingest(self, text: str, turn: int, role: str = "user") -> None:
        # the agent's own earlier reply as an assistant item (its text alone: how the harness's items are told apart
        # from the SDK's own output items, which carry a type and a list of content parts)
        await self.session.add_items([{"role": "assistant" if role == "assistant" else "user", "content": text}])

    async def _rollback(self, turns: int) -> None:
        if turns == 0:
            await self.session.clear_session()
            return
        items = await self.session.get_items()
        starts = [i for i, item in enumerate(items) if _starts_turn(item)]  # where each turn begins
        if len(starts) < turns:
            raise AgentError(f"agent {self.spec!r}: cannot be resumed: its session {self.session_name!r} holds "
                             f"{len(starts)} turns, fewer than the {turns} recorded; run it again with --overwrite")
        keep = starts[turns] if len(starts) > turns else len(items)
        for _ in range(len(items) - keep):
            await self.session.pop_item()

    async def _close(self) -> None:
        if self._session is not None:
            self._session.close()
        if self._models is not None:
            await self._models.aclose()

    def _failure(self, exc: BaseException, doing: str) -> AgentError:
        error = super()._failure(exc, doing)
        if isinstance(exc, UserError):  # the SDK says the agent is set up wrong: no retry can help
            error.fatal = True
        return error


class EndpointModels(ModelProvider):
    """Models by name on the harness's endpoint, through chat completions, on the endpoint's shared client
    (`sdk_client`)."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self._provider: OpenAIProvider | None = None

    def get_model(self, model_name: str | None) -> Model:
        if self._provider is None:
            self._provider = OpenAIProvider(openai_client=sdk_client(self.endpoint), use_responses=False)
        return self._provider.get_model(model_name)

    async def aclose(self) -> None:
        self._provider = None  # the shared client stays: nested runs of other conversations may still use it


# -- the whole run on the harness's endpoint, nested runs included ---------------------------------------------------
# A tool or a guardrail that runs an agent of its own (`Runner.run(helper, ...)` inside a function tool) gets no
# RunConfig from the harness: the SDK would send it to its default client through the Responses API (a bare 404 on a
# chat-completions endpoint). So the SDK's process-wide defaults are set too: the endpoint's client, chat completions,
# and tracing as the spec says. Every call through that client is counted where it was made (`_TURN`: the turn whose
# task made it, nested runs included), so a turn's usage is all its calls, not only the top-level run's.
_CLIENTS: dict[tuple[str, str], Any] = {}
_TURN: ContextVar[list[ModelUsage] | None] = ContextVar("ltm_harness_sdk_turn", default=None)


async def _count_call(response: Any) -> None:
    """httpx response hook of the shared client: a chat completion's usage, added to the turn that made the call."""
    calls = _TURN.get()
    if calls is None or response.status_code != 200 or not response.request.url.path.endswith("/chat/completions") \
            or "json" not in response.headers.get("content-type", ""):
        return
    await response.aread()
    try:
        data = json.loads(response.content)
    except ValueError:
        return
    usage = data.get("usage") if isinstance(data, dict) else None
    if isinstance(usage, dict):
        model = data.get("model")
        calls.append(ModelUsage(model if isinstance(model, str) else None, int(usage.get("prompt_tokens") or 0),
                                int(usage.get("completion_tokens") or 0)))


def sdk_client(endpoint: Endpoint) -> Any:
    """The one AsyncOpenAI client of an endpoint in this process, counting its calls (`_count_call`); made the SDK's
    default client with chat completions, so nested runs go there too."""
    key = (endpoint.base_url, endpoint.key.value or "")
    if key not in _CLIENTS:
        from openai import AsyncOpenAI

        from ltm_harness._llm.transport import endpoint_http_client

        http = endpoint_http_client(event_hooks={"response": [_count_call]})  # no redirect followed (_guard.redirects)
        _CLIENTS[key] = AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.key.value, http_client=http)
    client = _CLIENTS[key]
    set_default_openai_client(client, use_for_tracing=False)
    set_default_openai_api("chat_completions")
    return client


def check_items(path: Path) -> None:
    """Every item of the session file is a JSON object, as the SDK writes them (`json.dumps` of each item; it reads
    them with `json.loads` and hands them to the model as input: no pickle, no type named by the file). A row of
    anything else (a pickle, bytes) would make the SDK fail in the middle of a turn: it is refused before, in one
    line. Read with SQLite in read-only mode."""
    if stores_trusted() or not path.is_file():
        return
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return  # the SDK will say it cannot open the file
    try:
        rows = conn.execute("SELECT id, message_data FROM agent_messages").fetchall()
    except sqlite3.Error:
        rows = []  # no items table (yet): the SDK makes it
    finally:
        conn.close()
    for row, data in rows:
        try:
            item = json.loads(data) if isinstance(data, str) else None
        except ValueError:
            item = None
        if not isinstance(item, dict):
            raise UntrustedStore("Agents SDK", path, f"holds an item (row {row}) that is not a JSON object, as the SDK "
                                 "writes them")


def run_usage(result: Any, model: str | None) -> list[ModelUsage]:
    """Every model call of the run (its tool calls, the agents handed off to), one `ModelUsage` each, from the
    run's responses (`raw_responses`); each priced by the model of the agents that ran, when they share one (the
    SDK does not say which agent made which call: with several models, the calls are counted but unpriced)."""
    agents = {id(item.agent): item.agent for item in getattr(result, "new_items", []) if hasattr(item, "agent")}
    models = {_model_name(agent.model) for agent in agents.values()} | {model}
    priced = model if len(models) == 1 else None
    used = [ModelUsage(priced, r.usage.input_tokens, r.usage.output_tokens)
            for r in getattr(result, "raw_responses", []) if r.usage.requests]
    if not used:  # responses not kept: the run's total
        total = result.context_wrapper.usage
        used = [ModelUsage(priced, total.input_tokens, total.output_tokens)] if total.requests else []
    return used


def _model_name(model: Any) -> str | None:
    """The agent's model name, for the price (None: not known)."""
    if isinstance(model, str):
        return model
    if model is None:
        from agents.models import get_default_model

        return get_default_model()
    name = getattr(model, "model", None)
    return name if isinstance(name, str) else None


def _starts_turn(item: Any) -> bool:
    """A user message, or an assistant message the harness put in as history (plain text, no item type)."""
    if not isinstance(item, dict) or item.get("type", "message") != "message":
        return False
    return item.get("role") == "user" or (item.get("role") == "assistant" and "type" not in item
                                           and isinstance(item.get("content"), str))


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, BaseModel):
        return output.model_dump_json()
    return json.dumps(output, default=str)
