"""Before a run claims its folder: each agent checked once, cheaply, so that one that cannot answer at all (nothing
listening, no key, a model the endpoint does not serve, a framework store that does not open) stops the run in one
line, with nothing written: no folder, no table of zeros, no report, no run in the index.

What each kind checks is its `Agent.preflight`: `openai:` the key and `GET /models` (an endpoint without that list
leaves the model to the first turn, said in a note); `http://` a ping, `GET URL` (any HTTP answer will do); framework
adapters load their target and open their store; Python agents are made (their code loads), and may override
`preflight` with a check of their own. The judge (config.judge.model, or --judge) is checked the same way as an
`openai:` agent, and where its endpoint lists no models, by one call of one token (`check_judge`); `rescore` and
`import-answers` check theirs too. `config.preflight: false` turns the checks off."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from ltm_harness._agents.specs import AgentLike, agent_choices
from ltm_harness._errors import AgentError, LTMError, option_name
from ltm_harness._guard.limits import clip_text
from ltm_harness._runner.config import RunConfig

if TYPE_CHECKING:  # pragma: no cover
    from ltm_harness._llm.runtime import LLMRuntime


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
        await check_judge(cfg, runtime)
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


async def check_judge(cfg: RunConfig, runtime: "LLMRuntime | None" = None) -> None:
    """The run's judge, if it has one, checked before anything is written (see the module docstring): a key, an
    endpoint that answers, the model listed (or one one-token call where GET /models cannot say). A failure is an
    LLMError (or a ConfigError for a missing key), one line."""
    section = cfg.config
    model = section.judge.model
    if not model or not section.preflight:
        return
    from ltm_harness._llm.check import check_model
    from ltm_harness._llm.endpoint import resolve_endpoint
    from ltm_harness._llm.judge import load_judge_prompt
    from ltm_harness._llm.runtime import LLMRuntime

    load_judge_prompt(section.judge.prompt)  # a wrong prompt is the config's error, said before any call
    who = f"the judge ({model})"
    base_url, key = section.judge.endpoint_args("judge", section.openai)
    endpoint = resolve_endpoint(who, base_url, key)
    own = runtime is None
    runtime = runtime or LLMRuntime(section.llm, None, section.tokenizer)  # no cache: a check is never answered from one
    try:
        await check_model(runtime.client(endpoint), model, who,
                          f"check the judge's model name ({option_name('judge')} or config.judge.model) and "
                          "config.judge.base_url", probe=True)
    finally:
        if own:
            await runtime.close()
