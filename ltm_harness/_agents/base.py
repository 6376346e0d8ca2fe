"""The agent adapter interface: what the harness sends to an agent and what it gets back."""

from __future__ import annotations

from abc import ABC, abstractmethod
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from ltm_harness._errors import AgentError
from ltm_harness._store.records import LLMCall


class AgentMessage(BaseModel):
    """One user message: its text, its virtual timestamp and its token count (derived from the text)."""

    model_config = ConfigDict(frozen=True)

    text: str
    timestamp: datetime
    tokens: int


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
    usage and cost when known) or just the text. Implement `restore` for runs to be resumable.

        class Echo(Agent):
            async def reply(self, message, oracle_hint=None):
                return f"You said: {message.text}"
    """

    #: the oracle calibration agent is the only one handed the expected answers
    is_oracle: bool = False

    def __init__(self, spec: str | None = None) -> None:
        self.spec = spec or type(self).__name__

    @property
    def name(self) -> str:
        return self.spec

    @abstractmethod
    async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> Reply | str:
        """Answer one user message. `oracle_hint` is only ever given to agents with is_oracle."""

    async def reset(self) -> None:
        """Forget the conversation (a new session starts)."""

    async def restore(self, turns: list[tuple[AgentMessage, str]]) -> None:
        """Resuming a run: rebuild the memory this agent had after the given turns (each message with the
        reply it gave then), without answering them again. Called once, on a fresh agent, before its first
        live turn. Agents whose memory the harness cannot rebuild keep this default and cannot be resumed."""
        if turns:
            raise AgentError(f"agent {self.spec!r} cannot be resumed: its adapter does not implement restore() to "
                            "rebuild its memory; run it again with --overwrite")

    async def close(self) -> None:
        """Release connections."""
