"""What every framework adapter shares: its spec, the turn protocol over the framework's own store, and usage.

A spec is `KIND:TARGET` with optional parameters after a `?`: `langgraph:my_graph.py:graph?input=messages`. TARGET
names the user's object (`FILE.py:NAME` or `MODULE:NAME`, loaded like any user code: `load_target`).

The turn protocol. The framework's store (a LangGraph checkpointer, an Agents SDK session, a vector store) lives in
`state_dir` and holds the conversation; the adapter counts the turns it holds (`turns`: answered and observed,
failed ones not counted, as the harness counts them in `restore`). An adapter implements five steps:

* `_open()`: open the store (in `state_dir`; in memory when the run keeps no folder);
* `_answer(text, turn)`: send a user message, get the reply and the usage the framework reported (`Answer`);
* `_ingest(text, turn, role)`: put a message that needs no reply into the store, without a model call (`ingests`),
  in its role ("user", or "assistant" for the agent's own earlier replies in a user-assistant chat);
* `_rollback(turns)`: bring the store back to its state after exactly `turns` turns, from what it saved (an
  `AgentError` when it cannot: the run then cannot be resumed, said in one line);
* `_close()`.

The base class calls `_rollback` whenever the store may hold more than the counted turns: before the first turn of a
fresh conversation (`turns` = 0: a store left from an earlier run is emptied), in `restore` (a turn taken in just
before a kill may be in the store already), and after a turn that failed or was cut off by the turn timeout (its
partial writes are undone before the turn is tried again). So a failed turn never leaves half of itself behind, and
a resumed conversation is the framework's own memory after exactly the recorded turns: nothing is fed again.
Independent questions (LoCoMo's and BEAM's protocol) use the same roll-back: `snapshot` is the turns held before the
question, `rewind` rolls the store back to them once the reply is recorded.

Each message is sent with the virtual time in front, as `openai:` agents send it (`[2024-01-01 09:00 UTC] text`).
Errors of the framework fail the turn as one line (`AgentError`; fatal for a wrong key or an unknown model, so the
agent is stopped instead of retried). Usage comes from the framework's own reports (`Answer.usage`, priced with the
run's price table); a framework that reports none gets the harness's count of the message sent and the reply.
"""

from __future__ import annotations

import itertools
from abc import abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, ClassVar, TypeVar
from urllib.parse import parse_qsl

from ltm_harness._agents.base import ASSISTANT, USER, Agent, AgentMessage, Reply
from ltm_harness._agents.openai_chat import timestamp_prefix
from ltm_harness._errors import AgentError, LTMError
from ltm_harness._guard.limits import clip, clip_text
from ltm_harness._guard.redact import redact
from ltm_harness._llm.pricing import PriceTable
from ltm_harness._registry.loading import is_object_spec, load_object
from ltm_harness._tokens import DEFAULT_ENCODING, get_tokenizer

if TYPE_CHECKING:  # pragma: no cover
    from ltm_harness._llm.runtime import LLMRuntime


@dataclass(frozen=True)
class ModelUsage:
    """The tokens of one model call, as the framework reported them (`model`: its name, for the price)."""

    model: str | None
    prompt_tokens: int
    completion_tokens: int


@dataclass
class Answer:
    """What one answered turn gave: the reply's text and the model calls behind it (empty: none reported)."""

    text: str
    usage: list[ModelUsage] = field(default_factory=list)


def split_spec(spec: str, kind: str, params: dict[str, tuple[str, ...]]) -> tuple[str, dict[str, str]]:
    """`KIND:TARGET?key=value&...` -> (TARGET, parameters). `params`: each known parameter's allowed values, the
    first being its default."""
    head, sep, target = spec.partition(":")
    if head != kind or not sep or not target.strip():
        raise AgentError(f"agent {spec!r}: write {kind}:FILE.py:NAME or {kind}:MODULE:NAME")
    target, _, query = target.partition("?")
    given: dict[str, str] = {}
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        raise AgentError(f"agent {spec!r}: the parameters after '?' must be KEY=VALUE pairs joined by '&'") from None
    for key, value in pairs:
        if key not in params:
            known = ", ".join(sorted(params)) or "none"
            raise AgentError(f"agent {spec!r}: unknown parameter {clip(key)}; known parameters of {kind}: {known}")
        if value not in params[key]:
            raise AgentError(f"agent {spec!r}: {key}={clip(value)} is not one of {', '.join(params[key])}")
        given[key] = value
    return target.strip(), {key: given.get(key, values[0]) for key, values in params.items()}


def load_target(spec: str, target: str) -> Any:
    """The user's object TARGET names (`FILE.py:NAME` or `MODULE:NAME`); a missing file or name is one line."""
    if not is_object_spec(target) or target.endswith(".py"):
        kind = spec.partition(":")[0]
        raise AgentError(f"agent {spec!r}: {clip(target)} does not name an object; write {kind}:FILE.py:NAME or "
                         f"{kind}:MODULE:NAME")
    return load_object(target, "agent", beside=True)  # the file's folder importable while it loads


T = TypeVar("T")
_CONVERSATIONS = itertools.count(1)
_FATAL_STATUS = (401, 403, 404)  # a wrong key, no access, an unknown model: no retry can help


def is_fatal(exc: BaseException) -> bool:
    """The error, or one it was raised from, is an endpoint's refusal that no retry can fix."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if getattr(current, "status_code", None) in _FATAL_STATUS:
            return True
        current = current.__cause__ or current.__context__
    return False


class FrameworkAgent(Agent):
    """An agent whose memory is a framework's own store, kept in `state_dir` (see the module's docstring)."""

    #: the spec's kind (`langgraph`)
    kind: ClassVar[str]
    #: the spec's parameters and their allowed values, the first being the default
    params: ClassVar[dict[str, tuple[str, ...]]] = {}
    #: `observe` puts history into the store without a model call; False: it is answered by `reply`
    ingests: bool = True  # (an instance may say otherwise: a LangGraph Functional API workflow)

    def __init__(self, spec: str, *, tokenizer: str = DEFAULT_ENCODING, runtime: "LLMRuntime | None" = None) -> None:
        super().__init__(spec)
        self.target, self.options = self.parse_spec(spec)
        self._prices = runtime.prices if runtime is not None else PriceTable()
        self._tokenizer = get_tokenizer(tokenizer)
        self.turns = 0  # the turns the store holds (answered and observed)
        self._clean = False  # the store is known to hold exactly `turns` turns (False: roll back before the next)
        self._opened = False
        self._name: str | None = None

    # -- what an adapter implements ----------------------------------------------------------------------------
    def parse_spec(self, spec: str) -> tuple[str, dict[str, str]]:
        """(TARGET, parameters) of the spec, `KIND:TARGET?key=value&...` (`split_spec`); an adapter whose spec has
        another form overrides it."""
        return split_spec(spec, self.kind, self.params)

    @abstractmethod
    async def _open(self) -> None:
        """Open the framework's store (`state_file(...)`), before the first turn or `restore`."""

    @abstractmethod
    async def _answer(self, text: str, turn: int) -> Answer:
        """Send the user message `text` (the conversation's turn number `turn`, from 1) and return the reply."""

    async def _ingest(self, text: str, turn: int, role: str = USER) -> Answer | None:
        """Put `text` (turn number `turn`) into the store as a message of `role` ("user"; "assistant": a reply the
        agent gave earlier, stored in the framework's own assistant role), without a model call (or with only the
        framework's own memory calls: their usage in the `Answer`, whose text is not used)."""
        raise NotImplementedError  # only called when `ingests`

    @abstractmethod
    async def _rollback(self, turns: int) -> None:
        """Bring the store back to its state after exactly `turns` turns (0: empty), from what it saved; an
        AgentError when that state is not in the store."""

    async def _close(self) -> None:
        """Release the store and any client."""

    # -- the Agent protocol --------------------------------------------------------------------------------------
    def state_file(self, name: str) -> Path | None:
        """A file of the framework's in this conversation's `state_dir` (None: the run keeps no folder, so the store
        lives in memory)."""
        if self.state_dir is None:
            return None
        self.state_dir.mkdir(parents=True, exist_ok=True)
        return self.state_dir / name

    @property
    def session_name(self) -> str:
        """The conversation's name for the framework (a LangGraph thread, an SDK session): the harness's session
        (its folder's name); without a folder, a name of this agent's own in this process."""
        if self.state_dir is not None:
            return self.state_dir.name
        if self._name is None:
            self._name = f"conversation-{next(_CONVERSATIONS)}"
        return self._name

    async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> Reply:
        text = timestamp_prefix(message.timestamp) + message.text
        return self._reply(await self._step("answering", self._answer, text), text)

    async def observe(self, message: AgentMessage) -> Reply | str | None:
        if not self.ingests:
            return await self.reply(message, None)
        if message.role == ASSISTANT:  # the agent's own earlier reply: as the framework keeps replies (no timestamp)
            text, role = message.text, ASSISTANT
        else:
            text, role = timestamp_prefix(message.timestamp) + message.text, USER

        async def ingest(text: str, turn: int) -> Answer | None:
            return await self._ingest(text, turn, role) if role != USER else await self._ingest(text, turn)

        used = await self._step("taking in history", ingest, text)
        return self._reply(Answer("", used.usage), "") if used is not None and used.usage else None

    async def snapshot(self) -> int:
        """Independent questions: the turns the store holds now (the framework's memory after exactly them)."""
        return self.turns

    async def rewind(self, snapshot: int) -> None:
        """Back to the store after exactly `snapshot` turns, as `restore` brings it back (the framework's roll-back:
        a LangGraph checkpoint, the SDK session's items, mem0's undo log)."""
        await self._ensure_open()
        try:
            await self._rollback(snapshot)
        except LTMError:
            raise
        except Exception as exc:
            raise self._failure(exc, "going back before a question") from None
        self.turns, self._clean = snapshot, True

    async def restore(self, turns: list[tuple[AgentMessage, str]]) -> None:
        """The framework's memory as it saved it after exactly these turns (nothing is sent to it again)."""
        await self._ensure_open()
        try:
            await self._rollback(len(turns))
        except LTMError:
            raise
        except Exception as exc:
            raise self._failure(exc, "restoring its memory") from None
        self.turns, self._clean = len(turns), True

    async def preflight(self) -> str | None:
        """The adapter loaded its target; its store opens (in memory: the run has given it no folder yet)."""
        await self._ensure_open()
        return None

    async def reset(self) -> None:
        self.turns, self._clean = 0, False  # the next turn starts an empty conversation

    async def close(self) -> None:
        if self._opened:
            self._opened = False
            await self._close()

    # -- the protocol's steps ------------------------------------------------------------------------------------
    async def _ensure_open(self) -> None:
        if not self._opened:
            try:
                await self._open()
            except LTMError:
                raise
            except Exception as exc:
                raise self._failure(exc, "opening its memory") from None
            self._opened = True

    async def _step(self, doing: str, step: Callable[[str, int], Awaitable[T]], text: str) -> T:
        """One turn: the store rolled back first when it may hold more than the counted turns, then `step`; the
        turn counts only once the step is done (an error or a cancellation leaves the store to be rolled back)."""
        await self._ensure_open()
        try:
            if not self._clean:
                await self._rollback(self.turns)
            self._clean = False
            result = await step(text, self.turns + 1)
        except LTMError:
            raise
        except Exception as exc:
            raise self._failure(exc, doing) from None
        self.turns += 1
        self._clean = True
        return result

    def _failure(self, exc: BaseException, doing: str) -> AgentError:
        said = clip_text(" ".join(str(exc).split()))
        return AgentError(redact(f"agent {self.spec!r}: {self.kind} failed {doing} ({type(exc).__name__}"
                                 + (f": {said})" if said else ")")), fatal=is_fatal(exc))

    def _reply(self, answer: Answer, sent: str) -> Reply:
        """The reply with the usage the framework reported (priced by model), else the harness's count of what was
        sent and received (unpriced: the model is not known)."""
        if not answer.usage:
            return Reply(text=answer.text, prompt_tokens=self._tokenizer.count(sent),
                         completion_tokens=self._tokenizer.count(answer.text))
        costs = [self._prices.cost(u.model, u.prompt_tokens, u.completion_tokens) if u.model else None
                 for u in answer.usage]
        cost = None if any(c is None for c in costs) else round(sum(c for c in costs if c is not None), 10)
        return Reply(text=answer.text, prompt_tokens=sum(u.prompt_tokens for u in answer.usage),
                     completion_tokens=sum(u.completion_tokens for u in answer.usage), cost_usd=cost)


def content_text(content: Any) -> str:
    """The text of a message's content: a string, or a list of content blocks (strings, and dicts of type "text"
    with their "text"; other blocks such as images or tool calls carry no text)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type", "text") in ("text", "output_text") \
                    and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "".join(parts)
    return "" if content is None else str(content)
