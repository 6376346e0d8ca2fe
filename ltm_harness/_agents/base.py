"""The agent adapter interface: what the harness sends to an agent and what it gets back."""

from __future__ import annotations

from abc import ABC, abstractmethod
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ltm_harness._errors import AgentError, option
from ltm_harness._store.records import LLMCall


USER, ASSISTANT = "user", "assistant"


class AgentMessage(BaseModel):
    """One message: its text, its virtual timestamp and its token count (derived from the text). `observe`:
    history that needs no reply (handed to `Agent.observe`; a benchmark's conversation to remember, say).

    `role`: who said it. "user" (every message the agent answers, and most history); "assistant" for history the
    agent itself said earlier (a benchmark's user-assistant chat, where the agent under test is the assistant: it
    remembers those lines as its own replies); or a named speaker (LoCoMo's "Caroline": a conversation between two
    people the agent listens to; the text then starts with the name, `Caroline: ...`)."""

    model_config = ConfigDict(frozen=True)

    text: str
    timestamp: datetime
    tokens: int
    observe: bool = False
    role: str = USER


class Reply(BaseModel):
    """The agent's reply, with token usage and cost when the adapter knows them."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    llm_calls: list[LLMCall] = Field(default_factory=list)  # the LLM calls behind this reply, if any


class OracleHint(str):
    """What a perfect reply holds, as handed to oracle agents: the whole hint as a string, and its `parts`, each
    with the memory distance of what it draws on (tokens from the start of the earliest line it depends on to now;
    None: it depends on nothing said earlier, e.g. "OK." to a statement or a filler answer)."""

    parts: tuple[tuple[str, int | None], ...]

    def __new__(cls, parts: "list[tuple[str, int | None]] | tuple[tuple[str, int | None], ...]") -> "OracleHint":
        hint = super().__new__(cls, " ".join(text for text, _ in parts))
        hint.parts = tuple(parts)
        return hint


class Agent(ABC):
    """An agent under test: one instance holds one conversation. Implement `reply`; return a `Reply` (with token
    usage and cost when known) or just the text. Implement `observe` to take in history that needs no reply without
    answering it, and `restore` for runs to be resumable.

        class Echo(Agent):
            async def reply(self, message, oracle_hint=None):
                return f"You said: {message.text}"
    """

    #: the oracle calibration agent is the only one handed the expected answers
    is_oracle: bool = False
    #: whether what the agent says depends on what it heard before. One that keeps no memory (`null`, `oracle`)
    #: answers an independent question from the state the history left by construction: it is asked each one with
    #: no snapshot taken and nothing to go back to, and counts as having gone back.
    keeps_memory: bool = True
    #: what this agent's token usage and cost leave out (model calls its framework makes where the harness cannot
    #: count them); None: every model call behind a reply is counted. Shown beside its numbers in summary.json, the
    #: terminal and the report, so a partial count is never read as a whole one.
    usage_note: str | None = None
    #: a folder of the run's own for this agent's conversation, set by the harness before the first turn (and before
    #: `restore`): adapters whose memory lives in files (a checkpointer, a vector store) keep them here, so that a
    #: resumed run finds them. None when the run keeps no folder (a rescore, a run from Python without results).
    state_dir: Path | None = None

    def __init__(self, spec: str | None = None) -> None:
        self.spec = spec or type(self).__name__

    @property
    def name(self) -> str:
        return self.spec

    @abstractmethod
    async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> Reply | str:
        """Answer one user message. `oracle_hint` is only ever given to agents with is_oracle."""

    async def observe(self, message: AgentMessage) -> Reply | str | None:
        """Take in history that needs no reply (`message.observe` is True): a benchmark's earlier sessions, say.
        Return None (heard), or a `Reply` whose text is empty when the agent wants its token usage or cost counted.

        Default: the message is answered by `reply` like any other, and that reply is recorded but never scored, so
        every agent written before this method existed keeps working. Override it to remember without a model call:
        a benchmark made mostly of history then costs one call per question instead of one per turn."""
        return await self.reply(message, None)

    async def reset(self) -> None:
        """Forget the conversation (a new session starts)."""

    # -- going back (optional): independent questions -------------------------------------------------------
    # A benchmark whose reference answers each question from the memory the history left (LoCoMo, BEAM) asks its
    # questions independently: after each is answered and recorded, the agent goes back to its state before it, so
    # no question sees another. An agent that can go back implements both methods (sync or async); one that does
    # not has its questions asked in sequence, and the run says so in its warnings and report.

    def snapshot(self) -> Any:
        """Optional: a token for the agent's state now (its memory as it stands), to go back to with `rewind`. Any
        value the agent itself understands (a copy of its memory, a length, a checkpoint id). The harness takes one
        before an independent question and may rewind to it more than once (one question after another)."""
        raise NotImplementedError

    def rewind(self, snapshot: Any) -> Any:
        """Optional: bring the agent back to the state `snapshot` was taken in (everything heard since forgotten)."""
        raise NotImplementedError

    @property
    def can_go_back(self) -> bool:
        """Whether questions can be asked independently: the agent keeps no memory, or implements `snapshot` and
        `rewind`."""
        cls = type(self)
        return not self.keeps_memory or (cls.snapshot is not Agent.snapshot and cls.rewind is not Agent.rewind)

    async def restore(self, turns: list[tuple[AgentMessage, str]]) -> None:
        """Resuming a run: rebuild the memory this agent had after the given turns (each message with the
        reply it gave then, "" for history it observed: `message.observe`), without answering them again. Called
        once, on a fresh agent, before its first live turn. Agents whose memory lives in `state_dir` bring it back to
        the state after exactly these turns (a turn taken in just before the run stopped may be in it already).
        Agents whose memory the harness cannot rebuild keep this default and cannot be resumed."""
        if turns:
            raise AgentError(f"agent {self.spec!r} cannot be resumed: its adapter does not implement restore() to "
                            f"rebuild its memory; run it again with {option('overwrite')}")

    async def preflight(self) -> str | None:
        """Checked once before a run's first turn, on an agent made for it and closed after: raise an AgentError (or
        ConfigError) when the agent cannot answer at all (nothing listening, no key), so that the run stops in one
        line before it starts; return a note when something could not be checked. Default: nothing (the agent was
        made, so its code loaded)."""
        return None

    async def close(self) -> None:
        """Release connections."""
