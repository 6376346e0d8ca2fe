"""Agent adapters, made from a spec string such as `retrieval`, `recent:2000`, `openai:gpt-4o-mini`."""

from __future__ import annotations

import importlib
import inspect
from typing import Any, Callable

from ltm_harness._agents.base import Agent, AgentMessage, Reply
from ltm_harness._errors import AgentError

# kind -> (module, class, one line of description)
AGENT_KINDS: dict[str, tuple[str, str, str]] = {
    "oracle": ("ltm_harness._agents.baselines", "OracleAgent", "calibration agent handed the expected answers; scores 1.0"),
    "null": ("ltm_harness._agents.baselines", "NullAgent", "no memory: always answers \"I don't know.\"; scores about 0"),
    "recent": ("ltm_harness._agents.baselines", "RecentAgent", "recent:N remembers only the last N tokens it was told and answers from them"),
    "retrieval": ("ltm_harness._agents.baselines", "RetrievalAgent", "remembers everything it was told and answers with the best BM25 matches"),
    "openai": ("ltm_harness._agents.openai_chat", "OpenAIChatAgent", "openai:MODEL[@max_context] any OpenAI-compatible chat endpoint (OPENAI_BASE_URL, OPENAI_API_KEY)"),
    "http": ("ltm_harness._agents.http_agent", "HTTPAgent", "http://HOST:PORT/PATH an agent behind HTTP (JSON protocol: docs/http-agent.md)"),
}


def _kind(spec: str) -> str:
    if spec.startswith(("http://", "https://")):
        return "http"
    return spec.split(":", 1)[0]


def agent_factory(spec: str, tokenizer: str | None = None,
                  options: dict[str, dict[str, Any]] | None = None) -> Callable[[], Agent]:
    """Check `spec` now and return a function that makes a fresh agent for it.

    `tokenizer` (the run's encoding) is handed to adapters that count tokens themselves, such as the
    context truncation of chat models, so that one tokenizer serves the whole run. `options` holds
    keyword settings per agent kind (from the config's `openai:` and `http:` sections)."""
    kind = _kind(spec)
    if kind not in AGENT_KINDS:
        raise AgentError(f"unknown agent {spec!r}; known agents: {', '.join(AGENT_KINDS)} (see `python -m ltm_harness list`)")
    if kind in ("oracle", "null", "retrieval") and spec != kind:
        raise AgentError(f"agent {spec!r}: {kind} takes no argument; write just {kind!r}")
    module, cls_name, _ = AGENT_KINDS[kind]
    cls = getattr(importlib.import_module(module), cls_name)
    kwargs: dict[str, Any] = dict((options or {}).get(kind, {}))
    if tokenizer and "tokenizer" in inspect.signature(cls).parameters:
        kwargs["tokenizer"] = tokenizer
    checked = [cls(spec, **kwargs)]  # constructing validates the spec (no network is touched); the first call gets it

    def make() -> Agent:
        return checked.pop() if checked else cls(spec, **kwargs)

    return make


def display_spec(spec: str) -> str:
    """The spec as runs show and store it (folder names, events, summaries, reports): an agent URL loses any
    user:password and query, which may hold secrets. Everything else is shown as given."""
    if spec.startswith(("http://", "https://")):
        from ltm_harness._agents.http_agent import shown_url

        return shown_url(spec)
    return spec


def make_agent(spec: str) -> Agent:
    return agent_factory(spec)()


__all__ = ["Agent", "AgentMessage", "Reply", "AGENT_KINDS", "agent_factory", "make_agent"]
