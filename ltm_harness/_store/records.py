"""What every LLM call leaves behind: an `llm_call` event with tokens and cost, and (in the event log's wall-clock
side file) its latency, retries and whether the disk cache answered it; and what a turn's failed tries leave: their
errors and times, in the same side file."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, Optional, TypeVar

from pydantic import BaseModel, Field, PrivateAttr

Role = Literal["agent", "judge", "generation", "test"]
ROLES: tuple[Role, ...] = ("agent", "judge", "generation", "test")


def _is_none(value: object) -> bool:
    return value is None


_T = TypeVar("_T")
# A field left out of its record's JSON while it is None: a field added later for some records leaves the files of all
# other records byte for byte as they were (reading fills the default back in). Declared per field (`x: OmitNone[int] =
# None`), so the serializer leaves it out itself (half the cost of an event's JSON against a model-wide rule in Python).
OmitNone = Annotated[Optional[_T], Field(exclude_if=_is_none)]


class LLMCall(BaseModel):
    """One logical call (all its retries) to a chat-completions endpoint.

    `latency_ms`, `retries` and `cached` are facts of this one run (wall clock, server faults, the state of the disk
    cache): they are not part of the event (excluded from its JSON) but go to the log's wall-clock side file
    (`WallFacts`), so that the same config, seed and replies give the same event log. Every other field follows from
    the request and the response; `cost_usd` is the price of the call's tokens, whether or not the cache answered it
    (the summary counts a cache hit as costing nothing). `response` is kept for calls made inside test programs and
    by the judge, so that resuming or re-scoring a run replays them instead of calling again. A judge call that failed
    after its retries (not for good: a cause that fails every call stops the run, and is asked again when it is
    resumed) is kept too, with `error` (the one line it failed with) and no tokens, so that a resume gives the same
    unscored verdict instead of asking again; `error` is left out of the JSON of every call that did not fail.
    """

    type: Literal["llm_call"] = "llm_call"
    role: Role
    model: str
    endpoint: str  # display URL, never with credentials
    test: str | None = None  # the test a judge/test call belongs to
    request_hash: str  # sha256 (16 hex) of model + messages + parameters
    prompt_tokens: int
    completion_tokens: int
    usage_counted: bool = False  # the response had no usage; tokens were counted here
    latency_ms: float = Field(default=0.0, exclude=True)  # in the side file (event formats 1 to 3: in the event)
    retries: int = Field(default=0, exclude=True)  # likewise
    cost_usd: float | None = None  # None: no price known for the model
    cached: bool = Field(default=False, exclude=True)  # answered from the disk cache: no request was made (likewise)
    # What the provider billed, where it differs from `cost_usd` (its prompt cache's discount on cached input, the
    # Batch API's): a fact of this one run (what the provider had cached), so in the side file too.
    cached_tokens: int | None = Field(default=None, exclude=True)  # prompt tokens the provider's prompt cache served
    billed_usd: float | None = Field(default=None, exclude=True)
    response: str | None = None
    error: OmitNone[str] = None  # why the call failed (then no response, no tokens, nothing paid)

    @property
    def paid_usd(self) -> float | None:
        """What the call cost as billed (None: no price known)."""
        return self.billed_usd if self.billed_usd is not None else self.cost_usd

    def wall_facts(self, line: int) -> "WallFacts":
        return WallFacts(line=line, role=self.role, latency_ms=self.latency_ms, retries=self.retries,
                         cached=self.cached, cached_tokens=self.cached_tokens, billed_usd=self.billed_usd)

    def with_facts(self, facts: "WallFacts | None") -> "LLMCall":
        """This call with the run-to-run facts of its side-file entry (read back to resume or re-score)."""
        if facts is None:
            return self
        return self.model_copy(update={"latency_ms": facts.latency_ms, "retries": facts.retries,
                                       "cached": facts.cached, "cached_tokens": facts.cached_tokens,
                                       "billed_usd": facts.billed_usd})


class WallFacts(BaseModel):
    """One line of an event log's wall-clock side file: what varies between otherwise identical runs for the
    `llm_call` event on line `line` (from 1) of the log."""

    line: int
    role: Role
    latency_ms: float
    retries: int = 0
    cached: bool = False
    cached_tokens: OmitNone[int] = None  # left out unless the provider said (LLMCall.cached_tokens)
    billed_usd: OmitNone[float] = None  # left out unless it differs from the event's cost_usd



class FailedTry(BaseModel):
    """One try of a turn that got no reply from the agent: why, when it began (wall clock, UTC) and how long it
    took. A fact of this one run (a network fault, a slow agent), so it goes to the side file, never the event."""

    error: str
    started: datetime
    latency_ms: float


class TurnWallFacts(BaseModel):
    """One line of an event log's wall-clock side file for the `turn` event on line `line` (from 1): the tries that
    failed before the agent answered (all of them, for a turn that failed). Turns answered at the first try have
    none."""

    line: int
    failed_tries: list[FailedTry]


class UsageTotals(BaseModel):
    """Sums of llm_call records, per role."""

    calls: dict[str, int] = {}
    prompt_tokens: dict[str, int] = {}
    completion_tokens: dict[str, int] = {}
    cost_usd: dict[str, float] = {}
    retries: dict[str, int] = {}
    cached: dict[str, int] = {}
    unpriced_models: list[str] = []
    _discount: dict[str, float] = PrivateAttr(default_factory=dict)  # list price less what was billed, per role

    def add(self, call: LLMCall) -> None:
        r = call.role
        self.calls[r] = self.calls.get(r, 0) + 1
        self.prompt_tokens[r] = self.prompt_tokens.get(r, 0) + call.prompt_tokens
        self.completion_tokens[r] = self.completion_tokens.get(r, 0) + call.completion_tokens
        self.retries[r] = self.retries.get(r, 0) + call.retries
        if call.cached:  # answered by the disk cache: nothing was paid
            self.cached[r] = self.cached.get(r, 0) + 1
        elif call.cost_usd is None:
            if call.model not in self.unpriced_models:
                self.unpriced_models.append(call.model)
        else:
            paid = call.billed_usd if call.billed_usd is not None else call.cost_usd
            self.cost_usd[r] = round(self.cost_usd.get(r, 0.0) + paid, 10)
            if paid != call.cost_usd:
                self._discount[r] = round(self._discount.get(r, 0.0) + call.cost_usd - paid, 10)

    def discount(self, role: str) -> float:
        """How much less than its list price the role's calls were billed (a prompt cache, the Batch API)."""
        return self._discount.get(role, 0.0)

    def merge(self, other: "UsageTotals") -> None:
        for name in ("calls", "prompt_tokens", "completion_tokens", "cost_usd", "retries", "cached"):
            mine, theirs = getattr(self, name), getattr(other, name)
            for k, v in theirs.items():
                mine[k] = round(mine.get(k, 0) + v, 10)
        for k, v in other._discount.items():
            self._discount[k] = round(self._discount.get(k, 0.0) + v, 10)
        for m in other.unpriced_models:
            if m not in self.unpriced_models:
                self.unpriced_models.append(m)

    @property
    def total_cost(self) -> float:
        return round(sum(self.cost_usd.values()), 10)
