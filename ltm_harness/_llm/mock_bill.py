"""The mock provider's own bill: what it answered, per model, as a provider bills it (prompt tokens, the prompt
tokens its prompt cache served, completion tokens; requests of the Batch API apart, at the batch discount).

Only responses delivered whole are billed (a request refused, faulted, or cut on its way costs nothing here), so a
run's reported cost can be checked against it: `usd(prices)` prices it with the harness's own price table. Read it
from a running server at `GET /mock/bill`, or from `MockLLMServer.bill` in tests."""

from __future__ import annotations

from pydantic import BaseModel

from ltm_harness._llm.pricing import BATCH_DISCOUNT, PriceTable


class BillLine(BaseModel):
    """One model's usage on the bill (online, or through the Batch API)."""

    requests: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0  # of the prompt tokens, those the prompt cache served (billed at the cached price)
    completion_tokens: int = 0


class Bill(BaseModel):
    online: dict[str, BillLine] = {}
    batch: dict[str, BillLine] = {}

    def add(self, model: str, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0,
            batch: bool = False) -> None:
        line = (self.batch if batch else self.online).setdefault(model, BillLine())
        line.requests += 1
        line.prompt_tokens += prompt_tokens
        line.cached_tokens += cached_tokens
        line.completion_tokens += completion_tokens

    def usd(self, prices: PriceTable, models: set[str] | None = None) -> float:
        """The bill in USD (of `models` only, when given): cached input at its price, the Batch API's lines at
        BATCH_DISCOUNT. A model without a price counts 0."""
        total = 0.0
        for lines, factor in ((self.online, 1.0), (self.batch, BATCH_DISCOUNT)):
            for model, line in lines.items():
                if models is not None and model not in models:
                    continue
                cost = prices.cost_cached(model, line.prompt_tokens, line.cached_tokens, line.completion_tokens) \
                    if line.cached_tokens else None
                if cost is None:
                    cost = prices.cost(model, line.prompt_tokens, line.completion_tokens)
                total += (cost or 0.0) * factor
        return round(total, 10)
