"""An agent backed by any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp, Ollama, ...).

Spec: ``openai:MODEL`` or ``openai:MODEL@MAX_CONTEXT`` (``openai:gpt-4o-mini@8000``, ``openai:gpt-4o-mini@8k``).
The endpoint is ``OPENAI_BASE_URL`` (default: the SDK's, https://api.openai.com/v1) and the key is
``OPENAI_API_KEY``; a local endpoint (localhost, 127.0.0.1, ::1) needs no key.

The agent keeps the whole conversation and sends the system prompt plus the history on every turn.
Each user message is sent as ``[2024-01-01 09:00 UTC] text`` so the model knows the (virtual) time.
History that needs no reply (`observe`) is appended to the history with no model call, in the role of who said it
(a user message, timestamped; what the assistant said earlier in a user-assistant chat: an assistant message, as
the model's own replies are kept): it goes to the model with the next answered turn, under the same window rules.
Independent questions (`snapshot`/`rewind`): after the reply is recorded, the history and its window go back to
their state before the question (no call).

Context window (only with ``@MAX_CONTEXT``), counted with the harness tokenizer (ltm_harness._tokens):

* a message counts the tokens of its content (timestamp prefix included) plus ``MESSAGE_OVERHEAD``
  (3: its role and separators, as the OpenAI chat format counts them); the count is made once, when
  the message enters the history, and stored beside it;
* the prompt also carries ``REPLY_PRIMING`` (3) tokens, and the system message counts like any message;
* MAX_CONTEXT bounds the prompt (the reply is not included): the history sent is the longest run of the
  newest messages whose counts, plus the system message and the priming, add up to at most MAX_CONTEXT;
* if that run starts with an assistant reply, the reply is dropped as well, so the window always begins
  with a user message (chat templates that require user/assistant alternation reject anything else);
* the newest user message is always sent: if it does not fit on its own, its text is cut from the front
  (its timestamp prefix is kept, followed by ``[...]``) to the largest tail that fits. The stored history
  keeps the full message, and later windows treat it by its full count.

The window start only ever moves forward while the history grows, so it is kept with a running sum and
each turn costs O(new messages), never O(history).
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from ltm_harness._agents.base import ASSISTANT, Agent, AgentMessage, Reply
from ltm_harness._errors import AgentError, LLMError, LTMError
from ltm_harness._llm.client import MESSAGE_OVERHEAD, REPLY_PRIMING, LLMSettings
from ltm_harness._llm.endpoint import DEFAULT_BASE_URL, LOCAL_KEY, _Secret, display_url, is_local_url, resolve_endpoint
from ltm_harness._tokens import DEFAULT_ENCODING, get_encoding, get_tokenizer

if TYPE_CHECKING:  # pragma: no cover
    from ltm_harness._llm.client import LLMClient
    from ltm_harness._llm.runtime import LLMRuntime

__all__ = ["OpenAIChatAgent", "parse_spec", "timestamp_prefix", "is_local_url", "display_url", "DEFAULT_BASE_URL",
           "LOCAL_KEY", "MESSAGE_OVERHEAD", "REPLY_PRIMING", "CUT_MARKER"]

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant in a long conversation with one user. Each user message starts with the "
    "date and time it was sent. Remember what the user tells you, follow their instructions and answer briefly."
)
CUT_MARKER = "[...] "
MIN_ROOM = 64  # MAX_CONTEXT must leave at least this many tokens for the newest message
_PREFIX = re.compile(r"\[[^\]\n]*\] ")


def parse_spec(spec: str) -> tuple[str, int | None]:
    """`openai:MODEL[@MAX_CONTEXT]` -> (MODEL, MAX_CONTEXT or None). MAX_CONTEXT is N or Nk (N * 1000)."""
    kind, sep, rest = spec.partition(":")
    if kind != "openai" or not sep or not rest.strip():
        raise AgentError(f"agent {spec!r}: write openai:MODEL or openai:MODEL@MAX_CONTEXT, e.g. openai:gpt-4o-mini@8k")
    model, at, size = rest.rpartition("@") if "@" in rest else (rest, "", "")
    model = model.strip()
    if not model:
        raise AgentError(f"agent {spec!r}: the model name is missing; write openai:MODEL, e.g. openai:gpt-4o-mini")
    if not at:
        return model, None
    text = size.strip().replace("_", "").lower()
    scale = 1000 if text.endswith("k") else 1
    digits = text.removesuffix("k")
    if not digits.isdigit() or int(digits) <= 0:
        raise AgentError(f"agent {spec!r}: MAX_CONTEXT must be a positive number of tokens, e.g. @8000 or @8k")
    return model, int(digits) * scale


def timestamp_prefix(when: datetime) -> str:
    when = when.replace(tzinfo=timezone.utc) if when.tzinfo is None else when.astimezone(timezone.utc)
    return when.strftime("[%Y-%m-%d %H:%M UTC] ")


class OpenAIChatAgent(Agent):
    description = "openai:MODEL[@max_context] any OpenAI-compatible chat endpoint (OPENAI_BASE_URL, OPENAI_API_KEY)"

    def __init__(
        self,
        spec: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        tokenizer: str = DEFAULT_ENCODING,
        runtime: "LLMRuntime | None" = None,
    ) -> None:
        super().__init__(spec)
        self.model, self.max_context = parse_spec(spec)
        self._endpoint_args = (base_url, _Secret(api_key) if api_key else None)
        resolve_endpoint(f"agent {spec!r}", base_url, "checked-later")  # the URL's form, before any network
        self.system_prompt = system_prompt or None
        self.temperature = temperature
        self.max_tokens = max_tokens
        self._runtime = runtime
        overrides = {}
        if timeout is not None:
            overrides["timeout"] = timeout
        if max_retries is not None:
            overrides["max_attempts"] = max_retries + 1
        base = runtime.settings if runtime is not None else LLMSettings()
        self._settings = base.model_copy(update=overrides) if overrides else base
        self._tokenizer = get_tokenizer(tokenizer)
        self._client: LLMClient | None = None
        self._system_tokens = self._count(self.system_prompt) if self.system_prompt else 0
        if self.max_context is not None and self._budget < MIN_ROOM:
            raise AgentError(
                f"agent {spec!r}: MAX_CONTEXT {self.max_context} is too small: the system prompt and message "
                f"overhead alone take {self.max_context - self._budget} tokens; give a larger MAX_CONTEXT"
            )
        self.reset_history()

    # -- the history and its window ------------------------------------------------------------
    @property
    def base_url(self) -> str:
        import os

        return display_url(self._endpoint_args[0] or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL)

    @property
    def _budget(self) -> int:
        """Tokens the history may take in the prompt (only meaningful with max_context)."""
        assert self.max_context is not None
        return self.max_context - self._system_tokens - REPLY_PRIMING

    def _count(self, content: str) -> int:
        return self._tokenizer.count(content) + MESSAGE_OVERHEAD

    def reset_history(self) -> None:
        self.history: list[dict[str, str]] = []
        self.counts: list[int] = []  # counts[i]: counted tokens of history[i] (content + overhead)
        self._start = 0  # the window is history[_start:]
        self._window_tokens = 0  # sum(counts[_start:]), kept as the history grows

    def _add(self, role: str, content: str, counted: int | None = None) -> None:
        """Append a message to the history; `counted`: its count when already known (`_count(content)`)."""
        self.history.append({"role": role, "content": content})
        n = self._count(content) if counted is None else counted
        self.counts.append(n)
        self._window_tokens += n

    def _advance_window(self) -> None:
        """Move the window start forward until the window fits (see the module docstring)."""
        if self.max_context is None:
            return
        budget = self._budget
        last = len(self.history) - 1
        while self._start < last and (self._window_tokens > budget or self.history[self._start]["role"] != "user"):
            self._window_tokens -= self.counts[self._start]
            self._start += 1

    def _fit_newest(self, content: str, prefix: str) -> str:
        """The newest user message, cut from the front so that it alone fits the budget."""
        room = self._budget - MESSAGE_OVERHEAD
        encoding = get_encoding(self._tokenizer.encoding_name)
        body = content[len(prefix):]
        ids = encoding.encode_ordinary(body)
        keep = len(ids)
        while True:
            keep = max(keep, 0)
            tail = encoding.decode(ids[len(ids) - keep:]) if keep else ""
            candidate = prefix + CUT_MARKER + tail.lstrip("\ufffd")
            excess = self._tokenizer.count(candidate) - room
            if excess <= 0 or keep == 0:
                return candidate
            keep -= excess

    def window(self) -> list[dict[str, str]]:
        """The messages to send now: the system prompt and the newest history that fits."""
        self._advance_window()
        messages = self.history[self._start:]
        if self.max_context is not None and self._window_tokens > self._budget and messages:
            newest = messages[-1]  # alone, and too long: send a cut copy, keep the full one
            found = _PREFIX.match(newest["content"])
            cut = self._fit_newest(newest["content"], found.group(0) if found else "")
            messages[-1] = {"role": newest["role"], "content": cut}
        if self.system_prompt:
            messages.insert(0, {"role": "system", "content": self.system_prompt})
        return messages

    # -- talking to the endpoint ---------------------------------------------------------------------
    def _get_client(self) -> "LLMClient":
        if self._client is None:
            from ltm_harness._llm.client import LLMClient

            url, key = self._endpoint_args
            endpoint = resolve_endpoint(f"agent {self.spec!r}", url, key.value if key else None)
            if self._runtime is not None:
                self._client = self._runtime.client(endpoint, self._settings)
            else:
                self._client = LLMClient(endpoint, self._settings, tokenizer=self._tokenizer.encoding_name)
        return self._client

    async def preflight(self) -> str | None:
        """The key is there (resolving the endpoint says so in one line) and the endpoint lists the model
        (`GET /models`); an endpoint with no list (HTTP 404/405) leaves the model to the first turn."""
        from ltm_harness._llm.check import check_model

        client = self._get_client()  # no key for a remote endpoint: a ConfigError naming the agent
        try:
            return await check_model(client, self.model, f"agent {self.spec!r}",
                                     "check the model name, or set config.preflight: false if the endpoint serves "
                                     "models it does not list", probe=False)
        except LLMError as exc:
            raise AgentError(str(exc), fatal=True) from None

    async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> Reply:
        prefix = timestamp_prefix(message.timestamp)
        self._add("user", prefix + message.text)
        try:
            window = self.window()
            known = self._system_tokens + self._window_tokens + REPLY_PRIMING  # counted as the history grew
            result = await self._get_client().chat("agent", self.model, window, temperature=self.temperature,
                                                    max_tokens=self.max_tokens,
                                                    prompt_tokens=min(known, self.max_context or known))
        except LTMError as exc:
            self._drop_newest()
            raise AgentError(f"agent {self.spec!r}: {exc}", fatal=exc.fatal, retry=exc.retry) from None
        except BaseException:
            self._drop_newest()
            raise
        self._add("assistant", result.text)
        call = result.call
        return Reply(text=result.text, prompt_tokens=call.prompt_tokens, completion_tokens=call.completion_tokens,
                     cost_usd=call.cost_usd, llm_calls=[call])

    async def observe(self, message: AgentMessage) -> None:
        """History: kept in the chat history, sent with the next answered turn (no model call now). What the
        assistant said earlier goes in as an assistant message (as the model's own replies do, with no timestamp);
        everything else (the user, a named speaker) as a user message."""
        self._add(*self._observed(message))

    @staticmethod
    def _observed(message: AgentMessage) -> tuple[str, str]:
        if message.role == ASSISTANT:
            return "assistant", message.text
        return "user", timestamp_prefix(message.timestamp) + message.text

    async def restore(self, turns: list[tuple[AgentMessage, str]]) -> None:
        """The memory is the chat history: the same user and assistant messages, in order (observed history alone,
        in its role)."""
        for message, reply in turns:
            if message.observe:
                self._add(*self._observed(message))
                continue
            self._add("user", timestamp_prefix(message.timestamp) + message.text)
            self._add("assistant", reply)

    def snapshot(self) -> tuple[int, int, int]:
        """Independent questions: the history's length and window now (going back costs no call)."""
        return len(self.history), self._start, self._window_tokens

    def rewind(self, snapshot: tuple[int, int, int]) -> None:
        """Back to the history and window as `snapshot` found them: what was added since is dropped."""
        length, self._start, self._window_tokens = snapshot
        del self.history[length:], self.counts[length:]

    def _drop_newest(self) -> None:
        """Undo the user message of a failed turn, so the history stays user/assistant pairs."""
        self.history.pop()
        self._window_tokens -= self.counts.pop()  # the newest message is always inside the window

    async def reset(self) -> None:
        self.reset_history()

    async def close(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            if self._runtime is None:  # a run's shared clients are closed with the run
                await client.close()
