"""Agents on a Letta server: `-a letta:http://HOST:PORT` or `-a letta:http://HOST:PORT/AGENT`.

Each conversation has an agent of its own on the server (`letta-client`'s `AsyncLetta`; its key, if the server takes
one, from LETTA_API_KEY). Without AGENT, one is created (`agents.create`: the model and embedding handles from
`?model=...&embedding=...`, else `openai/gpt-4o-mini` and `openai/text-embedding-3-small`, and empty `human` and
`persona` blocks). With AGENT (an agent id), that agent is a template: each conversation works on a copy of it
(`export_file` + `import_file`), so the agent itself is never changed and parallel conversations never mix.

A turn is `agents.messages.create(agent_id, messages=[{"role": "user", "content": text}])`; the reply is the text of
its `assistant_message` entries (joined by line breaks when there are several), its usage the response's `usage`
(priced by the agent's model). History that needs no reply is sent the same way (its reply recorded, unscored):
Letta adds to an agent's memory only through its own steps.

Resume. After every turn the agent is exported (`export_file`) into the conversation's `state_dir` (a temporary
folder when the run keeps none), as `letta/turn-N.af` (the last two turns kept; `turn-0.af` is the agent as made),
with its archival passages (`agents.passages.list`, page by page) as `turn-N.passages.json`, beside `agent.json`, the
id of the agent the conversation is on. Going back to turn N (`--resume`, or after a failed turn) imports `turn-N.af`
as a new agent, gives it the saved passages it lacks (`agents.passages.create`, with their tags and times: Letta's
export route holds no passages), the conversation goes on with it, and the agent it replaces (one the adapter made)
is deleted: Letta's own saved state, not a replay. An export costs the size of the agent (its messages) on every
turn.

What a resume cannot restore. Letta's export holds the messages in the agent's context (its memory blocks too), not
the ones evicted from it, and letta-client has no route that puts a message into an agent's history without a step.
When an export holds fewer user messages than the turns sent, the adapter says so once, in one line (a warning of
the `ltm_harness.letta` logger): when it first happens, and at the start of a resumed run.

Every file is signed (`store_trust.write_signed`): an agent file names code (its tools' Python source, which the
Letta server runs), so one the harness did not write on this machine is refused before it is sent to a server
(docs/security.md); an unsigned `agent.json` is ignored (its agent is not deleted).
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
from letta_client import (APIConnectionError, APIStatusError, APITimeoutError, AsyncLetta, DefaultAsyncHttpxClient,
                          NotFoundError)
from letta_client.types.agents import AssistantMessage

from ltm_harness._agents.frameworks.base import Answer, FrameworkAgent, ModelUsage, content_text
from ltm_harness._agents.frameworks.sqlite_undo import KEEP
from ltm_harness._agents.frameworks.store_trust import UntrustedStore, check_tree, read_signed, write_signed
from ltm_harness._errors import AgentError
from ltm_harness._guard.limits import clip
from ltm_harness._guard.redact import redact, redact_url, remember_secret
from ltm_harness._guard.redirects import FOLLOW_ON_ENDPOINTS
from ltm_harness._tokens import DEFAULT_ENCODING

STATE = "letta"  # the folder of the exports in state_dir
DEFAULT_MODEL = "openai/gpt-4o-mini"
DEFAULT_EMBEDDING = "openai/text-embedding-3-small"
PERSONA = "I am a helpful assistant in a long conversation with one user. I remember what they tell me."
_PARAMS = ("model", "embedding")
PAGE = 100  # archival passages read per request
PREFLIGHT_TIMEOUT = 10.0  # seconds for the check before the first turn


def parse_letta_spec(spec: str) -> tuple[str, str | None, dict[str, str]]:
    """`letta:URL[/AGENT][?model=...&embedding=...]` -> (the server's base URL, AGENT or None, parameters)."""
    kind, _, rest = spec.partition(":")
    shown = redact(spec)  # as errors show it: no user:password, no query value
    parts = urlsplit(rest.strip())
    if kind != "letta" or parts.scheme not in ("http", "https") or not parts.hostname:
        raise AgentError(f"agent {shown!r}: write letta:http://HOST:PORT or letta:http://HOST:PORT/AGENT_ID")
    if parts.username or parts.password:
        raise AgentError(f"agent 'letta:{redact_url(rest.strip())}': give the Letta server's key in LETTA_API_KEY, "
                         "not in the URL")
    params: dict[str, str] = {}
    try:
        pairs = parse_qsl(parts.query, keep_blank_values=True, strict_parsing=bool(parts.query))
    except ValueError:
        raise AgentError(f"agent {shown!r}: the parameters after '?' must be KEY=VALUE pairs joined by '&'") from None
    for key, value in pairs:
        if key not in _PARAMS or not value:
            raise AgentError(f"agent {shown!r}: unknown or empty parameter {clip(key)}; known parameters of letta: "
                             f"{', '.join(_PARAMS)} (handles such as openai/gpt-4o-mini)")
        params[key] = value
    path = parts.path.strip("/")
    if "/" in path:
        raise AgentError(f"agent {shown!r}: after the server's address give only an agent id, e.g. "
                         "letta:http://localhost:8283/agent-1234")
    base = f"{parts.scheme}://{parts.netloc}"
    return base, path or None, params


class LettaAgent(FrameworkAgent):
    usage_note = ("the Letta server's model calls are counted as its replies report them; its embedding calls are "
                  "not")
    description = "an agent on a Letta server (letta:http://HOST:PORT[/AGENT]), exported into the run folder"
    kind = "letta"
    ingests = False  # history goes in as messages: see the module's docstring

    def __init__(self, spec: str, *, timeout: float | None = None, tokenizer: str = DEFAULT_ENCODING,
                 runtime: Any = None) -> None:
        super().__init__(spec, tokenizer=tokenizer, runtime=runtime)
        self.base_url, self.template, params = parse_letta_spec(spec)
        self.model = params.get("model", DEFAULT_MODEL)
        self.embedding = params.get("embedding", DEFAULT_EMBEDDING)
        self.timeout = timeout
        self._client: AsyncLetta | None = None
        self.agent_id: str | None = None
        self._model_name: str | None = None  # the agent's model, for the price
        self._folder: Path | None = None  # the exports' folder (in state_dir)
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._said_incomplete = False

    def parse_spec(self, spec: str) -> tuple[str, dict[str, str]]:
        base, agent, params = parse_letta_spec(spec)
        return base + (f"/{agent}" if agent else ""), params

    @property
    def client(self) -> AsyncLetta:
        assert self._client is not None, "opened"
        return self._client

    async def preflight(self) -> str | None:
        """Before the run writes anything: the server answers its health route (`GET /v1/health/`, one try of at
        most PREFLIGHT_TIMEOUT seconds), and a template agent named in the spec exists on it; else one line."""
        client = AsyncLetta(base_url=self.base_url, timeout=PREFLIGHT_TIMEOUT, max_retries=0,  # no redirect followed
                            http_client=DefaultAsyncHttpxClient(timeout=PREFLIGHT_TIMEOUT,
                                                                follow_redirects=FOLLOW_ON_ENDPOINTS))
        shown = redact(self.spec)
        try:
            try:
                await client.health()
            except (APIConnectionError, APITimeoutError) as exc:
                raise AgentError(f"agent {shown!r}: no Letta server answers at {redact_url(self.base_url)} "
                                 f"({type(exc).__name__}); start it (letta server) or fix the address", fatal=True) from None
            except APIStatusError as exc:
                raise AgentError(f"agent {shown!r}: the server at {redact_url(self.base_url)} answered its health check "
                                 f"with HTTP {exc.status_code}; is it a Letta server?", fatal=True) from None
            if self.template is not None:
                try:
                    await client.agents.retrieve(self.template)
                except NotFoundError:
                    raise AgentError(f"agent {shown!r}: the Letta server has no agent {clip(self.template)} to copy; "
                                     "give an id that `letta` lists, or leave it out to create one", fatal=True) from None
                except APIStatusError as exc:
                    raise AgentError(f"agent {shown!r}: the Letta server refused to show agent {clip(self.template)} "
                                     f"(HTTP {exc.status_code}); check LETTA_API_KEY", fatal=True) from None
        finally:
            await client.close()
        return None

    # -- the agent and its exports ---------------------------------------------------------------------------------
    @property
    def folder(self) -> Path:
        assert self._folder is not None, "opened"
        return self._folder

    async def _open(self) -> None:
        remember_secret(os.environ.get("LETTA_API_KEY"))  # the client sends it; it is never shown
        timeout = self.timeout or httpx.Timeout(600.0, connect=10.0)
        self._client = AsyncLetta(base_url=self.base_url, timeout=timeout,  # no redirect followed (_guard.redirects)
                                  http_client=DefaultAsyncHttpxClient(timeout=timeout,
                                                                      follow_redirects=FOLLOW_ON_ENDPOINTS))
        folder = self.state_file(STATE)
        if folder is None:  # the run keeps no folder: the exports go to a temporary one
            self._tmp = tempfile.TemporaryDirectory(prefix="ltm-letta-")
            folder = Path(self._tmp.name)
        check_tree(folder, "Letta")
        folder.mkdir(exist_ok=True)
        self._folder = folder
        for saved in sorted(folder.glob("turn-*.af")):  # agent files name code: only ones signed here are kept
            read_signed(saved, "Letta")
        pointer = folder / "agent.json"
        if pointer.is_file():  # the agent a killed run was working on: replaced (and deleted) when restored
            try:
                said = json.loads(read_signed(pointer, "Letta"))
                self.agent_id = said.get("agent_id") if isinstance(said, dict) else None
            except (UntrustedStore, ValueError):  # not written here: its agent is left alone on the server
                self.agent_id = None

    async def _use(self, agent_id: str, model: Any) -> None:
        """Go on with the agent `agent_id` (deleting the one it replaces) and remember it in the folder."""
        old, self.agent_id = self.agent_id, agent_id
        self._model_name = model.rpartition("/")[2] if isinstance(model, str) and model else None
        write_signed(self.folder / "agent.json", json.dumps({"agent_id": agent_id}))
        if old is not None and old != agent_id:
            try:
                await self.client.agents.delete(old)
            except Exception:  # noqa: BLE001  (gone already, or the server cannot delete it: harmless)
                pass

    async def _export(self, turn: int) -> None:
        """The agent as Letta exports it, saved as turn-`turn`.af, and its archival passages (which the export does
        not hold) as turn-`turn`.passages.json; the files of turns older than the last KEEP deleted."""
        assert self.agent_id is not None
        exported = await self.client.agents.export_file(self.agent_id)
        text = exported if isinstance(exported, str) else json.dumps(exported)
        write_signed(self.folder / f"turn-{turn}.af", text)
        write_signed(self.folder / f"turn-{turn}.passages.json", json.dumps(await self._passages(self.agent_id)))
        self._check_complete(text, turn, "saved")
        for path in self.folder.glob("turn-*"):
            number = path.name.removeprefix("turn-").partition(".")[0]
            if number.isdigit() and int(number) <= turn - KEEP:
                path.unlink()

    async def _passages(self, agent_id: str) -> list[dict[str, Any]]:
        """The agent's archival passages, oldest first (text, tags, time), read page by page."""
        found: list[dict[str, Any]] = []
        after: str | None = None
        while True:
            page = await self.client.agents.passages.list(agent_id, ascending=True, limit=PAGE, after=after)
            found += [{"text": p.text, "tags": p.tags, "created_at": p.created_at.isoformat() if p.created_at else None}
                      for p in page]
            if len(page) < PAGE or not page[-1].id:
                return found
            after = page[-1].id

    async def _restore_passages(self, saved: list[dict[str, Any]]) -> None:
        """Give the agent (just imported) the saved passages it lacks (a server whose export holds them has them)."""
        assert self.agent_id is not None
        have = Counter(p["text"] for p in await self._passages(self.agent_id))
        for passage in saved:
            if have[passage["text"]] > 0:
                have[passage["text"]] -= 1
                continue
            await self.client.agents.passages.create(
                self.agent_id, text=passage["text"], tags=passage.get("tags"),
                **({"created_at": passage["created_at"]} if passage.get("created_at") else {}))

    def _check_complete(self, exported: str, turns: int, doing: str) -> None:
        """Say once, in one line, when the server's export holds fewer user messages than the turns it was sent
        (Letta exports the messages in the agent's context: the ones evicted from it cannot be restored)."""
        held = user_messages(exported)
        if held is not None and held < turns and not self._said_incomplete:
            self._said_incomplete = True
            logging.getLogger("ltm_harness.letta").warning(
                "agent %r: the Letta server's export holds %d of the %d user messages sent to agent %s (only those in its "
                "context); a resumed conversation restores those, its memory blocks and its archival passages, not "
                "the messages evicted from its context (%s after turn %d)", self.spec, held, turns, self.agent_id,
                doing, turns)

    async def _import(self, text: str, passages: list[dict[str, Any]] | None = None) -> None:
        made = await self.client.agents.import_file(file=("agent.af", text.encode("utf-8"), "application/json"))
        if not made.agent_ids:
            raise AgentError(f"agent {self.spec!r}: the Letta server imported no agent from the saved file")
        state = await self.client.agents.retrieve(made.agent_ids[0])
        await self._use(made.agent_ids[0], _model_of(state))
        if passages:
            await self._restore_passages(passages)

    async def _rollback(self, turns: int) -> None:
        if turns == 0:  # a fresh conversation: a new agent, or a copy of the template
            if self.template is not None:
                await self._import(await self.client.agents.export_file(self.template))
            else:
                state = await self.client.agents.create(
                    name=f"ltm-harness-{self.session_name}", model=self.model, embedding=self.embedding,
                    memory_blocks=[{"label": "human", "value": ""}, {"label": "persona", "value": PERSONA}])
                await self._use(state.id, _model_of(state))
            await self._export(0)
            return
        path = self.folder / f"turn-{turns}.af"
        if not path.is_file():
            raise AgentError(f"agent {self.spec!r} cannot be resumed: no export of its Letta agent after turn "
                             f"{turns} in {self.folder}; run it again with --overwrite")
        text = read_signed(path, "Letta")  # an agent file names code (its tools' source): signed files only
        saved = self.folder / f"turn-{turns}.passages.json"
        passages = json.loads(read_signed(saved, "Letta")) if saved.is_file() else []
        self._check_complete(text, turns, "restored")
        await self._import(text, passages if isinstance(passages, list) else [])

    async def _close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    # -- turns -------------------------------------------------------------------------------------------------
    async def _answer(self, text: str, turn: int) -> Answer:
        assert self.agent_id is not None
        response = await self.client.with_options(max_retries=0).agents.messages.create(
            self.agent_id, messages=[{"role": "user", "content": text}])
        said = [content_text(_plain(m.content)) for m in response.messages if isinstance(m, AssistantMessage)]
        await self._export(turn)
        usage = response.usage
        used = [ModelUsage(self._model_name, usage.prompt_tokens or 0, usage.completion_tokens or 0)] \
            if usage is not None and usage.prompt_tokens is not None else []
        return Answer("\n".join(s for s in said if s), used)


def user_messages(exported: str) -> int | None:
    """The user messages an agent file holds (its first agent's `messages`, in the v2 format or the legacy v1), or
    None when the file has neither form."""
    try:
        schema = json.loads(exported)
    except ValueError:
        return None
    if isinstance(schema, dict) and isinstance(schema.get("agents"), list) and schema["agents"]:
        schema = schema["agents"][0]
    messages = schema.get("messages") if isinstance(schema, dict) else None
    if not isinstance(messages, list):
        return None
    return sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "user")


def _plain(content: Any) -> Any:
    """A message's content as strings and dicts (the client's models dumped)."""
    if isinstance(content, list):
        return [c.model_dump() if hasattr(c, "model_dump") else c for c in content]
    return content


def _model_of(state: Any) -> Any:
    model = getattr(state, "model", None)
    if not model:
        config = getattr(state, "llm_config", None)
        model = getattr(config, "handle", None) or getattr(config, "model", None)
    return model
