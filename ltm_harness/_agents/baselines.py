"""Offline baseline agents that need no key: honest simple agents for calibration and comparison."""

from __future__ import annotations

import re

from ltm_harness._agents.base import Agent, AgentMessage, OracleHint, Reply
from ltm_harness._agents.lexical import LexicalMemory, Unit, sentences
from ltm_harness._errors import AgentError

DONT_KNOW = "I don't know."


def parse_tokens(spec: str, arg: str, example: str) -> int:
    """A positive number of tokens written as `8000`, `8_000` or `8k`; an AgentError naming `spec` otherwise."""
    try:
        n = int(arg.replace("_", "").lower().removesuffix("k")) * (1000 if arg.lower().endswith("k") else 1)
    except ValueError:
        raise AgentError(f"agent {spec!r}: write {example} with N a number of tokens") from None
    if n <= 0:
        raise AgentError(f"agent {spec!r}: the window N must be a positive number of tokens; write {example}")
    return n


class OracleAgent(Agent):
    """Calibration: is handed what a perfect reply contains, and says it. Should score 1.0 everywhere.

    `oracle@N` knows only what it was told in its last N tokens: it says the parts of the hint whose memory
    distance (tokens from the start of the earliest line they depend on, as results measure it) is at most N, and
    "I don't know." for an answer that depends on something said earlier. Its scores step down at N."""

    is_oracle = True
    keeps_memory = False  # handed what it needs with each question: independent questions need no going back
    description = "calibration agent handed the expected answers; should score 1.0 on every dataset"

    def __init__(self, spec: str | None = None) -> None:
        super().__init__(spec or "oracle")
        name, at, arg = self.spec.partition("@")
        if name != "oracle" or (at and not arg):
            raise AgentError(f"agent {self.spec!r}: write oracle, or oracle@N (N tokens, e.g. oracle@4000 or oracle@4k)")
        self.window: int | None = parse_tokens(self.spec, arg, "oracle@N (e.g. oracle@4000 or oracle@4k)") if at else None

    async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> Reply:
        if self.window is None or not isinstance(oracle_hint, OracleHint):
            return Reply(text=oracle_hint or "OK.")
        (answer, distance), *rest = oracle_hint.parts or (("OK.", None),)
        said = [answer if distance is None or distance <= self.window else DONT_KNOW]
        said += [text for text, d in rest if d is None or d <= self.window]
        return Reply(text=" ".join(said))

    async def observe(self, message: AgentMessage) -> None:
        """History is heard: the oracle is handed what it needs with each question instead."""

    async def restore(self, turns: list[tuple[AgentMessage, str]]) -> None:
        """Nothing to rebuild: the oracle keeps no memory."""


class NullAgent(Agent):
    """No memory at all: always says it does not know. Should score about 0."""

    keeps_memory = False
    description = "no memory: always answers \"I don't know.\"; should score about 0"

    async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> Reply:
        return Reply(text=DONT_KNOW)

    async def observe(self, message: AgentMessage) -> None:
        """History is heard and forgotten at once."""

    async def restore(self, turns: list[tuple[AgentMessage, str]]) -> None:
        """Nothing to rebuild: the null agent keeps no memory."""


FORGET = re.compile(r"\b(forget|disregard)\b", re.IGNORECASE)
ANSWER_MATCH = 0.1  # share of the best possible BM25 score a remembered sentence needs to be given as an answer


def query_of(text: str) -> str:
    """What a message asks: its last question sentence (a message may end with how to answer, e.g. "Answer in
    JSON") and its last line."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    asked = [s for s in sentences(text) if s.endswith("?")]
    return " ".join(dict.fromkeys([*asked[-1:], *lines[-1:]]))


def is_statement(unit: Unit) -> bool:
    """A remembered sentence that may answer: a statement, not a question (which tells nothing)."""
    return not unit.text.endswith("?")


class _MemoryAgent(Agent):
    """Answers every message with the remembered statements that match what it asks best (or "OK.").

    Asked to forget or disregard something, it drops the remembered sentences that match the request.
    """

    def __init__(self, spec: str) -> None:
        super().__init__(spec)
        self.memory = LexicalMemory()

    def _answer(self, message: AgentMessage) -> str:
        found = self.memory.search(query_of(message.text), min_relative=ANSWER_MATCH, limit=3, where=is_statement)
        return " ".join(u.text for u in found) if found else "OK."

    def _trim(self) -> None:
        """Forget what the agent cannot keep (unbounded by default)."""

    async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> Reply:
        if self._forget(message):
            return Reply(text="OK.")
        text = self._answer(message)
        self._remember(message)
        return Reply(text=text)

    async def observe(self, message: AgentMessage) -> None:
        """History is remembered as if it had been told, with no answer."""
        if not self._forget(message):
            self._remember(message)

    def _forget(self, message: AgentMessage) -> bool:
        if not FORGET.search(message.text):
            return False
        for unit in self.memory.search(message.text, min_relative=0.15, limit=None):
            self.memory.remove(unit.uid)
        return True

    def _remember(self, message: AgentMessage) -> None:
        self.memory.add(message.text, message.tokens)
        self._trim()

    async def restore(self, turns: list[tuple[AgentMessage, str]]) -> None:
        """The memory depends only on the messages heard, so hearing them again (without answering) rebuilds it."""
        for message, _ in turns:
            if not self._forget(message):
                self._remember(message)

    def snapshot(self) -> tuple[LexicalMemory, tuple[int, int, int]]:
        """Independent questions: a mark in the memory (what is remembered and forgotten after it can be undone)."""
        return self.memory, self.memory.mark()

    def rewind(self, snapshot: tuple[LexicalMemory, tuple[int, int, int]]) -> None:
        """The memory as it was at the mark: a question and what it made the agent forget, undone."""
        memory, mark = snapshot
        if memory is not self.memory:
            raise AgentError(f"agent {self.spec!r}: cannot go back to a snapshot taken before a reset")
        memory.undo_to(mark)

    async def reset(self) -> None:
        self.memory = LexicalMemory()


class RetrievalAgent(_MemoryAgent):
    description = "remembers every sentence said and answers with the best BM25 matches"


class RecentAgent(_MemoryAgent):
    """Remembers only the last N tokens of what it was told."""

    description = "recent:N remembers only the last N tokens and answers from them (lexical matching)"

    def __init__(self, spec: str) -> None:
        super().__init__(spec)
        _, _, arg = spec.partition(":")
        self.window = parse_tokens(spec, arg, "recent:N (e.g. recent:2000 or recent:8k)")

    def _trim(self) -> None:
        while self.memory.tokens > self.window and self.memory.units:
            self.memory.forget_oldest()
