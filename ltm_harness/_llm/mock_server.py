"""An OpenAI-compatible mock server (aiohttp) for offline demos and tests: `python -m ltm_harness mock-llm`.

Endpoints: `POST /v1/chat/completions`, `POST /v1/embeddings`, `GET /v1/models`, the Batch API (`mock_batch`: files,
batches), and for tests `GET /mock/stats`, `GET /mock/bill` (its own bill: `mock_bill`), `POST /mock/faults` (replace
the fault settings of a running server) and `POST /mock/batch` (how its batches end).

Behaviour is chosen by the model name, and is deterministic:

| model                  | reply |
|------------------------|-------|
| `mock`, `mock-retrieval` | answers from its context: a JSON arithmetic answer for filler, the earlier user sentence that shares most words with a question, else "Noted." |
| `mock-tools`           | when tools are offered, calls one (named in the message, else the first) with arguments from the message, then answers with the tool's result (see `mock_tools`; `mock` calls a tool only when the message names it); else like `mock` |
| `mock-memory`          | a memory layer's model (mem0): extracts facts as JSON when asked, else answers like `mock` from the memories it is given (see `mock_replies`) |
| `mock-fixed[:TEXT]`    | always TEXT (default "I don't know.") |
| `mock-echo`            | the last user message |
| `mock-judge`           | a judge verdict as JSON: correct when the expected answer's words are all in the response (a yes/no prompt laid out as LongMemEval's gets "yes" or "no" by the same rule, or by whether the response declines; BEAM's prompts: `mock_beam`) |
| `mock-judge-garbage`   | text that is not a verdict (to test unscored handling) |
| `mock-generator`       | generated dataset stages (content/questions/answers) as JSON, about invented places |
| `mock-generator-short` | like mock-generator, but always one answer too few (to test count checks) |
| `mock-embed` (embeddings) | a hashed bag of words (see `mock_replies`), `dimensions` long (default 256) |

Every chat model honours `response_format` (`mock_structured`: a JSON instance of the schema asked for). Unknown model
names get HTTP 404, as a real server would answer. The replies are made in `mock_replies`, `mock_judge` and
`mock_tools` (tool calls, and `stream: true` as server-sent events); this module serves them.

Faults (per server, seeded): a share of requests answered 429 with Retry-After, 500, 502, 503, dropped
connections, 200 with a malformed body, a response cut in the middle (`cut`: half the body, or half the stream's
events, then the connection closes), or stalled past the client's timeout; 429 storms (a drawn 429
goes on for `storm_429` requests in a row, whoever sends them, as a rate limit would); a fixed latency
per request; and an optional `script` of outcomes used first, in order (e.g. ["429", "500", "ok"]),
for exact tests. Embedding requests draw from the same faults. Answers that are the model's own: a share finished by
the content filter (`content_filter`: `finish_reason: content_filter`, no content) or refused (`refusal`: the
message's `refusal`, no content).

As a provider behaves (`mock_limits`): a real rate limit (`rpm`, `tpm` per `limit_window` seconds, per model; 429
with `Retry-After` past it, `x-ratelimit-*` headers on every answer); a context window (`context`, or `contexts` per
model: a longer prompt is a 400 `context_length_exceeded`); `max_tokens` honoured (the reply cut, `finish_reason:
length`); a prompt cache (`prompt_cache`: repeated leading messages reported as `cached_tokens`). `bill` is what it
billed (`mock_bill`).

`stats` counts requests, each outcome, `over_limit` (requests refused by the rate limit), `ok_replies`, the requests
of each model (`model:NAME`), and `abandoned` (stalled requests whose client hung up before the stall ended: they are
not answered, and not kept in `requests`).
"""

from __future__ import annotations

import asyncio
import base64
import json
import math
import random
import struct
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from ltm_harness._llm.mock_batch import BatchSettings, MockBatches
from ltm_harness._llm.mock_bill import Bill
from ltm_harness._llm.mock_judge import judge_reply, yes_no_reply
from ltm_harness._llm.mock_limits import PromptCache, RateLimits
from ltm_harness._llm.mock_structured import structured_reply
from ltm_harness._llm.mock_tools import after_tools, stream_events, tool_calls
from ltm_harness._llm.mock_replies import (EMBED_DIMENSIONS, MAX_DIMENSIONS, _text, embed, extracted_facts,
                                           generator_reply, memory_reply, retrieval_reply)
from ltm_harness._tokens import get_encoding, get_tokenizer

__all__ = ["EMBEDDING_MODELS", "EMBED_DIMENSIONS", "FaultSettings", "MODELS", "MockLLMServer", "Outcome", "embed",
           "extracted_facts", "judge_reply", "memory_reply", "reply_for", "retrieval_reply", "yes_no_reply"]

Outcome = Literal["ok", "429", "500", "502", "503", "drop", "malformed", "timeout", "cut", "content_filter",
                  "refusal"]
REFUSAL = "I'm sorry, but I can't help with that."
OUTCOME = web.RequestKey("mock_outcome", str)  # the fault drawn for a request that is still answered
HEADERS = web.RequestKey("mock_headers", dict)  # the rate-limit headers its answer carries


class FaultSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rate_429: float = Field(default=0.0, ge=0, le=1)
    retry_after: float = Field(default=0.05, ge=0, description="seconds sent in Retry-After with a 429")
    rate_500: float = Field(default=0.0, ge=0, le=1)
    rate_502: float = Field(default=0.0, ge=0, le=1)
    rate_503: float = Field(default=0.0, ge=0, le=1)
    rate_cut: float = Field(default=0.0, ge=0, le=1, description="share of responses cut in the middle")
    rate_content_filter: float = Field(default=0.0, ge=0, le=1, description="share of replies stopped by the filter")
    rate_refusal: float = Field(default=0.0, ge=0, le=1, description="share of replies that are refusals")
    rate_drop: float = Field(default=0.0, ge=0, le=1)
    rate_malformed: float = Field(default=0.0, ge=0, le=1)
    rate_timeout: float = Field(default=0.0, ge=0, le=1, description="share of requests stalled for timeout_ms")
    storm_429: int = Field(default=1, ge=1, description="a drawn 429 is the first of this many 429s in a row")
    latency_ms: float = Field(default=0.0, ge=0, description="added to every request")
    timeout_ms: float = Field(default=2000.0, ge=0, description="how long a 'timeout' outcome stalls")
    script: list[Outcome] = Field(default_factory=list, description="outcomes used first, in order")
    seed: int = 0
    rpm: int | None = Field(default=None, ge=1, description="requests per limit_window per model (None: no limit)")
    tpm: int | None = Field(default=None, ge=1, description="tokens per limit_window per model (None: no limit)")
    limit_window: float = Field(default=60.0, gt=0, description="seconds the rate limits count over")
    context: int | None = Field(default=None, ge=1, description="tokens any model's prompt may hold (None: no limit)")
    contexts: dict[str, int] = Field(default_factory=dict, description="tokens a prompt may hold, per model")
    prompt_cache: bool = Field(default=False, description="report repeated leading messages as cached input")
    cache_min_tokens: int = Field(default=1024, ge=1, description="the shortest prefix the prompt cache serves")


def reply_for(model: str, messages: list[dict[str, Any]]) -> str | None:
    base, _, arg = model.partition(":")
    if base in ("mock", "mock-retrieval", "mock-tools"):
        return retrieval_reply(messages)
    if base == "mock-memory":
        return memory_reply(messages)
    if base == "mock-fixed":
        return arg or "I don't know."
    if base == "mock-echo":
        users = [m for m in messages if m.get("role") == "user"]
        return _text(users[-1]) if users else ""
    if base == "mock-judge":
        return judge_reply(messages)
    if base == "mock-judge-garbage":
        return "Well, it depends on how you look at it."
    if base == "mock-generator":
        return generator_reply(messages)
    if base == "mock-generator-short":
        return generator_reply(messages, short=True)
    return None


MODELS = ["mock", "mock-retrieval", "mock-tools", "mock-memory", "mock-fixed", "mock-echo", "mock-judge", "mock-judge-garbage",
          "mock-generator", "mock-generator-short"]
EMBEDDING_MODELS = ["mock-embed"]


@dataclass
class Answer:
    """A chat completion the mock made: its head (id, model), message, usage, finish reason, and the prompt tokens its
    prompt cache served."""

    head: dict[str, Any]
    message: dict[str, Any]
    usage: dict[str, Any]
    finish: str
    cached: int = 0

    def completion(self) -> dict[str, Any]:
        return {**self.head, "object": "chat.completion", "usage": self.usage,
                "choices": [{"index": 0, "message": self.message, "finish_reason": self.finish}]}


# -- the server --------------------------------------------------------------------------------------
class MockLLMServer:
    def __init__(self, faults: FaultSettings | None = None, tokenizer: str = "cl100k_base",
                 batch: BatchSettings | None = None) -> None:
        self.faults = faults or FaultSettings()
        self.batches = MockBatches(self, batch)
        self._rng = random.Random(f"mock-llm:{self.faults.seed}")
        self._script = list(self.faults.script)
        self._storm = 0  # 429s still due in the current storm
        self._tokenizer = get_tokenizer(tokenizer)
        self._counts: dict[str, int] = {}
        self.stats: Counter[str] = Counter()
        self.requests: list[dict[str, Any]] = []  # every request body, for tests that inspect what was sent
        self.keys: set[str] = set()  # the bearer keys requests came with (tests check which key was used)
        self._runner: web.AppRunner | None = None
        self.url = ""
        self.bill = Bill()
        self._provider(self.faults)

    def _provider(self, faults: FaultSettings) -> None:
        self.limits = RateLimits(faults.rpm, faults.tpm, faults.limit_window)
        self.prompt_cache = PromptCache(faults.cache_min_tokens) if faults.prompt_cache else None

    def set_faults(self, faults: FaultSettings) -> None:
        self.faults = faults
        self._rng = random.Random(f"mock-llm:{faults.seed}")
        self._script = list(faults.script)
        self._storm = 0
        self._provider(faults)

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/mock/stats", self._stats)
        app.router.add_get("/mock/bill", self._bill)
        app.router.add_post("/mock/faults", self._set_faults)
        self.batches.register(app)
        return app

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        self._runner = web.AppRunner(self.app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        real_port = self._runner.addresses[0][1]
        self.url = f"http://{host}:{real_port}/v1"
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> "MockLLMServer":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def _outcome(self) -> Outcome:
        if self._script:
            return self._script.pop(0)
        if self._storm:
            self._storm -= 1
            return "429"
        f = self.faults
        x = self._rng.random()
        for outcome, rate in (("429", f.rate_429), ("500", f.rate_500), ("502", f.rate_502), ("503", f.rate_503),
                              ("drop", f.rate_drop), ("malformed", f.rate_malformed), ("timeout", f.rate_timeout),
                              ("cut", f.rate_cut), ("content_filter", f.rate_content_filter),
                              ("refusal", f.rate_refusal)):
            if x < rate:
                if outcome == "429":
                    self._storm = f.storm_429 - 1
                return outcome  # type: ignore[return-value]
            x -= rate
        return "ok"

    @staticmethod
    async def _stall(request: web.Request, seconds: float) -> bool:
        """Wait `seconds`, or until the client hangs up (then False: nobody is left to answer)."""
        deadline = asyncio.get_running_loop().time() + seconds
        while True:
            transport = request.transport
            if transport is None or transport.is_closing():
                return False
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                return True
            await asyncio.sleep(min(left, 0.01))

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": m, "object": "model", "owned_by": "ltm-harness"}
                                                             for m in MODELS + EMBEDDING_MODELS]})

    async def _stats(self, request: web.Request) -> web.Response:
        return web.json_response(dict(self.stats))

    async def _bill(self, request: web.Request) -> web.Response:
        return web.json_response(self.bill.model_dump())

    async def _set_faults(self, request: web.Request) -> web.Response:
        self.set_faults(FaultSettings.model_validate(await request.json()))
        return web.json_response({"ok": True})

    def _count_cached(self, text: str) -> int:
        """Token count of a message; the history repeats in every request, so counts are kept."""
        n = self._counts.get(text)
        if n is None:
            if len(self._counts) > 200_000:
                self._counts.clear()
            n = self._counts[text] = self._tokenizer.count(text)
        return n

    def _count(self, messages: list[dict[str, Any]], text: str) -> tuple[int, int]:
        prompt = sum(self._count_cached(_text(m)) + 3 for m in messages) + 3
        return prompt, self._tokenizer.count(text)

    async def _limited(self, request: web.Request) -> tuple[web.Response | None, dict[str, str]]:
        """The rate limit's answer (a 429 when the request does not fit; None: admitted) and the headers every
        answer carries."""
        if not self.limits.active:
            return None, {}
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None, {}
        if not isinstance(body, dict):
            return None, {}
        model = str(body.get("model", ""))
        messages = body.get("messages") if isinstance(body.get("messages"), list) else []
        given = body.get("input")
        texts = [_text(m) for m in messages if isinstance(m, dict)] if messages else \
            [given] if isinstance(given, str) else [t for t in given if isinstance(t, str)] \
            if isinstance(given, list) else []
        most = body.get("max_tokens")
        tokens = sum(self._count_cached(t) for t in texts) + (most if isinstance(most, int) else 0)
        wait, headers = self.limits.admit(model, tokens)
        if not wait:
            return None, headers
        self.stats["requests"] += 1
        self.stats["over_limit"] += 1
        return web.json_response({"error": {"message": f"Rate limit reached for {model} (mock); please try again "
                                                       f"in {wait:.3f}s", "type": "requests",
                                            "code": "rate_limit_exceeded"}}, status=429,
                                 headers={**headers, "Retry-After": str(math.ceil(wait)),
                                          "retry-after-ms": str(math.ceil(wait * 1000))}), headers

    async def _fault(self, request: web.Request) -> web.StreamResponse | None:
        """The drawn fault's response (None: the request is answered), counted in `stats`; a fault that is the
        model's own answer (a cut, a content filter, a refusal) is left on the request for `_chat`."""
        limited, headers = await self._limited(request)
        if limited is not None:
            return limited
        self.stats["requests"] += 1
        if self.faults.latency_ms:
            await asyncio.sleep(self.faults.latency_ms / 1000)
        outcome = self._outcome()
        self.stats[outcome] += 1
        request[OUTCOME], request[HEADERS] = outcome, headers
        if outcome == "429":
            return web.json_response({"error": {"message": "rate limited (mock)", "type": "rate_limit_error"}},
                                     status=429, headers={**headers, "Retry-After": f"{self.faults.retry_after:g}"})
        if outcome in ("500", "502", "503"):
            return web.json_response({"error": {"message": f"server error {outcome} (mock)", "type": "server_error"}},
                                     status=int(outcome), headers=headers)
        if outcome == "drop":
            if request.transport is not None:
                request.transport.close()  # the client sees the connection drop with no response
            return web.Response(status=500)
        if outcome == "timeout" and not await self._stall(request, self.faults.timeout_ms / 1000):
            self.stats["abandoned"] += 1
            return web.Response(status=499)  # never reaches the client, which has gone
        if outcome == "malformed":
            return web.Response(text='{"id": "x", "choices": [{"message": ', content_type="application/json")
        return None

    async def _body(self, request: web.Request) -> dict[str, Any] | web.Response:
        try:
            body = await request.json()
        except json.JSONDecodeError:
            return web.json_response({"error": {"message": "the body is not JSON"}}, status=400)
        if not isinstance(body, dict):
            return web.json_response({"error": {"message": "the body is not a JSON object"}}, status=400)
        self.requests.append(body)
        self.keys.add(request.headers.get("Authorization", "").removeprefix("Bearer "))
        self.stats[f"model:{body.get('model', '')}"] += 1
        return body

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        faulted = await self._fault(request)
        if faulted is not None:
            return faulted
        body = await self._body(request)
        if isinstance(body, web.Response):
            return body
        outcome, headers = request.get(OUTCOME, "ok"), request.get(HEADERS, {})
        answer = self.answer(body, outcome)
        if isinstance(answer, tuple):
            return web.json_response(answer[1], status=answer[0], headers=headers)
        model, usage = answer.head["model"], answer.usage
        if body.get("stream") is True:
            wanted = (body.get("stream_options") or {}).get("include_usage") is True
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache",
                                                   **headers})
            await response.prepare(request)
            events = list(stream_events(answer.head, answer.message, usage if wanted else None))
            for event in events[:len(events) // 2] if outcome == "cut" else events:
                await response.write(event)
            if outcome == "cut":
                return self._cut(request, response)
            await response.write_eof()
            self.bill.add(model, usage["prompt_tokens"], usage["completion_tokens"], answer.cached)
            return response
        data = json.dumps(answer.completion()).encode("utf-8")
        if outcome == "cut":
            response = web.StreamResponse(headers={"Content-Type": "application/json", **headers})
            response.content_length = len(data)
            await response.prepare(request)
            await response.write(data[:len(data) // 2])
            return self._cut(request, response)
        self.bill.add(model, usage["prompt_tokens"], usage["completion_tokens"], answer.cached)
        return web.Response(body=data, content_type="application/json", headers=headers)

    def answer(self, body: dict[str, Any], outcome: str = "ok") -> "Answer | tuple[int, dict[str, Any]]":
        """The answer to a chat-completions request body (`outcome`: a content filter or a refusal drawn for it), or
        (an HTTP status, its error body). Served by /v1/chat/completions and, line by line, by the batch endpoints
        (`mock_batch`); the caller bills it."""
        model = str(body.get("model", ""))
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return 400, {"error": {"message": "messages must be a non-empty list"}}
        calls = tool_calls(model, body, self.stats["requests"])
        text = "" if calls else after_tools(model, messages) or reply_for(model, messages)
        if text is None:
            return 404, {"error": {"message": f"The model `{model}` does not exist (mock models: {', '.join(MODELS)})",
                                   "type": "invalid_request_error", "code": "model_not_found"}}
        texts = [_text(m) for m in messages]
        prompt_tokens = sum(self._count_cached(t) + 3 for t in texts) + 3
        window = self.faults.contexts.get(model, self.faults.context)
        if window is not None and prompt_tokens > window:
            self.stats["context_length_exceeded"] += 1
            return 400, {"error": {
                "message": f"This model's maximum context length is {window} tokens. However, your messages resulted "
                           f"in {prompt_tokens} tokens. Please reduce the length of the messages.",
                "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}
        if not calls:
            text = structured_reply(text, body.get("response_format"))  # structured output, as asked
        finish = "tool_calls" if calls else "stop"
        message: dict[str, Any] = {"role": "assistant", "content": text or None, "tool_calls": calls} if calls \
            else {"role": "assistant", "content": text}
        if outcome == "content_filter":
            calls, text, finish = None, "", "content_filter"
            message = {"role": "assistant", "content": None}
        elif outcome == "refusal":
            calls, text = None, ""
            message = {"role": "assistant", "content": None, "refusal": REFUSAL}
        most = body.get("max_tokens")
        if isinstance(most, int) and most >= 1 and not calls and self._tokenizer.count(text) > most:
            text, finish = get_encoding(self._tokenizer.encoding_name).decode(self._tokenizer.encode(text)[:most]), \
                "length"
            message = {"role": "assistant", "content": text}
        said = (message.get("refusal") or text) + "".join(c["function"]["name"] + c["function"]["arguments"]
                                                          for c in calls or [])
        completion_tokens = self._tokenizer.count(said) if said else 0
        cached = self.prompt_cache.cached(model, [f"{m.get('role')}:{t}" for m, t in zip(messages, texts)],
                                          [self._count_cached(t) + 3 for t in texts]) if self.prompt_cache else 0
        self.stats["ok_replies"] += 1
        self.stats["tool_calls"] += len(calls or [])
        usage: dict[str, Any] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                                 "total_tokens": prompt_tokens + completion_tokens}
        if cached:
            usage["prompt_tokens_details"] = {"cached_tokens": cached}
        head = {"id": f"chatcmpl-mock-{self.stats['requests']}", "created": 0, "model": model}
        return Answer(head, message, usage, finish, cached)

    @staticmethod
    def _cut(request: web.Request, response: web.StreamResponse) -> web.StreamResponse:
        """The connection closed in the middle of a response (not billed: it never arrived whole)."""
        if request.transport is not None:
            request.transport.close()
        return response

    async def _embeddings(self, request: web.Request) -> web.StreamResponse:
        faulted = await self._fault(request)
        if faulted is not None:
            return faulted
        body = await self._body(request)
        if isinstance(body, web.Response):
            return body
        model = str(body.get("model", ""))
        if model not in EMBEDDING_MODELS:
            return web.json_response({"error": {"message": f"The embedding model `{model}` does not exist (mock "
                                                           f"embedding models: {', '.join(EMBEDDING_MODELS)})",
                                                "type": "invalid_request_error"}}, status=404)
        given = body.get("input")
        texts = [given] if isinstance(given, str) else given
        dimensions = body.get("dimensions", EMBED_DIMENSIONS)
        form = body.get("encoding_format", "float")
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            return web.json_response({"error": {"message": "input must be a string or a non-empty list of strings"}},
                                     status=400)
        if not isinstance(dimensions, int) or not 1 <= dimensions <= MAX_DIMENSIONS or form not in ("float", "base64"):
            return web.json_response({"error": {"message": f"dimensions must be 1 to {MAX_DIMENSIONS} and "
                                                           "encoding_format float or base64"}}, status=400)
        data = []
        for i, text in enumerate(texts):
            vector: list[float] | str = embed(text, dimensions)
            if form == "base64":
                vector = base64.b64encode(struct.pack(f"<{dimensions}f", *vector)).decode("ascii")
            data.append({"object": "embedding", "index": i, "embedding": vector})
        tokens = sum(self._count_cached(t) for t in texts)
        self.stats["ok_replies"] += 1
        return web.json_response({"object": "list", "data": data, "model": model,
                                  "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})
