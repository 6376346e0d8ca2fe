"""OpenAI Agents SDK agents: `-a openai-agents:FILE.py:NAME` or `-a openai-agents:MODULE:NAME`.

NAME is an `agents.Agent`. Each conversation is one `SQLiteSession` (its id: the harness's session) on the file
`agents_sdk.sqlite` in the conversation's `state_dir` (in memory when the run keeps no folder); a turn is
`Runner.run(agent, text, session=session, run_config=...)` and the reply is `result.final_output` (structured output
as its JSON). Its usage is every model call of the run (`result.raw_responses`: tool calls and handoffs included),
priced by the agents' model (unpriced when the agents that ran use different models: the SDK does not say which
agent made which call).

The model: an agent whose model is a name (or unset: the SDK's default model) is run through chat completions on
the harness's OpenAI-compatible endpoint (`OpenAIChatCompletionsModel` on an `AsyncOpenAI` client for the config's
`openai.base_url`/key, else OPENAI_BASE_URL/OPENAI_API_KEY; a local server needs no key), as `openai:` agents are;
an agent given a `Model` object keeps it. Tracing is off (`RunConfig(tracing_disabled=True)`) unless the spec says
`?tracing=on`.

History that needs no reply (`observe`) is added to the session as a user item (`session.add_items`), with no run
and no model call. Rolling back to turn N (`--resume`, or after a failed turn) deletes the session's items after
those of the first N turns (each turn begins with exactly one user item: the message the harness sent), so the
session is the SDK's memory after exactly those turns, read from its file, not rebuilt.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from agents import Agent as SDKAgent
from agents import RunConfig, Runner, SQLiteSession
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
        self._run_config = RunConfig(model_provider=self._models, tracing_disabled=self.options["tracing"] == "off")
        path = self.state_file(STATE_FILE)
        if path is not None:
            check_tree(path.parent, "Agents SDK")
            check_items(path)
        self._session = SQLiteSession(self.session_name, ":memory:" if path is None else path)

    async def _answer(self, text: str, turn: int) -> Answer:
        result = await Runner.run(self.agent, text, session=self.session, run_config=self._run_config)
        return Answer(_output_text(result.final_output), run_usage(result, self.model_name))

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
    """Models by name on the harness's endpoint, through chat completions; the client is made when a model is first
    asked for (an agent given a `Model` object never needs it)."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.client: Any = None
        self._provider: OpenAIProvider | None = None

    def get_model(self, model_name: str | None) -> Model:
        if self._provider is None:
            from openai import AsyncOpenAI

            from ltm_harness._llm.transport import endpoint_http_client

            self.client = AsyncOpenAI(base_url=self.endpoint.base_url, api_key=self.endpoint.key.value,
                                      http_client=endpoint_http_client())  # no redirect followed (_guard.redirects)
            self._provider = OpenAIProvider(openai_client=self.client, use_responses=False)
        return self._provider.get_model(model_name)

    async def aclose(self) -> None:
        if self.client is not None:
            client, self.client = self.client, None
            await client.close()


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
