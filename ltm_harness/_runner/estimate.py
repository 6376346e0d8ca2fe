"""A dry run that prices a benchmark before it is run: `python -m ltm_harness estimate`.

The real scheduler builds the real conversation, but the agent is simulated: a chat model that
counts its prompt exactly as the `openai:` adapter does (the same history window, so `@MAX_CONTEXT`
truncation is honoured) and answers as a typical model would:

* filler (arithmetic, answered "as JSON"): a JSON answer such as {"answer": 42};
* a statement (a message without a question mark): "Noted.";
* a question: a short answer of `reply_tokens` tokens (default 8; give your agent's mean with --reply-tokens);
* history that needs no reply (a benchmark's earlier sessions): no call; its tokens join the history (in its role:
  what the assistant said as an assistant message) and are sent with the next answered turn, as the `openai:`
  adapter does;
* independent questions (LoCoMo, BEAM): each prompt is the history and that question alone, as the `openai:` adapter
  goes back after each; no history is paid twice.

Nothing is called. Reply lengths are the only guess; they shift the totals little, because every
turn re-sends the whole history, which is dominated by the user's messages.

The run is prepared once and played once, whatever the number of agents and windows: the conversation does not
depend on them, so one session counts the prompts of every window at once, and the model only sets the price and
the context check. Each turn costs O(1) per window (the adapter's running counts), so an estimate takes about as
long as a run with an instant agent. Rows also give the cached input: a prompt whose
previous prompt is its prefix (full context; a window that did not move) would be billed as cached by a provider
that caches prompt prefixes (OpenAI: from 1024 tokens, in steps of 128), priced at the model's cached-input
price; and a warning when prompts go beyond the model's context (ltm_harness/_llm/contexts.py, config
`llm.contexts`).

With a judge (config `judge.model`, `--judge MODEL`), the simulated answers are scored by the datasets' own scorers as
in a run, with a judge that counts and prices each request instead of sending it (`ltm_harness._llm.judge_count`):
the judge's requests for one agent's answers, their tokens and price (at the Batch API's discount with
`judge_batch`), beside each agent's and in its total.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from ltm_harness._agents.base import ASSISTANT, Agent, AgentMessage, Reply
from ltm_harness._agents.specs import NAMED
from ltm_harness._agents.openai_chat import DEFAULT_SYSTEM_PROMPT, OpenAIChatAgent, parse_spec, timestamp_prefix
from ltm_harness._runner.config import RunConfig
from ltm_harness._llm.client import MESSAGE_OVERHEAD, REPLY_PRIMING
from ltm_harness._llm.contexts import ContextTable
from ltm_harness._llm.judge import load_judge_prompt
from ltm_harness._llm.judge_count import CountingJudge, counting_judge
from ltm_harness._llm.ledger import how_to_price
from ltm_harness._llm.pricing import PriceTable
from ltm_harness._llm.runtime import LLMRuntime
from ltm_harness._runner.prepare import PreparedRun, prepare
from ltm_harness._engine.progress import OnTurn
from ltm_harness._runner.run import RunLLM, run_agent
from ltm_harness._tokens import get_encoding, get_tokenizer

DEFAULT_REPLY_TOKENS = 8
_REPLY_TEXT = ("I remember that you told me about it earlier in our conversation, and here is what I recall of it "
               "as well as I can put it together for you now. ") * 40
# Prompt caching as OpenAI bills it: a prompt's prefix seen before is cached from 1024 tokens on, in steps of 128.
CACHE_MIN_TOKENS = 1024
CACHE_STEP = 128


@dataclass
class JudgeEstimate:
    """The judge's requests for one agent's answers (each agent's answers are judged: every row adds them)."""

    model: str
    requests: int
    by_dataset: dict[str, int]  # requests per dataset
    by_prompt: dict[str, int]  # requests per judge prompt (the run's, config judge.prompt, or a dataset's own)
    prompt_tokens: int
    completion_tokens: int  # the prompts' max_tokens where they cap the reply, else a typical verdict's
    batch: bool  # priced as the Batch API bills it (--judge-batch)
    cost_usd: float | None  # None: the model has no known price
    unpriced: str | None = None  # the line saying so, and how to give it one


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
    cached_prompt_tokens: int = 0  # of prompt_tokens, those a provider that caches prompt prefixes would bill as cached
    cost_cached_usd: float | None = None  # the price with them at the model's cached-input price (None: no discount)
    largest_prompt: int = 0  # tokens of the longest prompt sent
    model_context: int | None = None  # the model's context size, when known
    warning: str | None = None  # prompts beyond the model's context
    judge: JudgeEstimate | None = None  # the judge's part, with a judge
    total_usd: float | None = None  # agent and judge (None: either has no known price)


@dataclass
class Simulation:
    """What one simulated conversation sent to a chat model keeping one context window, whichever model it is."""

    agent_calls: int
    filler_calls: int
    conversation_tokens: int
    prompt_tokens: int
    completion_tokens: int
    cached_prompt_tokens: int
    largest_prompt: int


class WindowCounter(OpenAIChatAgent):
    """The `openai:` adapter's history and window for one MAX_CONTEXT (or none), fed messages already counted:
    it sums the prompts that adapter would send, the cached part of them and the largest. Each prompt is taken
    from the running counts the adapter keeps, so a turn costs O(1), not O(history); only a newest message cut to
    fit the window is counted anew."""

    def __init__(self, spec: str, tokenizer: str, system_prompt: str) -> None:
        super().__init__(spec, base_url="http://127.0.0.1:9/v1", tokenizer=tokenizer, system_prompt=system_prompt)
        self.prompt_sum = 0
        self.cached = 0
        self.largest = 0
        self._last_prompt = 0  # tokens of the previous prompt, and where its window started
        self._last_start = -1

    def prompt_tokens(self) -> tuple[int, bool]:
        """Tokens of the prompt sent now (as `window()` builds it), and whether the newest message had to be cut."""
        self._advance_window()
        if self.max_context is not None and self._window_tokens > self._budget:  # the newest alone, cut to fit
            return sum(self._count(m["content"]) for m in self.window()) + REPLY_PRIMING, True
        system = self._system_tokens if self.system_prompt else 0
        return self._window_tokens + system + REPLY_PRIMING, False

    def ask(self, user: str, counted: int) -> int:
        """The user's message joins the history: the prompt sent for it, counted."""
        self._add("user", user, counted)
        prompt, cut = self.prompt_tokens()
        # The previous prompt is a prefix of this one when the window did not move (and nothing was cut): a provider
        # that caches prompt prefixes bills it as cached input.
        if not cut and self._start == self._last_start and self._last_prompt >= CACHE_MIN_TOKENS:
            self.cached += self._last_prompt - self._last_prompt % CACHE_STEP
        self._last_prompt, self._last_start = (0, -1) if cut else (prompt, self._start)
        self.prompt_sum += prompt
        self.largest = max(self.largest, prompt)
        return prompt


class PrefixedCount:
    """Tokens of `prefix + text` from the known count of `text`, exactly, counting only a short head of the text.

    A tokenizer splits text into chunks by its pattern, then encodes each chunk alone; so counts add up across a
    position where both strings are split. The timestamp prefix ends in "] ", and "]" always ends a chunk (the
    pattern's punctuation run cannot take the space after it), so `prefix + text` counts as `prefix` without its
    space plus `" " + text`. The leading space changes the chunking of the text's first chunk only: at the first
    position p where `" " + text` and `text` are both split (after a character that is not whitespace, so that the
    end of a string cannot change the chunk before it, and inside the head, so that nothing after the head does),
    `" " + text` counts as `" " + text[:p]` plus the tokens of `text` less those of `text[:p]`. When no such
    position is found, the whole message is counted."""

    HEAD = 256

    def __init__(self, encoding: str) -> None:
        import regex

        self._count = get_tokenizer(encoding).count
        self._pattern = regex.compile(get_encoding(encoding)._pat_str)

    def _ends(self, text: str) -> set[int]:
        return {m.end() for m in self._pattern.finditer(text)}

    def count(self, prefix: str, text: str, text_tokens: int) -> int:
        if not prefix.endswith("] ") or len(text) < 8:
            return self._count(prefix + text)
        head = text[:self.HEAD]
        both = self._ends(head) & {end - 1 for end in self._ends(" " + head)}
        split = min((p for p in both if 0 < p < len(head) - 1 and not head[p - 1].isspace()), default=None)
        if split is None:
            return self._count(prefix + text)
        return (self._count(prefix[:-1]) + self._count(" " + text[:split]) + text_tokens
                - self._count(text[:split]))


class SimulatedChatAgent(Agent):
    """A chat model that answers as a typical one would (see the module docstring) and counts, for every context
    window at once, the prompts the `openai:` adapter would send it. The conversation does not depend on the
    window (the replies depend only on the messages), so one session serves every window."""

    def __init__(self, spec: str, windows: Sequence[int | None] = (None,), reply_tokens: int = DEFAULT_REPLY_TOKENS,
                 tokenizer: str = "cl100k_base", system_prompt: str | None = None) -> None:
        super().__init__(spec)
        self._tokenizer = get_tokenizer(tokenizer)
        prompt = system_prompt if system_prompt is not None else DEFAULT_SYSTEM_PROMPT
        self.windows = list(windows)
        self.counters = {w: WindowCounter(f"openai:estimate@{w}" if w else "openai:estimate", tokenizer, prompt)
                         for w in self.windows}
        self._reply = self._make_reply(reply_tokens)
        self._prefixed = PrefixedCount(tokenizer)

    def _make_reply(self, n: int) -> str:
        enc = get_encoding(self._tokenizer.encoding_name)
        return enc.decode(enc.encode_ordinary(_REPLY_TEXT)[:n]).strip()

    def simulate(self, text: str) -> str:
        if "as JSON" in text:
            numbers = re.findall(r"-?\d+", text.strip().splitlines()[-1])
            return '{"answer": %s}' % (numbers[-1] if numbers else "0")
        return self._reply if "?" in text else "Noted."

    def _counted(self, message: AgentMessage) -> tuple[str, int]:
        """The user message as the adapter keeps it (timestamp prefix), and its count."""
        prefix = timestamp_prefix(message.timestamp)
        return prefix + message.text, self._prefixed.count(prefix, message.text, message.tokens) + MESSAGE_OVERHEAD

    async def observe(self, message: AgentMessage) -> None:
        """History: joins every window's history in its role, no call (it is sent with the next answered turn)."""
        if message.role == ASSISTANT:  # kept as the model's own reply: no timestamp
            role, content, counted = "assistant", message.text, message.tokens + MESSAGE_OVERHEAD
        else:
            (content, counted), role = self._counted(message), "user"
        for counter in self.counters.values():
            counter._add(role, content, counted)

    def snapshot(self) -> list[tuple[int, int, int]]:
        """Independent questions, as the `openai:` adapter goes back: every window's history as it stands."""
        return [counter.snapshot() for counter in self.counters.values()]

    def rewind(self, snapshot: list[tuple[int, int, int]]) -> None:
        """Every window back to its history before the question; the prompts counted so far stay counted. The next
        prompt shares with the last one the history before the question, which a provider caching prompt prefixes
        bills as cached."""
        for counter, mark in zip(self.counters.values(), snapshot):
            counter.rewind(mark)
            if counter._last_start >= 0:  # (not after a cut prompt, which nothing shares)
                counter._last_prompt, counter._last_start = counter.prompt_tokens()[0], counter._start

    async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> Reply:
        user, counted = self._counted(message)
        prompts = [counter.ask(user, counted) for counter in self.counters.values()]
        text = self.simulate(message.text)
        answer = self._tokenizer.count(text)
        for counter in self.counters.values():
            counter._add("assistant", text, answer + MESSAGE_OVERHEAD)
        return Reply(text=text, prompt_tokens=prompts[0], completion_tokens=answer)

    async def reset(self) -> None:
        for counter in self.counters.values():
            counter.reset_history()


def _model_of(agent_spec: str) -> tuple[str, str, int | None]:
    """(name shown, model, window of the spec) of `NAME=openai:MODEL@N`, `openai:MODEL@N` or another spec."""
    named = NAMED.match(agent_spec)
    shown, agent_spec = (named.group(1), named.group(2)) if named else (agent_spec, agent_spec)
    model, spec_context = parse_spec(agent_spec) if agent_spec.startswith("openai:") else (agent_spec, None)
    return shown, model, spec_context


SIMULATION = "simulated chat model"  # the agent progress shows


async def simulate(prepared: PreparedRun, windows: Sequence[int | None], reply_tokens: int = DEFAULT_REPLY_TOKENS,
                   on_turn: OnTurn | None = None, judge: CountingJudge | None = None) -> dict[int | None, Simulation]:
    """The prepared run's conversation played once to a simulated chat model, counted for each context window
    (None: all the history); `judge`: scores the answers as the run's judge would, counting its requests."""
    cfg = prepared.config.config
    agents: list[SimulatedChatAgent] = []

    def make() -> SimulatedChatAgent:
        agent = SimulatedChatAgent("estimate", windows, reply_tokens, cfg.tokenizer, cfg.openai.system_prompt)
        agents.append(agent)
        return agent

    llm = None if judge is None else RunLLM(LLMRuntime(cfg.llm, None, cfg.tokenizer), judge)
    run = await run_agent(prepared, SIMULATION, make, on_turn, llm)
    s = run.summary
    return {w: Simulation(agent_calls=s.turns - s.observed_turns, filler_calls=s.filler_turns, conversation_tokens=s.conversation_tokens,
                          prompt_tokens=sum(a.counters[w].prompt_sum for a in agents),
                          completion_tokens=s.agent_completion_tokens,
                          cached_prompt_tokens=sum(a.counters[w].cached for a in agents),
                          largest_prompt=max((a.counters[w].largest for a in agents), default=0))
            for w in windows}


def windows_of(agent_specs: Sequence[str], max_context: int | None = None) -> list[int | None]:
    """The context windows to simulate for these agents: full context, and each agent's window (or max_context)."""
    out: list[int | None] = []
    for spec in agent_specs:
        for window in _windows(spec, max_context):
            if window not in out:
                out.append(window)
    return out


def _windows(agent_spec: str, max_context: int | None) -> list[int | None]:
    _, _, spec_context = _model_of(agent_spec)
    windows: list[int | None] = [None]
    if spec_context or max_context:
        windows.append(max_context or spec_context)
    return windows


async def estimate_many(cfg: RunConfig, agent_specs: Sequence[str], source: str = "config",
                        max_context: int | None = None, reply_tokens: int = DEFAULT_REPLY_TOKENS,
                        on_turn: OnTurn | None = None,
                        on_prepared: Callable[[PreparedRun], None] | None = None,
                        judge_batch: bool = False) -> list[Estimate]:
    """Estimates for each agent: full context and, when given (as `@N` in the spec or `max_context`), a window of
    N tokens. The run is prepared once and played once, counted for every window (the model only sets the price
    and the context check). Agents may be named (`NAME=openai:MODEL`): rows show the name, the spec sets model and
    window. With a judge (config judge.model), every row carries the judge's part (`judge_batch`: at the Batch API's
    price) and the total of both."""
    windows = windows_of(agent_specs, max_context)
    prices = PriceTable(cfg.config.llm.prices)
    contexts = ContextTable(cfg.config.llm.contexts)
    judge = judge_of(cfg, judge_batch)
    with tempfile.TemporaryDirectory(prefix="ltm-estimate-") as tmp:
        prepared = prepare(cfg.model_copy(deep=True), Path(tmp), source)
        if on_prepared is not None:
            on_prepared(prepared)
        sims = await simulate(prepared, windows, reply_tokens, on_turn, judge)
    judged = judge_estimate(judge)
    out = []
    for agent_spec in agent_specs:
        shown, model, _ = _model_of(agent_spec)
        context = contexts.context(model)
        for window in _windows(agent_spec, max_context):
            s = sims[window]
            warning = None
            if context is not None and s.largest_prompt > context:
                fix = f"give it a window, e.g. openai:{model}@{context // 1000}k" if window is None else \
                    f"give a window of at most {context:,}"
                warning = (f"{shown}: prompts reach {s.largest_prompt:,} tokens, beyond {model}'s context of "
                           f"{context:,} tokens; {fix}")
            out.append(Estimate(
                agent=shown, model=model, max_context=window, agent_calls=s.agent_calls, filler_calls=s.filler_calls,
                conversation_tokens=s.conversation_tokens, prompt_tokens=s.prompt_tokens,
                completion_tokens=s.completion_tokens,
                cost_usd=prices.cost(model, s.prompt_tokens, s.completion_tokens),
                cached_prompt_tokens=s.cached_prompt_tokens,
                cost_cached_usd=prices.cost_cached(model, s.prompt_tokens, s.cached_prompt_tokens, s.completion_tokens),
                largest_prompt=s.largest_prompt, model_context=context, warning=warning, judge=judged))
    for row in out:
        judge_cost = 0.0 if judged is None else judged.cost_usd
        row.total_usd = None if row.cost_usd is None or judge_cost is None else round(row.cost_usd + judge_cost, 10)
    return out


def judge_of(cfg: RunConfig, batch: bool = False) -> CountingJudge | None:
    """The run's judge (config judge.model, its prompt and temperature) counting its requests; None without one."""
    judge = cfg.config.judge
    if not judge.model:
        return None
    runtime = LLMRuntime(cfg.config.llm, None, cfg.config.tokenizer)
    return counting_judge(runtime, judge.model, load_judge_prompt(judge.prompt), judge.temperature, batch)


def judge_estimate(judge: CountingJudge | None) -> JudgeEstimate | None:
    """What the counting judge was asked for the simulated answers, priced; None without a judge."""
    if judge is None:
        return None
    n = judge.count
    unpriced = None if judge.client.prices.price(judge.model) is not None else \
        f"judge {judge.model} has no known price, so the totals are unpriced; {how_to_price(judge.model)}"
    return JudgeEstimate(model=judge.model, requests=n.requests, by_dataset=dict(n.by_dataset),
                         by_prompt=dict(n.by_prompt), prompt_tokens=n.prompt_tokens,
                         completion_tokens=n.completion_tokens, batch=judge.batch_priced,
                         cost_usd=None if unpriced else n.cost_usd, unpriced=unpriced)


async def estimate(cfg: RunConfig, agent_spec: str, source: str = "config", max_context: int | None = None,
                   reply_tokens: int = DEFAULT_REPLY_TOKENS, judge_batch: bool = False) -> list[Estimate]:
    """`estimate_many` for one agent."""
    return await estimate_many(cfg, [agent_spec], source, max_context, reply_tokens, judge_batch=judge_batch)
