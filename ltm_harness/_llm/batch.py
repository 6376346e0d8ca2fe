"""The judge's requests through the provider's Batch API (OpenAI's: upload a JSONL file, create a batch, poll it,
download its output and error files, match lines by `custom_id`), billed at the batch discount.

`JudgeBatch` is what the judge does in a run judged in batches: a request the disk cache cannot answer is kept
(`requests`) and its verdict left pending (`JudgePending`, so the test is unscored for now) instead of being sent;
an answer a batch of this run paid for is counted as paid (at `PriceTable.batch_cost`) the first time it is used,
and a request the batch refused fails as the same request sent online would. The runner submits what was kept
(`submit`), polls (`status`), puts the answers into the disk cache (`collect`: keyed by `cache_key`, which is
also each line's `custom_id`) and scores again; see `ltm_harness._runner.judge_batch`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from ltm_harness._errors import LLMError
from ltm_harness._guard.limits import cut_words
from ltm_harness._llm.client import ChatResult, LLMClient, cache_key
from ltm_harness._llm.ledger import Hold
from ltm_harness._llm.pricing import BATCH_DISCOUNT
from ltm_harness._scoring.verdict import JudgePending
from ltm_harness._store.records import Role

if TYPE_CHECKING:  # pragma: no cover
    from openai import AsyncOpenAI

CHAT: Literal["/v1/chat/completions"] = "/v1/chat/completions"
ENDED = ("completed", "failed", "expired", "cancelled")
TAG = "ltm_harness_batch"  # the metadata key naming the requests of a batch (to find it again after a kill)


@dataclass(frozen=True)
class BatchRequest:
    key: str  # cache_key of the request: its custom_id in the batch
    model: str
    messages: list[dict[str, str]]
    params: dict[str, Any]

    def line(self) -> str:
        return json.dumps({"custom_id": self.key, "method": "POST", "url": CHAT,
                           "body": {"model": self.model, "messages": self.messages, **self.params}},
                          ensure_ascii=False, sort_keys=True)


class BatchStatus(BaseModel):
    """What polling a batch says."""

    id: str
    status: str
    total: int = 0
    completed: int = 0
    failed: int = 0
    output_file_id: str | None = None
    error_file_id: str | None = None
    errors: str | None = None  # why a failed batch failed

    @property
    def ended(self) -> bool:
        return self.status in ENDED

    def line(self) -> str:
        """`judge batch batch_abc: 120/199 done (in_progress)`."""
        failed = f", {self.failed} failed" if self.failed else ""
        return f"judge batch {self.id}: {self.completed}/{self.total} done{failed} ({self.status})"


@dataclass
class BatchAnswers:
    """A finished batch's lines: answered (into the cache), refused for good (`failed`: key -> why) and not done
    (`missing`: expired, cancelled, or refused for a reason that passes, such as a rate limit)."""

    answered: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class JudgeBatch:
    """The judge's side of a run judged in batches (see the module's docstring). `paid`: key -> the batch that
    answered it, for the batches of this run; `failed`: key -> why a batch refused it; `read_cache`: whether
    answers cached before this run may be used (False with --no-cache); `online`: the last scoring, after the last
    batch: a request still unanswered is sent online instead of kept."""

    paid: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    read_cache: bool = True
    online: bool = False
    requests: dict[str, BatchRequest] = field(default_factory=dict)
    _claimed: set[str] = field(default_factory=set)

    def answer(self, client: LLMClient, role: Role, model: str, messages: list[dict[str, str]],
               params: dict[str, Any], test: str | None) -> ChatResult | None:
        """The cached answer to this request; else JudgePending after keeping it for the next batch (or None when
        `online`: the caller sends it)."""
        key = cache_key(client.endpoint, model, messages, params)
        if key in self.failed:
            raise LLMError(self.failed[key])
        paid = key in self.paid and key not in self._claimed  # the first use of an answer this run paid for
        if key in self.paid or self.read_cache:
            hit = client.from_cache(role, model, messages, params, test=test, keep_response=True, paid=paid)
            if hit is not None:
                if paid:
                    self._claimed.add(key)
                return hit
        if self.online:
            return None
        self.requests.setdefault(key, BatchRequest(key, model, messages, params))
        raise JudgePending("waiting for the judge's batch")


def _status(batch: Any) -> BatchStatus:
    counts = getattr(batch, "request_counts", None)
    errors = getattr(batch, "errors", None)
    said = "; ".join(str(getattr(e, "message", "") or getattr(e, "code", ""))
                     for e in (getattr(errors, "data", None) or []))
    return BatchStatus(id=batch.id, status=batch.status, total=getattr(counts, "total", 0) or 0,
                       completed=getattr(counts, "completed", 0) or 0, failed=getattr(counts, "failed", 0) or 0,
                       output_file_id=batch.output_file_id, error_file_id=batch.error_file_id,
                       errors=cut_words(" ".join(said.split()), 300) or None)


async def submit(client: LLMClient, requests: list[BatchRequest], tag: str) -> BatchStatus:
    """Upload the requests as a JSONL file and create a batch of them, tagged `tag` (metadata) so that `find` knows
    it again. The run's ledger is asked first for the batch's worst case at the batch discount: `BudgetReached`
    when it could pass the budget, and then nothing is sent. (Its spend is settled when its answers are collected.)"""
    if client.ledger is not None:
        counted = client.ledger.budget is not None
        holds = [client.ledger.reserve("judge", r.model, client.count_prompt(r.messages) if counted else 0,
                                       r.params.get("max_tokens"), discount=BATCH_DISCOUNT) for r in requests]
        for hold in holds:  # only a check: nothing else spends while the batch is waited for
            client.ledger.release(hold)
    data = ("\n".join(r.line() for r in requests) + "\n").encode("utf-8")

    async def upload(sdk: "AsyncOpenAI") -> Any:
        return await sdk.files.create(file=("judge-batch.jsonl", data, "application/jsonl"), purpose="batch")

    uploaded = await client.request("POST /files", upload)

    async def create(sdk: "AsyncOpenAI") -> Any:
        return await sdk.batches.create(input_file_id=uploaded.id, endpoint=CHAT, completion_window="24h",
                                        metadata={TAG: tag})

    return _status(await client.request("POST /batches", create))


async def find(client: LLMClient, tag: str) -> BatchStatus | None:
    """The newest batch tagged `tag` among the provider's latest 100 (one this run created before it was killed,
    before its id was kept), or None."""

    async def newest(sdk: "AsyncOpenAI") -> Any:
        return await sdk.batches.list(limit=100)

    page = await client.request("GET /batches", newest)
    for batch in page.data:
        if (getattr(batch, "metadata", None) or {}).get(TAG) == tag and batch.status not in ("failed", "cancelled",
                                                                                            "cancelling", "expired"):
            return _status(batch)
    return None


async def status(client: LLMClient, batch_id: str) -> BatchStatus:
    async def retrieve(sdk: "AsyncOpenAI") -> Any:
        return await sdk.batches.retrieve(batch_id)

    return _status(await client.request(f"GET /batches/{batch_id}", retrieve))


async def _lines(client: LLMClient, file_id: str) -> list[dict[str, Any]]:
    async def content(sdk: "AsyncOpenAI") -> Any:
        return await sdk.files.content(file_id)

    body = await client.request(f"GET /files/{file_id}/content", content)
    out = []
    for line in body.content.decode("utf-8", "replace").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue  # a torn line is a line not answered: its request goes into the next batch
        if isinstance(entry, dict) and isinstance(entry.get("custom_id"), str):
            out.append(entry)
    return out


def _refusal(client: LLMClient, model: str, batch_id: str, entry: dict[str, Any]) -> tuple[str, bool]:
    """Why a line of the error file was not answered, and whether that passes (a rate limit, a server error, the
    batch's end: sent again in the next batch)."""
    response = entry.get("response") or {}
    code = response.get("status_code") if isinstance(response, dict) else None
    body = response.get("body") if isinstance(response, dict) else None
    error = (body or {}).get("error") if isinstance(body, dict) else None
    error = error or entry.get("error") or {}
    detail = cut_words(" ".join(str(error.get("message") or error.get("code") or "").split()), 300) \
        if isinstance(error, dict) else ""
    if not isinstance(code, int):
        return f"{detail}", True
    passes = code in (408, 409, 429) or code >= 500
    return client.endpoint.scrub(f"{client.endpoint.display} (model {model}) answered HTTP {code} in judge batch "
                                 f"{batch_id}: {detail}; check the model name, the key and the request settings"), \
        passes


async def collect(client: LLMClient, batch: BatchStatus, requests: dict[str, str]) -> BatchAnswers:
    """Put a finished batch's answers into the disk cache (priced as batch answers) and sort out the rest.
    `requests`: key -> model, of every line the batch was sent."""
    answers = BatchAnswers()
    seen: set[str] = set()
    for entry in await _lines(client, batch.output_file_id) if batch.output_file_id else []:
        key = entry["custom_id"]
        response = entry.get("response") or {}
        body = response.get("body") if isinstance(response, dict) else None
        if key not in requests or response.get("status_code") != 200 or not isinstance(body, dict):
            continue
        try:
            text = body["choices"][0]["message"]["content"] or ""
            usage = body.get("usage") or {}
            prompt, completion = int(usage["prompt_tokens"]), int(usage.get("completion_tokens") or 0)
        except (KeyError, IndexError, TypeError, ValueError):
            continue  # malformed: not answered, sent again
        if client.cache is not None:
            client.cache.put(key, text, prompt, completion, False, batch=batch.id)
        if client.ledger is not None:  # what the provider bills for it, at the batch discount
            model = requests[key]
            client.ledger.settle(Hold("judge", model, 0.0, client.prices.price(model) is not None),
                                 client.prices.batch_cost(model, prompt, completion))
        seen.add(key)
        answers.answered += 1
        answers.prompt_tokens += prompt
        answers.completion_tokens += completion
    for entry in await _lines(client, batch.error_file_id) if batch.error_file_id else []:
        key = entry["custom_id"]
        if key in requests and key not in seen:
            why, passes = _refusal(client, requests[key], batch.id, entry)
            if not passes:
                answers.failed[key] = why
                seen.add(key)
    answers.missing = [k for k in requests if k not in seen]
    return answers

