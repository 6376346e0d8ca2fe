"""One async client for every chat-completions call: agents, the judge, generation, dynamic tests.

* The official `openai.AsyncOpenAI` SDK does the HTTP, with its own retries turned off: retries are
  ours (tenacity), so that they are counted and visible in the event log.
* Retried: 429, 408, 409, 5xx, timeouts, dropped connections, responses cut in the middle and malformed response
  bodies, with exponential backoff and full jitter; a `Retry-After`/`retry-after-ms` header is honoured (the wait
  is at least what the server asks). A call stops retrying after `max_attempts` attempts (429s not counted: a rate
  limit is waited out, never an error) or when the next wait would pass its `retry_budget` seconds; every request
  has a `timeout`. So no call can hang.
* Any other 4xx fails at once with one sentence naming the endpoint, the model and the status; a prompt longer
  than the model's context (`context_length_exceeded`) says so, and is never asked again (`retry=False`).
* Concurrency is limited per endpoint and per pool: the agent under test has its own pool, and the
  judge, dataset generation and dynamic tests share another, so a slow judge never starves the agent. Within
  them, each endpoint and model has a `RateGate` (ltm_harness._llm.ratelimit) that follows the provider's rate
  limit: AIMD concurrency on 429s, and pauses driven by `Retry-After` and the `x-ratelimit-*` headers.
* Usage comes from the response; when a server sends none, tokens are counted here (and marked so).
  Cost comes from the price table; what was billed (cached input at its price) is kept beside it. A content
  filter's finish or a refusal is the reply (its text, maybe empty). Each call returns an `LLMCall` record.
* Budget: before each request the run's `Ledger` (ltm_harness._llm.ledger) reserves the call's worst-case cost
  and may refuse it (`BudgetReached`); after it, the ledger is told what was billed.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Awaitable, Callable, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_before_delay
from tenacity.wait import wait_random_exponential

from ltm_harness._errors import LLMError
from ltm_harness._guard.retry_after import retry_after_seconds as header_wait
from ltm_harness._guard.limits import MAX_ATTEMPTS, MAX_CONCURRENCY, MAX_REPLY_BYTES, MAX_SECONDS, cut_words
from ltm_harness._guard.redirects import endpoint_redirect
from ltm_harness._llm.endpoint import Endpoint
from ltm_harness._llm.pricing import Price, PriceTable
from ltm_harness._llm.ratelimit import SEEN, RateGate, Seen
from ltm_harness._store.records import LLMCall, Role
from ltm_harness._tokens import DEFAULT_ENCODING, get_tokenizer

if TYPE_CHECKING:  # pragma: no cover
    from openai import AsyncOpenAI

    from ltm_harness._llm.cache import LLMCache
    from ltm_harness._llm.ledger import Ledger

T = TypeVar("T")
LISTING_TIMEOUT = 30.0  # seconds the model list (GET /models, the check before the first turn) is waited for, at most
MESSAGE_OVERHEAD = 3  # tokens per chat message beyond its content (role and separators)
REPLY_PRIMING = 3  # tokens that prime the assistant's reply


class LLMSettings(BaseModel):
    """`config.llm`: how every LLM call is made."""

    model_config = ConfigDict(extra="forbid", strict=True)

    timeout: float = Field(default=60.0, gt=0, le=MAX_SECONDS, description="seconds for one request")
    max_attempts: int = Field(default=6, ge=1, le=MAX_ATTEMPTS, description="attempts per call, the first one included")
    retry_budget: float = Field(default=300.0, gt=0, le=MAX_SECONDS, description="seconds one call may spend, waits included")
    backoff_initial: float = Field(default=0.5, ge=0, le=3600, description="first backoff in seconds (doubles, with jitter)")
    backoff_max: float = Field(default=30.0, gt=0, le=MAX_SECONDS, description="longest backoff in seconds (Retry-After may ask more)")
    agent_concurrency: int = Field(default=16, ge=1, le=MAX_CONCURRENCY, description="requests at once to one endpoint by agents under test")
    judge_concurrency: int = Field(default=4, ge=1, le=MAX_CONCURRENCY, description="requests at once to one endpoint by judge, generation and tests")
    max_reply_bytes: int = Field(default=MAX_REPLY_BYTES, ge=1024, le=1024**3,
                                 description="bytes of one response body, decompressed (larger: the call fails)")
    prices: dict[str, Price] = Field(default_factory=dict, description="USD per 1M tokens, per model (adds to the built-in table)")
    contexts: dict[str, Annotated[int, Field(ge=1, le=100_000_000)]] = Field(
        default_factory=dict, description="context size in tokens, per model (adds to the built-in table)")
    cache: bool = Field(default=True, description="cache judge and generation responses on disk")
    cache_dir: str | None = Field(default=None, description="cache folder (default: <results>/.llm-cache)")

    @model_serializer(mode="wrap")
    def _without_empty_contexts(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict) and not data.get("contexts", True):
            data.pop("contexts")  # saved configs that set none stay as they were
        return data


class Limits:
    """Concurrency pools: one per (agent | judge) and endpoint, shared by everything in a run."""

    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings
        self._pools: dict[tuple[str, str], asyncio.Semaphore] = {}
        self.gates: dict[tuple[str, str], RateGate] = {}

    def pool(self, role: Role, endpoint: Endpoint) -> asyncio.Semaphore:
        group = "agent" if role == "agent" else "judge"
        key = (group, endpoint.base_url)
        if key not in self._pools:
            size = self.settings.agent_concurrency if group == "agent" else self.settings.judge_concurrency
            self._pools[key] = asyncio.Semaphore(size)
        return self._pools[key]

    def gate(self, endpoint: Endpoint, model: str) -> RateGate:
        """The rate gate of one endpoint and model (a provider limits each model), shared by every pool."""
        key = (endpoint.base_url, model)
        if key not in self.gates:
            self.gates[key] = RateGate(self.settings.agent_concurrency + self.settings.judge_concurrency)
        return self.gates[key]


@dataclass
class ChatResult:
    text: str
    call: LLMCall


def request_hash(model: str, messages: list[dict[str, str]], params: dict[str, Any]) -> str:
    blob = json.dumps({"model": model, "messages": messages, "params": params}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def cache_key(endpoint: Endpoint, model: str, messages: list[dict[str, str]], params: dict[str, Any]) -> str:
    """The disk cache's key of a request: the endpoint (its URL as shown, never a key), the model and the full
    request, so two endpoints serving a model of the same name never answer for each other. It is also the request's
    `custom_id` in a judge batch."""
    blob = json.dumps({"endpoint": endpoint.display, "model": model, "messages": messages, "params": params},
                      sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:32]


def chat_params(temperature: float | None, max_tokens: int | None, json_mode: bool) -> dict[str, Any]:
    """The request's parameters besides the model and the messages."""
    params: dict[str, Any] = {}
    if temperature is not None:
        params["temperature"] = temperature
    if max_tokens is not None:
        params["max_tokens"] = max_tokens
    if json_mode:
        params["response_format"] = {"type": "json_object"}
    return params


def retry_after_seconds(exc: BaseException) -> float | None:
    """The wait a server asked for with the error `exc` (`retry-after-ms`, or `Retry-After` in seconds or an HTTP
    date)."""
    return header_wait(getattr(getattr(exc, "response", None), "headers", None))


def is_retryable(exc: BaseException) -> bool:
    import openai

    from ltm_harness._llm.transport import ReplyTooLarge

    if isinstance(exc, ReplyTooLarge) or isinstance(exc.__cause__, ReplyTooLarge):
        return False  # a server that sent an oversized body sends it again
    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError, asyncio.TimeoutError)):
        return True
    if isinstance(exc, openai.APIStatusError):
        if fails_every_call(exc):
            return False
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500
    if isinstance(exc, (openai.APIResponseValidationError, json.JSONDecodeError, _MalformedResponse)):
        return True
    return False


class ListedModels(list[str]):
    """The model names an endpoint lists (at most the limit asked for), and how many it lists in all."""

    total: int = 0


def fails_every_call(exc: BaseException) -> bool:
    """An answer that every later call would get too: a refused key (401, 403), a model the endpoint does not serve
    (404), an exhausted quota (429 `insufficient_quota`, which no wait mends)."""
    status = getattr(exc, "status_code", None)
    if status in (401, 403, 404):
        return True
    body = getattr(exc, "body", None)
    return status == 429 and isinstance(body, dict) and "insufficient_quota" in (body.get("code"), body.get("type"))


class CallFailed(LLMError):
    """A chat call that failed after its retries, said in one line; `call` is its record (`error` that line, no
    tokens, nothing paid), which a judge keeps in the event log so that a resume replays the failure."""

    def __init__(self, failure: LLMError, call: LLMCall) -> None:
        super().__init__(str(failure), fatal=failure.fatal, retry=failure.retry)
        self.call = call


class _MalformedResponse(Exception):
    """A 200 response without a usable completion."""


def is_rate_limited(exc: BaseException | None) -> bool:
    import openai

    return isinstance(exc, openai.APIStatusError) and exc.status_code == 429


def is_context_too_long(exc: BaseException) -> bool:
    """The provider refused the prompt as longer than the model's context (OpenAI's `context_length_exceeded`)."""
    import openai

    if not isinstance(exc, openai.APIStatusError) or exc.status_code != 400:
        return False
    body = exc.body
    code = body.get("code") if isinstance(body, dict) else None
    return code == "context_length_exceeded" or "context_length_exceeded" in str(body or "")


MAX_RATE_LIMITED = 10_000  # 429s one call may wait out (its retry_budget in seconds bounds it first)


class LLMClient:
    """Calls one endpoint. Cheap to make; `close()` releases its connections."""

    def __init__(
        self,
        endpoint: Endpoint,
        settings: LLMSettings | None = None,
        limits: Limits | None = None,
        prices: PriceTable | None = None,
        tokenizer: str = DEFAULT_ENCODING,
        cache: "LLMCache | None" = None,
        ledger: "Ledger | None" = None,
    ) -> None:
        self.endpoint = endpoint
        self.settings = settings or LLMSettings()
        self.limits = limits or Limits(self.settings)
        self.prices = prices or PriceTable(self.settings.prices)
        self.cache = cache
        self.ledger = ledger
        self._tokenizer = get_tokenizer(tokenizer)
        self._sdk: AsyncOpenAI | None = None

    def _client(self) -> AsyncOpenAI:
        if self._sdk is None:
            from openai import AsyncOpenAI  # slow to import: only when something really talks to an endpoint

            from ltm_harness._llm.transport import http_client

            self._sdk = AsyncOpenAI(api_key=self.endpoint.key.value, base_url=self.endpoint.base_url,
                                    timeout=self.settings.timeout, max_retries=0,
                                    http_client=http_client(self.settings.max_reply_bytes, self.settings.timeout))
        return self._sdk

    def count_prompt(self, messages: list[dict[str, str]]) -> int:
        return sum(self._tokenizer.count(m.get("content") or "") + MESSAGE_OVERHEAD for m in messages) + REPLY_PRIMING

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        backoff = wait_random_exponential(multiplier=self.settings.backoff_initial, max=self.settings.backoff_max)(state)
        asked = retry_after_seconds(exc) if exc is not None else None
        return max(backoff, asked) if asked is not None else backoff

    def _stop(self) -> Callable[[RetryCallState], bool]:
        """When a call stops retrying: past its retry budget, or after `max_attempts` attempts that were not 429s
        (a rate limit is waited out: the gate paces the calls to it)."""
        budget = stop_before_delay(self.settings.retry_budget)
        limited = 0

        def stop(state: RetryCallState) -> bool:
            nonlocal limited
            if is_rate_limited(state.outcome.exception() if state.outcome else None):
                limited += 1
            if budget(state) or limited >= MAX_RATE_LIMITED:
                return True
            return state.attempt_number - limited >= self.settings.max_attempts

        return stop

    async def chat(
        self,
        role: Role,
        model: str,
        messages: list[dict[str, str]],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        json_mode: bool = False,
        test: str | None = None,
        use_cache: bool = False,
        refresh_cache: bool = False,
        keep_response: bool = False,
        prompt_tokens: int | None = None,
    ) -> ChatResult:
        """One chat completion, retried as the module docstring says. `use_cache` answers from (and fills)
        the disk cache; `refresh_cache` only fills it (`--no-cache`: the call is made, its answer kept for later);
        `keep_response` stores the reply text in the record (for replay); `prompt_tokens`: the prompt's count when
        the caller knows it (else it is counted, only when a budget needs it)."""
        params = chat_params(temperature, max_tokens, json_mode)
        key = request_hash(model, messages, params)
        if use_cache:
            cached = self.from_cache(role, model, messages, params, test=test, keep_response=keep_response)
            if cached is not None:
                return cached
        attempts = 0
        started = time.perf_counter()
        retrying = self._retrying()
        gate = self.limits.gate(self.endpoint, model)
        async with self.limits.pool(role, self.endpoint):
            hold = None
            if self.ledger is not None:  # may raise BudgetReached: nothing was sent
                if prompt_tokens is None and self.ledger.budget is not None:
                    prompt_tokens = self.count_prompt(messages)
                hold = self.ledger.reserve(role, model, prompt_tokens or 0, max_tokens)
            try:
                async for attempt in retrying:
                    with attempt:
                        attempts += 1
                        text, usage = await self._attempt(gate, model, messages, params)
            except BaseException as exc:
                if hold is not None and self.ledger is not None:
                    self.ledger.release(hold)
                if isinstance(exc, Exception):
                    failure = self._failure(model, exc, attempts)
                    failed = LLMCall(role=role, model=model, endpoint=self.endpoint.display, test=test,
                                     request_hash=key, prompt_tokens=0, completion_tokens=0,
                                     latency_ms=round((time.perf_counter() - started) * 1000, 1),
                                     retries=max(attempts - 1, 0), cost_usd=0.0, error=str(failure))
                    raise CallFailed(failure, failed) from None
                raise
            latency = (time.perf_counter() - started) * 1000
            counted = usage is None
            prompt_tokens = usage[0] if usage else self.count_prompt(messages)
            completion_tokens = usage[1] if usage else self._tokenizer.count(text)
            cached_tokens = usage[2] if usage else None
            cost = self.prices.cost(model, prompt_tokens, completion_tokens)
            billed = self.prices.cost_cached(model, prompt_tokens, cached_tokens, completion_tokens) \
                if cached_tokens else None
            if hold is not None and self.ledger is not None:
                self.ledger.settle(hold, billed if billed is not None else cost)
        call = LLMCall(role=role, model=model, endpoint=self.endpoint.display, test=test, request_hash=key,
                       prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, usage_counted=counted,
                       latency_ms=round(latency, 1), retries=attempts - 1, cost_usd=cost,
                       cached_tokens=cached_tokens or None, billed_usd=billed if billed != cost else None,
                       response=text if keep_response else None)
        if self.cache is not None and (use_cache or refresh_cache):
            self.cache.put(cache_key(self.endpoint, model, messages, params), text, prompt_tokens, completion_tokens,
                           counted)
        return ChatResult(text, call)

    def from_cache(self, role: Role, model: str, messages: list[dict[str, str]], params: dict[str, Any], *,
                   test: str | None = None, keep_response: bool = False, paid: bool = False) -> ChatResult | None:
        """The disk cache's answer to this request (None: it has none). The call is recorded as a cache hit (nothing
        paid now), unless `paid`: an answer a judge batch of this run paid for, counted at its price then."""
        if self.cache is None:
            return None
        hit = self.cache.get(cache_key(self.endpoint, model, messages, params))
        if hit is None:
            return None
        cost = (self.prices.batch_cost if hit.batch else self.prices.cost)(model, hit.prompt_tokens,
                                                                           hit.completion_tokens)
        call = LLMCall(role=role, model=model, endpoint=self.endpoint.display, test=test,
                       request_hash=request_hash(model, messages, params), prompt_tokens=hit.prompt_tokens,
                       completion_tokens=hit.completion_tokens, usage_counted=hit.usage_counted, latency_ms=0.0,
                       cached=not paid, cost_usd=cost, response=hit.text if keep_response else None)
        return ChatResult(hit.text, call)

    def _retrying(self) -> AsyncRetrying:
        return AsyncRetrying(stop=self._stop(), wait=self._wait, retry=retry_if_exception(is_retryable), reraise=True)

    async def request(self, asked: str, op: "Callable[[AsyncOpenAI], Awaitable[T]]") -> T:
        """One request other than a chat completion (the Batch API's: `op` given the SDK), retried as a chat call is;
        a failure is one LLMError naming `asked` (e.g. "POST /files")."""
        attempts = 0
        try:
            async for attempt in self._retrying():
                with attempt:
                    attempts += 1
                    async with asyncio.timeout(self.settings.timeout + 5):  # (not wait_for: on Python 3.11 it can
                        result = await op(self._client())  # swallow a cancellation that comes as the call ends)
        except Exception as exc:
            raise self._failure("", exc, attempts, asked) from None
        return result

    async def listed_models(self, limit: int = 10_000, want: str | None = None) -> "ListedModels | None":
        """The models the endpoint lists (`GET /models`: at most `limit` kept, every one counted in `total`, and
        `want` kept wherever it is in the list), once, within 30 s; None when it has no such list (HTTP 404 or 405:
        servers that serve chat only); an LLMError when it cannot be reached or refuses the key."""
        import openai

        ids = ListedModels()
        seconds = min(self.settings.timeout, LISTING_TIMEOUT)

        async def listing() -> None:
            async for model in self._client().with_options(timeout=seconds).models.list():
                name = str(getattr(model, "id", ""))
                ids.total += 1
                if len(ids) < limit or name == want:
                    ids.append(name)

        try:
            async with asyncio.timeout(seconds):
                await listing()
        except openai.APIStatusError as exc:
            if exc.status_code in (404, 405):
                return None
            raise self._failure("", exc, 1, "GET /models", seconds) from None
        except (openai.APIError, asyncio.TimeoutError, json.JSONDecodeError) as exc:
            raise self._failure("", exc, 1, "GET /models", seconds) from None
        except Exception:  # the SDK could not read the reply as a page of models (HTML, a bare list, ...)
            raise LLMError(f"{self.endpoint.display} (GET /models) answered with something that is not a list of "
                           'models (OpenAI-compatible servers answer {"data": [{"id": ...}, ...]}); check that the base '
                           "URL is the API's, usually ending in /v1") from None
        return ids

    async def _attempt(self, gate: RateGate, model: str, messages: list[dict[str, str]],
                       params: dict[str, Any]) -> tuple[str, tuple[int, int, int] | None]:
        """One request, paced by the gate, which then hears what the response said (status, rate-limit headers)."""
        seen = Seen()
        token = SEEN.set(seen)
        try:
            async with gate:
                try:
                    text, usage = await self._once(model, messages, params)
                except BaseException as exc:
                    response = getattr(exc, "response", None)
                    if response is not None and not seen.status:
                        seen.status, seen.headers = response.status_code, response.headers
                    gate.observe(seen)
                    raise
                gate.observe(seen, usage[0] + usage[1] if usage else 0)
        finally:
            SEEN.reset(token)
        return text, usage

    async def _once(self, model: str, messages: list[dict[str, str]],
                    params: dict[str, Any]) -> tuple[str, tuple[int, int, int] | None]:
        from openai.types.chat import ChatCompletion

        # The SDK's own HTTP layer, without `chat.completions.create`'s per-message parameter transform,
        # which costs ~0.3 ms per message per call (seconds per call on 500k-token conversations).
        # The SDK's own timeout comes first; this is the backstop. Not wait_for: on Python 3.11 it returns the reply
        # when a cancellation (a kill) comes as the call ends, losing the cancellation.
        body = {"model": model, "messages": messages, **params}
        async with asyncio.timeout(self.settings.timeout + 5):
            completion = await self._client().post("/chat/completions", body=body, cast_to=ChatCompletion)
        choices = getattr(completion, "choices", None)
        if not choices or getattr(choices[0], "message", None) is None:
            raise _MalformedResponse("the response has no choices")
        message = choices[0].message
        # a content filter's finish (maybe with no content) or a refusal is the model's reply as it stands
        text = message.content or getattr(message, "refusal", None) or ""
        usage = getattr(completion, "usage", None)
        if usage is None or usage.prompt_tokens is None:
            return text, None
        details = getattr(usage, "prompt_tokens_details", None)
        cached = getattr(details, "cached_tokens", None) or 0
        return text, (int(usage.prompt_tokens), int(usage.completion_tokens or 0), int(cached))

    def _failure(self, model: str, exc: BaseException, attempts: int, asked: str | None = None,
                 seconds: float | None = None) -> LLMError:
        """One line for a call that failed; `seconds`: how long the call was given, when not `llm.timeout`."""
        import openai

        from ltm_harness._llm.transport import ReplyTooLarge

        where = f"{self.endpoint.display} ({asked or f'model {model}'})"
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        too_large = exc if isinstance(exc, ReplyTooLarge) else exc.__cause__
        if isinstance(too_large, ReplyTooLarge):
            return LLMError(f"{where} sent a response that was refused: {too_large}; raise llm.max_reply_bytes if "
                            "it is genuine")
        if isinstance(exc, openai.APIStatusError) and 300 <= exc.status_code < 400:
            return LLMError(self.endpoint.scrub(f"{where} " + endpoint_redirect(
                exc.status_code, exc.response.headers.get("Location")) + " as the base URL"), fatal=True)
        if is_context_too_long(exc):
            return LLMError(f"{where}: the prompt is longer than the model's context (context_length_exceeded); give "
                            "the agent a window (openai:MODEL@MAX_CONTEXT) or a model with a larger context",
                            retry=False)
        if isinstance(exc, openai.APIStatusError):
            body = exc.body
            detail = body.get("message") if isinstance(body, dict) else body
            detail = cut_words(" ".join(str(detail or "").split()), 300)
            said = f": {detail}" if detail else ""
            fix = "" if is_retryable(exc) else "; check the model name, the key and the request settings"
            if exc.status_code == 429 and not is_retryable(exc):
                fix = "; the account's quota is used up: add credit or use another key, then continue"
            return LLMError(self.endpoint.scrub(f"{where} answered HTTP {exc.status_code}{said}{tries}{fix}"),
                            fatal=fails_every_call(exc))
        if isinstance(exc, (openai.APITimeoutError, asyncio.TimeoutError)):
            fix = "check the server" + ("" if seconds is not None else " or raise llm.timeout")
            return LLMError(f"{where} did not answer within {seconds or self.settings.timeout:g} s{tries}; {fix}")
        if isinstance(exc, openai.APIConnectionError):
            return LLMError(f"{where} cannot be reached{tries}; check the base URL and that the server is running")
        if isinstance(exc, (openai.APIResponseValidationError, json.JSONDecodeError, _MalformedResponse)):
            return LLMError(f"{where} sent a malformed response{tries}: {type(exc).__name__}")
        return LLMError(self.endpoint.scrub(f"{where} failed{tries}: {type(exc).__name__}: {exc}"))

    async def close(self) -> None:
        if self._sdk is not None:
            sdk, self._sdk = self._sdk, None
            await sdk.close()
