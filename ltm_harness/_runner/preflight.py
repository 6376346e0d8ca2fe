"""Before a run claims its folder: each agent checked once, cheaply, so that one that cannot answer at all (nothing
listening, no key, a model the endpoint does not serve, a framework store that does not open) stops the run in one
line, with nothing written: no folder, no table of zeros, no report, no run in the index.

What each kind checks is its `Agent.preflight`: `openai:` the key and `GET /models` (an endpoint without that list
leaves the model to the first turn, said in a note); `http://` a ping, `GET URL` (any HTTP answer will do); framework
adapters load their target and open their store; Python agents are made (their code loads), and may override
`preflight` with a check of their own. `config.preflight: false` turns the checks off."""

from __future__ import annotations

from typing import Any, Sequence

from ltm_harness._agents.specs import AgentLike, agent_choices
from ltm_harness._errors import AgentError, LTMError
from ltm_harness._guard.limits import clip_text
from ltm_harness._runner.config import RunConfig


async def preflight(cfg: RunConfig, agents: Sequence[AgentLike]) -> list[str]:
    """Check every agent of a run once (see the module docstring); the notes on what could not be checked. The first
    agent that fails raises its error (an AgentError or a ConfigError, one line)."""
    section = cfg.config
    if not section.preflight:
        return []
    from ltm_harness._llm.runtime import LLMRuntime

    choices = agent_choices(agents)
    runtime = LLMRuntime(section.llm, None, section.tokenizer)  # no cache: a check is never answered from one
    notes: list[str] = []
    try:
        uses_openai = any(c.uses_openai for c in choices)
        options: dict[str, dict[str, Any]] = {
            "openai": {**section.openai.agent_kwargs(), "runtime": runtime} if uses_openai else {},
            "http": section.http.agent_kwargs(), "llm": {"runtime": runtime}}
        for choice in choices:
            if choice.single:
                continue  # an instance given from Python holds the run's one conversation: it is not opened twice
            agent = choice.factory(section.tokenizer, options)()
            try:
                note = await agent.preflight()
            except LTMError:
                raise
            except Exception as exc:  # a Python agent's own check that failed in its own way
                raise AgentError(f"agent {choice.name!r}: its preflight check failed ({type(exc).__name__}: "
                                 f"{clip_text(str(exc))}); fix the agent", fatal=True) from None
            finally:
                await agent.close()
            if note:
                notes.append(note)
    finally:
        await runtime.close()
    return notes
