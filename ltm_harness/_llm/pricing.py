"""Prices in USD per million tokens, and the cost of a call.

The built-in table holds list prices of common OpenAI models (2025), with the discounted price of cached input
(a prompt prefix the provider has seen recently) where the provider gives one; a config's `llm.prices` adds or
overrides models. A model matches its exact name, else the longest table entry it starts with
(`gpt-4o-mini-2024-07-18` is priced as `gpt-4o-mini`). Models of the shipped mock server cost 0.
A model with no price gives cost None: it is reported as unpriced, never silently free. A request answered through
the provider's Batch API (a judge batch) costs `BATCH_DISCOUNT` of its list price, input and output.
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field

T = TypeVar("T")
BATCH_DISCOUNT = 0.5  # what the Batch API charges of the online price (OpenAI: half); the ledger's `discount`


class Price(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompt: float = Field(ge=0, description="USD per 1M prompt (input) tokens")
    completion: float = Field(ge=0, description="USD per 1M completion (output) tokens")
    cached_prompt: float | None = Field(default=None, ge=0, description="USD per 1M cached prompt tokens, where the "
                                        "provider discounts a repeated prompt prefix (None: no discount)")


BUILTIN_PRICES: dict[str, Price] = {
    "gpt-4o-mini": Price(prompt=0.15, completion=0.60, cached_prompt=0.075),
    "gpt-4o": Price(prompt=2.50, completion=10.00, cached_prompt=1.25),
    "gpt-4.1-nano": Price(prompt=0.10, completion=0.40, cached_prompt=0.025),
    "gpt-4.1-mini": Price(prompt=0.40, completion=1.60, cached_prompt=0.10),
    "gpt-4.1": Price(prompt=2.00, completion=8.00, cached_prompt=0.50),
    "gpt-4-turbo": Price(prompt=10.00, completion=30.00),
    "gpt-4": Price(prompt=30.00, completion=60.00),
    "gpt-3.5-turbo": Price(prompt=0.50, completion=1.50),
    "o3-mini": Price(prompt=1.10, completion=4.40, cached_prompt=0.55),
    "o4-mini": Price(prompt=1.10, completion=4.40, cached_prompt=0.275),
    "mock": Price(prompt=0.0, completion=0.0),
}


def longest_match(model: str, table: dict[str, T], order: list[str]) -> T | None:
    """The entry of `model`: its exact name, else the longest name it starts with (`order`: names, longest first)."""
    if model in table:
        return table[model]
    for name in order:
        if model.startswith(name):
            return table[name]
    return None


class PriceTable:
    def __init__(self, overrides: dict[str, Price] | None = None) -> None:
        self.prices = {**BUILTIN_PRICES, **(overrides or {})}
        self._order = sorted(self.prices, key=len, reverse=True)

    def price(self, model: str) -> Price | None:
        return longest_match(model, self.prices, self._order)

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        p = self.price(model)
        if p is None:
            return None
        return round((prompt_tokens * p.prompt + completion_tokens * p.completion) / 1_000_000, 10)

    def batch_cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        """The cost of a request answered through the Batch API (None: the model has no price)."""
        full = self.cost(model, prompt_tokens, completion_tokens)
        return None if full is None else round(full * BATCH_DISCOUNT, 10)

    def cost_cached(self, model: str, prompt_tokens: int, cached_tokens: int, completion_tokens: int) -> float | None:
        """The cost when `cached_tokens` of the prompt tokens are billed at the cached-input price (None: the model
        has no price, or its provider gives no such discount)."""
        p = self.price(model)
        if p is None or p.cached_prompt is None:
            return None
        fresh = prompt_tokens - cached_tokens
        return round((fresh * p.prompt + cached_tokens * p.cached_prompt + completion_tokens * p.completion)
                     / 1_000_000, 10)
