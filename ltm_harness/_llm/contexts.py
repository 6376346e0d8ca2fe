"""Context sizes of common models (tokens a prompt may hold), to warn when a run would send more.

Matched like prices: a model's exact name, else the longest table entry it starts with (`gpt-4o-2024-08-06` has
gpt-4o's). A config's `llm.contexts` adds or overrides models (`{my-model: 32000}`). A model not in the table is
not checked. Sizes are the providers' published context windows (2025).
"""

from __future__ import annotations

from ltm_harness._llm.pricing import longest_match

BUILTIN_CONTEXTS: dict[str, int] = {
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "o1": 200_000,
    "o3": 200_000,
    "o3-mini": 200_000,
    "o4-mini": 200_000,
    "claude-": 200_000,
    "gemini-1.5-pro": 2_097_152,
    "gemini-1.5-flash": 1_048_576,
    "gemini-2.0-flash": 1_048_576,
    "gemini-2.5-pro": 1_048_576,
    "gemini-2.5-flash": 1_048_576,
}


# The most tokens one reply may have (providers' published output limits, 2025): what a call without max_tokens
# can be billed for its reply at worst (the budget check, ltm_harness._llm.ledger).
BUILTIN_MAX_OUTPUT: dict[str, int] = {
    "gpt-4o": 16_384,
    "gpt-4o-mini": 16_384,
    "gpt-4.1": 32_768,
    "gpt-4-turbo": 4_096,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 4_096,
    "o1": 100_000,
    "o3": 100_000,
    "o3-mini": 100_000,
    "o4-mini": 100_000,
}


class ContextTable:
    def __init__(self, overrides: dict[str, int] | None = None) -> None:
        self.sizes = {**BUILTIN_CONTEXTS, **(overrides or {})}
        self._order = sorted(self.sizes, key=len, reverse=True)
        self._output_order = sorted(BUILTIN_MAX_OUTPUT, key=len, reverse=True)

    def max_output(self, model: str) -> int | None:
        """The most tokens one reply of the model may have, None when it is not known."""
        return longest_match(model, BUILTIN_MAX_OUTPUT, self._output_order)

    def context(self, model: str) -> int | None:
        """The model's context size in tokens, None when it is not known."""
        return longest_match(model, self.sizes, self._order)
