"""The scripted test: `TestExample` and its `Wait`s, as JSON definitions (pydantic)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ltm_harness._store.records import OmitNone

# 1: the first format. 2: `needs` (the lines each question's answer depends on). Format 1 files are still read.
DEFINITION_FORMAT = 2


class Wait(BaseModel):
    """What must pass after a script line before the test's next line is said.

    All given conditions must hold: `tokens` of conversation since the line was said, `time`
    seconds of virtual time since the line was said, `percentage_finished` of the dataset's
    memory span since the test's first line, and the virtual clock at `until` at least (a dated
    history: the date of the session the next line opens; the clock jumps there, never back).
    """

    model_config = ConfigDict(extra="forbid")

    tokens: int = Field(default=0, ge=0)
    time: float = Field(default=0.0, ge=0)
    percentage_finished: float = Field(default=0.0, ge=0, le=100)
    until: OmitNone[datetime] = None

    @property
    def is_empty(self) -> bool:
        return not (self.tokens or self.time or self.percentage_finished or self.until is not None)


class LineTokens(BaseModel):
    """The tokens of each script line, counted when the test was made, and the encoding that counted them: the
    session plans with them instead of counting the lines again (when its tokenizer is that encoding)."""

    model_config = ConfigDict(extra="forbid")

    encoding: str
    counts: list[int]

    @model_validator(mode="after")
    def _check_counts(self) -> "LineTokens":
        bad = next((c for c in self.counts if c < 0), None)
        if bad is not None:
            raise ValueError(f"counts: a line has {bad} tokens; a count is 0 or more")
        return self


class TestExample(BaseModel):
    """One test: lines said to the agent (some of them questions, some history that needs no reply), waits,
    expected answers."""

    model_config = ConfigDict(extra="forbid")
    __test__ = False  # not a pytest class

    format: int = DEFINITION_FORMAT
    dataset_name: str
    example_id: str
    description: str = ""
    script: list[str]
    is_question: list[bool]
    waits: list[Wait] = Field(default_factory=list)
    expected_responses: list[Any] = Field(default_factory=list)
    uses_callback: bool = False
    is_temporal: bool = False
    can_be_interleaved: bool = True
    # The script is decided during the run by the dataset's `run` program (see DynamicExample).
    is_dynamic: bool = False
    # The answer a perfect agent gives to each question (for the oracle calibration agent only).
    oracle_answers: list[str] = Field(default_factory=list)
    # Dataset-specific data the test program or evaluator needs; never shown to the agent.
    extra: dict[str, Any] = Field(default_factory=dict)
    # The script lines each question's answer depends on, one list per question (in order), each line before
    # its question. Empty (the default): the dataset decides (`DatasetInterface.needed_lines`: every statement
    # said before the question, unless the dataset says otherwise). Measures the question's memory distance.
    needs: list[list[int]] = Field(default_factory=list)
    # Which lines are history that needs no reply (one flag per line; None: every line is answered). The agent takes
    # them in with its `observe` (no model call for a chat model: they go with the next answered turn).
    observe: OmitNone[list[bool]] = None
    # Who said each line (None: the user said every line): "user", "assistant" (history the agent under test said
    # earlier in a user-assistant chat: it remembers it as its own reply) or a named speaker (LoCoMo's "Caroline").
    # Only history (observe) may be said by someone other than the user.
    roles: OmitNone[list[str]] = None
    # True: every question is asked independently (`TestContext.ask(independent=True)`): answered from the memory as
    # it stood before it, then forgotten, so no question sees another (LoCoMo's and BEAM's reference protocol).
    independent_questions: OmitNone[bool] = None
    # Each line's tokens as counted when the test was made (None: the session counts them).
    line_tokens: OmitNone[LineTokens] = None

    @model_validator(mode="after")
    def _check_shape(self) -> "TestExample":
        n = len(self.script)
        if n == 0:
            raise ValueError("script is empty; a test needs at least one line")
        if len(self.is_question) != n:
            raise ValueError(f"is_question has {len(self.is_question)} entries but script has {n} lines")
        if not self.waits:
            self.waits = [Wait() for _ in range(n)]
        elif len(self.waits) != n:
            raise ValueError(f"waits has {len(self.waits)} entries but script has {n} lines")
        if self.observe is not None:
            if len(self.observe) != n:
                raise ValueError(f"observe has {len(self.observe)} entries but script has {n} lines")
            both = next((i for i, (o, q) in enumerate(zip(self.observe, self.is_question)) if o and q), None)
            if both is not None:
                raise ValueError(f"line {both} is both a question and history that needs no reply (observe); a "
                                 "question needs its reply")
        if self.roles is not None:
            if len(self.roles) != n:
                raise ValueError(f"roles has {len(self.roles)} entries but script has {n} lines")
            empty = next((i for i, r in enumerate(self.roles) if not r.strip()), None)
            if empty is not None:
                raise ValueError(f"roles[{empty}] is empty; give who said the line: user, assistant or a speaker's "
                                 "name")
            spoken = next((i for i, r in enumerate(self.roles) if r != "user" and not self.observed(i)), None)
            if spoken is not None:
                raise ValueError(f"line {spoken} is said by {self.roles[spoken]!r} but is not history (observe); only "
                                 "history may be said by someone other than the user")
        if self.line_tokens is not None and len(self.line_tokens.counts) != n:
            raise ValueError(f"line_tokens has {len(self.line_tokens.counts)} counts but script has {n} lines")
        if self.oracle_answers and len(self.oracle_answers) != sum(self.is_question):
            raise ValueError("oracle_answers needs one entry per question")
        if self.needs:
            lines = [i for i, q in enumerate(self.is_question) if q]
            if len(self.needs) != len(lines):
                raise ValueError(f"needs has {len(self.needs)} entries but the script has {len(lines)} questions; "
                                 "give one list of line numbers per question")
            for k, (line, needed) in enumerate(zip(lines, self.needs)):
                bad = [i for i in needed if not 0 <= i < line]
                if bad:
                    raise ValueError(f"needs[{k}] names line {bad[0]}, but a question (line {line}) can only need "
                                     f"lines 0 to {line - 1} said before it")
        return self

    def observed(self, line: int) -> bool:
        """Whether script line `line` is history that needs no reply."""
        return self.observe is not None and self.observe[line]

    def role(self, line: int) -> str:
        """Who said script line `line` ("user" unless `roles` says otherwise)."""
        return "user" if self.roles is None else self.roles[line]

    @property
    def questions(self) -> list[str]:
        return [line for line, q in zip(self.script, self.is_question) if q]

    def needs_of(self, line: int) -> list[int] | None:
        """The lines the question at script line `line` declares it needs (None: not declared)."""
        if not self.needs or line >= len(self.is_question) or not self.is_question[line]:
            return None
        return self.needs[sum(self.is_question[:line])]

    @property
    def unique_id(self) -> str:
        return f"{self.dataset_name}/{self.example_id}"


class DynamicExample(TestExample):
    """A test whose lines are decided during the run by its dataset's `run` program, which may react to
    the agent's replies and call an LLM (`ctx.llm`). `script` and `waits` hold the planned lines (as they
    go when the agent answers as expected): the scheduler plans with them. What was really said is in
    the event log, and LLM calls made by the program are recorded there and replayed on resume/rescore."""

    is_dynamic: bool = True


def spread_waits(num_lines: int, until_percent: float = 90.0) -> list[Wait]:
    """Waits that spread `num_lines` lines over the span, the last one said at `until_percent`.

    Line i+1 is said once (i+1) * until_percent / (num_lines - 1) percent of the span has passed
    since the test started; the last line has no wait after it.
    """
    if num_lines <= 1:
        return [Wait() for _ in range(num_lines)]
    step = until_percent / (num_lines - 1)
    waits = [Wait(percentage_finished=round((i + 1) * step, 6)) for i in range(num_lines - 1)]
    waits.append(Wait())
    return waits
