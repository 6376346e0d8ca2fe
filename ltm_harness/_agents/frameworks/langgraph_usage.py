"""Every model call of a LangChain/LangGraph turn, as LangChain's callbacks report it.

The adapter passes a `CallUsage` handler in the turn's config; LangChain hands it to every chat model the graph
calls in that turn (nodes, tools, a summarising step, a prebuilt agent's loop), including calls whose messages
never reach the thread. Each call's tokens are its `usage_metadata` (or the provider's `token_usage`), priced by
its model. A call made outside LangChain (a raw OpenAI client in a node), or on a thread the callbacks do not
follow, is not seen: the turn then falls back to the usage on the messages it added, and the docs say so.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import LLMResult

from ltm_harness._agents.frameworks.base import ModelUsage


class CallUsage(BaseCallbackHandler):
    """Collects the usage of each model call LangChain reports (`usage`, one entry per call)."""

    raise_error = False

    def __init__(self) -> None:
        self.usage: list[ModelUsage] = []

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        self.usage.append(call_usage(response))


def call_usage(response: LLMResult) -> ModelUsage:
    """One call's tokens and model: from its message's `usage_metadata`, else the provider's `token_usage`."""
    output = response.llm_output or {}
    model = output.get("model_name") or output.get("model")
    prompt = completion = 0
    found = False
    for generations in response.generations:
        for generation in generations:
            message = getattr(generation, "message", None)
            usage = getattr(message, "usage_metadata", None)
            if usage:
                prompt += int(usage.get("input_tokens", 0))
                completion += int(usage.get("output_tokens", 0))
                found = True
            meta = getattr(message, "response_metadata", None) or {}
            model = model or meta.get("model_name") or meta.get("model")
    if not found:
        tokens = output.get("token_usage") or {}
        prompt, completion = int(tokens.get("prompt_tokens", 0)), int(tokens.get("completion_tokens", 0))
    return ModelUsage(model if isinstance(model, str) else None, prompt, completion)
