"""A dry run that prices a benchmark before it is run: `python -m ltm_harness estimate`.

The real scheduler builds the real conversation, but the agent is simulated: a chat model that
counts its prompt exactly as the `openai:` adapter does (the same history window, so `@MAX_CONTEXT`
truncation is honoured) and answers as a typical model would:

* filler (arithmetic, answered "as JSON"): a JSON answer such as {"answer": 42};
* a statement (a message without a question mark): "Noted.";
* a question: a short answer of `reply_tokens` tokens (default 8; give your agent's mean with --reply-tokens).

Nothing is called. Reply lengths are the only guess; they shift the totals little, because every
turn re-sends the whole history, which is dominated by the user's messages.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ltm_harness._agents.base import AgentMessage, Reply
from ltm_harness._agents.specs import NAMED
from ltm_harness._agents.openai_chat import DEFAULT_SYSTEM_PROMPT, OpenAIChatAgent, parse_spec, timestamp_prefix
from ltm_harness._runner.config import RunConfig
from ltm_harness._llm.client import MESSAGE_OVERHEAD, REPLY_PRIMING
from ltm_harness._llm.pricing import PriceTable
from ltm_harness._runner.prepare import prepare
from ltm_harness._runner.run import run_agent

DEFAULT_REPLY_TOKENS = 8
_REPLY_TEXT = ("I remember that you told me about it earlier in our conversation, and here is what I recall of it "
               "as well as I can put it together for you now. ") * 40


@dataclass
class Estimate:
    agent: str
    model: str
    max_context: int | None
    agent_calls: int
    filler_calls: int
    conversation_tokens: int
    prompt_tokens: int  # tokens sent, summed over calls
    completion_tokens: int
    cost_usd: float | None


class SimulatedChatAgent(OpenAIChatAgent):
    """The `openai:` adapter's counting and window, with simulated replies and no network."""

    def __init__(self, spec: str, reply_tokens: int = DEFAULT_REPLY_TOKENS, tokenizer: str = "cl100k_base",
                 system_prompt: str | None = None) -> None:
        super().__init__(spec, base_url="http://127.0.0.1:9/v1", tokenizer=tokenizer,
                         system_prompt=system_prompt if system_prompt is not None else DEFAULT_SYSTEM_PROMPT)
        self._reply = self._make_reply(reply_tokens)

    def _make_reply(self, n: int) -> str:
        from ltm_harness._tokens import get_encoding

        enc = get_encoding(self._tokenizer.encoding_name)
        return enc.decode(enc.encode_ordinary(_REPLY_TEXT)[:n]).strip()

    def simulate(self, text: str) -> str:
        if "as JSON" in text:
            numbers = re.findall(r"-?\d+", text.strip().splitlines()[-1])
            return '{"answer": %s}' % (numbers[-1] if numbers else "0")
        return self._reply if "?" in text else "Noted."

    async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> Reply:
        self._add("user", timestamp_prefix(message.timestamp) + message.text)
        window = self.window()
        prompt = sum(self._tokenizer.count(m["content"]) + MESSAGE_OVERHEAD for m in window) + REPLY_PRIMING
        text = self.simulate(message.text)
        self._add("assistant", text)
        return Reply(text=text, prompt_tokens=prompt, completion_tokens=self._tokenizer.count(text))


async def estimate(cfg: RunConfig, agent_spec: str, source: str = "config", max_context: int | None = None,
                   reply_tokens: int = DEFAULT_REPLY_TOKENS) -> list[Estimate]:
    """Estimates for full context and, when given (as `@N` in the spec or `max_context`), for a window of N tokens.
    `agent_spec` may name the agent (`NAME=openai:MODEL`): rows show the name, the spec sets model and window."""
    named = NAMED.match(agent_spec)
    shown, agent_spec = (named.group(1), named.group(2)) if named else (agent_spec, agent_spec)
    model, spec_context = parse_spec(agent_spec) if agent_spec.startswith("openai:") else (agent_spec, None)
    windows: list[int | None] = [None]
    if spec_context or max_context:
        windows.append(max_context or spec_context)
    prices = PriceTable(cfg.config.llm.prices)
    system_prompt = cfg.config.openai.system_prompt
    out = []
    with tempfile.TemporaryDirectory(prefix="ltm-estimate-") as tmp:
        prepared = prepare(cfg.model_copy(deep=True), Path(tmp), source)
        for window in windows:
            spec = f"openai:estimate@{window}" if window else "openai:estimate"

            def make(spec: str = spec) -> SimulatedChatAgent:
                return SimulatedChatAgent(spec, reply_tokens, cfg.config.tokenizer, system_prompt)

            run = await run_agent(prepared, spec, make)
            s = run.summary
            out.append(Estimate(agent=shown, model=model, max_context=window, agent_calls=s.turns,
                                filler_calls=s.filler_turns, conversation_tokens=s.conversation_tokens,
                                prompt_tokens=s.agent_prompt_tokens, completion_tokens=s.agent_completion_tokens,
                                cost_usd=prices.cost(model, s.agent_prompt_tokens, s.agent_completion_tokens)))
    return out
