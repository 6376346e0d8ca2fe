"""mem0 as the memory of a chat model: `-a mem0` or `-a mem0:CONFIG.yml`.

mem0 (`mem0ai`) is a memory layer, not an agent, so the adapter makes the agent around it. Each turn:

1. `search` mem0 for the user message (mem0's embedder and vector store only);
2. the chat model answers the message, handed the memories found in its system prompt (as lines `- MEMORY`, oldest
   first: by the turn that stored them, so a fact said later comes later);
3. `add` the message and the reply to mem0 (`infer=True`: one JSON-mode call of mem0's LLM extracts the facts, which
   are embedded and stored).

History that needs no reply (`observe`) is added to mem0 alone, with no chat call (by default extracted like any turn;
`observe: raw` stores each message as said, with no LLM call at all).

CONFIG.yml (all optional; see examples/agents/mem0.yml):

    chat:   {model: gpt-4o-mini, system_prompt: ..., temperature: 0, max_tokens: null}
    search: {top_k: 10, threshold: 0.1}
    observe: infer            # or raw
    mem0:                     # mem0's own config (its MemoryConfig): llm, embedder, vector_store, custom_instructions
      llm:      {provider: openai, config: {model: gpt-4.1-nano}}
      embedder: {provider: openai, config: {model: text-embedding-3-small}}

The chat model is called through the harness's OpenAI-compatible client (the run's `openai:` endpoint, key, retries
and prices; its settings, when the file leaves them out, from the run config's `openai:` section). mem0's `openai`
LLM and embedder default to the same endpoint and key. mem0's store is the adapter's to keep: the vector store is
Qdrant in local mode (only its `collection_name`, `embedding_model_dims` and `on_disk` may be set) and the history DB
is mem0's SQLite file, both in the conversation's `state_dir` (in a temporary folder when the run keeps none).
mem0's telemetry is turned off (`MEM0_TELEMETRY=False`, set before mem0 is imported).

Resume. Both stores are SQLite files (local Qdrant keeps each collection in one), so an undo log inside them
(`sqlite_undo`) records, with every change mem0 makes, how to undo it, and each turn's end is marked. Restoring N
turns closes mem0, undoes what came after turn N's mark (a turn taken in just before a kill, or half of one) and opens
mem0 again on the files: the memory mem0 saved, not one rebuilt by adding the turns again. A turn costs its own
changes twice, whatever the size of the memory.

Usage: the chat call's, and each call of mem0's LLM (through its `response_callback`, priced by the model that
answered). mem0 does not report its embedding calls, so their tokens are not counted.
"""

from __future__ import annotations

import asyncio
import atexit
import copy
import logging
import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

os.environ["MEM0_TELEMETRY"] = "False"  # read by mem0 when it is imported: no usage data leaves the machine
if not os.environ.get("MEM0_DIR"):  # mem0 writes MEM0_DIR/config.json (a user id) when it is imported: not ~/.mem0
    os.environ["MEM0_DIR"] = _home = tempfile.mkdtemp(prefix="ltm-mem0-home-")
    atexit.register(shutil.rmtree, _home, ignore_errors=True)

from mem0 import AsyncMemory  # noqa: E402  (after the telemetry switch)
from qdrant_client import QdrantClient  # noqa: E402

from ltm_harness._agents.frameworks.base import Answer, FrameworkAgent, ModelUsage  # noqa: E402
from ltm_harness._agents.frameworks.mem0_config import DEFAULT_MODEL, read_settings  # noqa: E402
from ltm_harness._agents.frameworks.qdrant_check import check_points  # noqa: E402
from ltm_harness._agents.frameworks.sqlite_undo import UndoError, UndoLog  # noqa: E402
from ltm_harness._agents.frameworks.store_trust import check_tree  # noqa: E402
from ltm_harness._errors import AgentError, LTMError  # noqa: E402
from ltm_harness._llm.client import LLMClient, LLMSettings  # noqa: E402
from ltm_harness._llm.transport import stop_following  # noqa: E402
from ltm_harness._llm.endpoint import Endpoint, resolve_endpoint  # noqa: E402
from ltm_harness._tokens import DEFAULT_ENCODING  # noqa: E402

for _noisy in ("mem0", "qdrant_client"):  # missing optional parts (spaCy, fastembed) are warned of on every use
    if logging.getLogger(_noisy).level == logging.NOTSET:
        logging.getLogger(_noisy).setLevel(logging.ERROR)

STORE = "mem0"  # the folder of mem0's files in state_dir: qdrant/ and history.db
DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant in a long conversation with one user. Each user message starts with the date and "
    "time it was sent. Your memory of the conversation is the list below; answer briefly, from it when it helps.")
MEMORY_HEADING = "What you remember from earlier in the conversation (oldest first):"
NOTHING_YET = "(nothing yet)"


class Mem0Agent(FrameworkAgent):
    usage_note = "mem0's embedding calls are not counted (mem0 reports no usage for them)"
    description = "a chat model with mem0 memory (mem0[:CONFIG.yml]), its store kept in the run folder"
    kind = "mem0"

    def __init__(self, spec: str, *, base_url: str | None = None, api_key: str | None = None,
                 system_prompt: str | None = None, temperature: float | None = None, max_tokens: int | None = None,
                 timeout: float | None = None, tokenizer: str = DEFAULT_ENCODING, runtime: Any = None) -> None:
        super().__init__(spec, tokenizer=tokenizer, runtime=runtime)
        self.settings = read_settings(spec, self.target or None)
        chat = self.settings.chat
        self.model = chat.model
        self.system_prompt = chat.system_prompt or system_prompt or DEFAULT_SYSTEM_PROMPT
        self.temperature = chat.temperature if chat.temperature is not None else temperature
        self.max_tokens = chat.max_tokens or max_tokens
        self._endpoint_args = (base_url, api_key)
        resolve_endpoint(f"agent {spec!r}", base_url, "checked-later")  # the URL's form, before any network
        self._runtime = runtime
        base = runtime.settings if runtime is not None else LLMSettings()
        self._llm_settings = base.model_copy(update={"timeout": timeout}) if timeout is not None else base
        self._client: LLMClient | None = None
        self._memory: Any = None  # AsyncMemory
        self._qdrant: QdrantClient | None = None
        self._store: Path | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._undo: UndoLog | None = None
        self._usage: list[ModelUsage] = []  # mem0's LLM calls in the current turn (its response_callback)

    def parse_spec(self, spec: str) -> tuple[str, dict[str, str]]:
        kind, sep, path = spec.partition(":")
        if kind != self.kind or (sep and not path.strip()):
            raise AgentError(f"agent {spec!r}: write mem0 or mem0:CONFIG.yml")
        return path.strip(), {}

    # -- mem0 and its store ----------------------------------------------------------------------------------------
    @property
    def memory(self) -> Any:
        assert self._memory is not None, "opened"
        return self._memory

    def _endpoint(self) -> Endpoint:
        url, key = self._endpoint_args
        return resolve_endpoint(f"agent {self.spec!r}", url, key)

    def mem0_config(self, store: Path, client: QdrantClient) -> dict[str, Any]:
        """mem0's config: the file's, its OpenAI parts on the harness's endpoint, its store in `store`."""
        config = copy.deepcopy(self.settings.mem0)
        endpoint = self._endpoint()
        for part in ("llm", "embedder"):
            section = config.setdefault(part, {})
            if section.setdefault("provider", "openai") == "openai":
                settings = section["config"] = dict(section.get("config") or {})
                settings.setdefault("openai_base_url", endpoint.base_url)
                settings.setdefault("api_key", endpoint.key.value)
                if part == "llm":
                    settings["response_callback"] = self._count_usage
        vector = dict((config.get("vector_store") or {}).get("config") or {})
        dims = (config["embedder"].get("config") or {}).get("embedding_dims")
        if dims is not None:
            vector.setdefault("embedding_model_dims", dims)
        vector["client"] = client
        config["vector_store"] = {"provider": "qdrant", "config": vector}
        config["history_db_path"] = str(store / "history.db")
        return config

    def _count_usage(self, llm: Any, response: Any, params: dict[str, Any]) -> None:
        """mem0's `response_callback`: the usage of one call of its LLM (in a worker thread)."""
        usage = getattr(response, "usage", None)
        if usage is not None and usage.prompt_tokens is not None:
            model = getattr(response, "model", None) or params.get("model")
            self._usage.append(ModelUsage(model, int(usage.prompt_tokens), int(usage.completion_tokens or 0)))

    def _open_memory(self) -> None:
        """Open Qdrant and mem0 on the store, once it is checked (see docs/security.md): files and folders only, and
        no point whose pickle names anything but Qdrant's models. A failure closes what was opened, so the next try
        meets no lock of this one's and the line shown is the real cause."""
        assert self._store is not None
        check_tree(self._store, "mem0")
        check_points(self._store / "qdrant")
        try:
            self._qdrant = QdrantClient(path=str(self._store / "qdrant"))
            with warnings.catch_warnings():  # local Qdrant says payload indexes do nothing there, on every start
                warnings.simplefilter("ignore")
                self._memory = AsyncMemory.from_config(self.mem0_config(self._store, self._qdrant))
            for part in (self._memory.llm, self._memory.embedding_model):  # no redirect followed (_guard.redirects)
                stop_following(getattr(part, "client", None))
        except BaseException:
            self._close_memory()
            raise

    def _close_memory(self) -> None:
        memory, self._memory = self._memory, None
        if memory is not None:
            memory.close()
            for part in (memory.llm, memory.embedding_model):
                close = getattr(getattr(part, "client", None), "close", None)
                if close is not None:
                    close()
        if self._qdrant is not None:
            self._qdrant.close()
            self._qdrant = None

    async def _open(self) -> None:
        folder = self.state_file(STORE)
        if folder is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="ltm-mem0-")
            folder = Path(self._tmp.name)
        folder.mkdir(parents=True, exist_ok=True)
        self._store, self._undo = folder, UndoLog(folder)
        self._open_memory()

    async def _close(self) -> None:
        self._close_memory()
        if self._client is not None and self._runtime is None:  # a run's shared clients are closed with the run
            await self._client.close()
        self._client = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    async def _rollback(self, turns: int) -> None:
        assert self._undo is not None
        dirty = self._undo.dirty(turns)
        if dirty:
            self._close_memory()  # local Qdrant holds its points in memory: it reads the files again below
        try:
            self._undo.rollback(turns)
        except UndoError as exc:
            raise AgentError(f"agent {self.spec!r} cannot be resumed: {exc}; run it again with --overwrite") from None
        finally:
            if self._memory is None:
                self._open_memory()

    # -- turns -------------------------------------------------------------------------------------------------
    def _chat_client(self) -> LLMClient:
        if self._client is None:
            endpoint = self._endpoint()
            if self._runtime is not None:
                self._client = self._runtime.client(endpoint, self._llm_settings)
            else:
                self._client = LLMClient(endpoint, self._llm_settings, tokenizer=self._tokenizer.encoding_name)
        return self._client

    def prompt(self, memories: list[dict[str, Any]], text: str) -> list[dict[str, str]]:
        """The chat model's messages: the system prompt with the memories found (oldest first), and the message."""
        ranked = sorted(enumerate(memories), key=lambda m: (int((m[1].get("metadata") or {}).get("turn", 0)), m[0]))
        lines = [f"- {' '.join(str(m.get('memory', '')).split())}" for _, m in ranked] or [NOTHING_YET]
        system = f"{self.system_prompt}\n\n{MEMORY_HEADING}\n" + "\n".join(lines)
        return [{"role": "system", "content": system}, {"role": "user", "content": text}]

    async def _answer(self, text: str, turn: int) -> Answer:
        self._usage = []
        search = self.settings.search
        found = await self.memory.search(text, filters={"user_id": self.session_name}, top_k=search.top_k,
                                         threshold=search.threshold)
        try:
            result = await self._chat_client().chat("agent", self.model, self.prompt(found.get("results", []), text),
                                                    temperature=self.temperature, max_tokens=self.max_tokens)
        except LTMError as exc:
            raise AgentError(f"agent {self.spec!r}: {exc}", fatal=exc.fatal) from None
        await self.memory.add([{"role": "user", "content": text}, {"role": "assistant", "content": result.text}],
                              user_id=self.session_name, metadata={"turn": turn})
        await self._mark(turn)
        call = result.call
        return Answer(result.text, [ModelUsage(self.model, call.prompt_tokens, call.completion_tokens), *self._usage])

    async def _ingest(self, text: str, turn: int, role: str = "user") -> Answer:
        self._usage = []
        mem0_role = "assistant" if role == "assistant" else "user"  # mem0 keeps the assistant's own turns as such
        await self.memory.add([{"role": mem0_role, "content": text}], user_id=self.session_name,
                              metadata={"turn": turn}, infer=self.settings.observe == "infer")
        await self._mark(turn)
        return Answer("", list(self._usage))

    async def _mark(self, turn: int) -> None:
        assert self._undo is not None
        await asyncio.to_thread(self._undo.mark, turn)  # SQLite work off the event loop, as mem0 does its own
