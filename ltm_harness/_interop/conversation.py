"""A benchmark's conversation as one test: dated history the agent only takes in, and questions placed either
after all of it (the benchmark's own protocol) or each at a chosen memory distance after the turns it needs.

LoCoMo (one long conversation, many questions) and LongMemEval (one haystack per question) both come down to this:

* `reference`: every history turn in order (history that needs no reply, each session at its date), then the
  questions, as the benchmarks' own evaluations feed them;
* `interleaved`: the history in order, and each question said as soon as `distance` tokens have passed since the
  start of the earliest turn it needs (and never before the last of them). Positions are planned from the lines'
  own token counts (history and questions); what the conversation adds on top (the replies to questions, an agent
  that answers history it could have only heard) only lengthens the distance, so every question is at least
  `distance` tokens from its evidence, and results measure exactly how far it was. Questions the history cannot carry that far wait
  after it, the conversation's filler making up the difference. `after_question="end"` ends the conversation at its
  (single) question: a LongMemEval haystack after its question is never played.

The plan holds line numbers only; the datasets turn it into a `TestExample` (script, observe flags, waits, needs),
and `answer_statements` gives each question's gap from the last line it needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Literal, Sequence

from ltm_harness._authoring.example import Wait

Mode = Literal["reference", "interleaved"]
MODES: tuple[Mode, ...] = ("reference", "interleaved")


@dataclass(frozen=True)
class HistoryTurn:
    """A turn of the benchmark's history: what the agent is told, the date of the session it opens (None when it
    continues one), its id in the benchmark (e.g. LoCoMo's "D3:7") and who said it (`role`: "user", "assistant" for
    the replies of the assistant the agent under test plays, or a named speaker such as LoCoMo's "Caroline")."""

    key: str
    text: str
    opens: datetime | None = None
    role: str = "user"


@dataclass(frozen=True)
class Question:
    """A question: its text, the ids of the history turns its answer needs, and when it is asked (None: whenever
    its turn comes)."""

    text: str
    needs: tuple[str, ...] = ()
    at: datetime | None = None


@dataclass
class ConversationPlan:
    """The test's lines in order: the script, which lines are history (observe) and which questions, the waits after
    each line, and for each question in the order asked: which of the given questions it is (`asked`), its line and
    the lines it needs."""

    script: list[str] = field(default_factory=list)
    observe: list[bool] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)  # who said each line (questions: "user")
    is_question: list[bool] = field(default_factory=list)
    waits: list[Wait] = field(default_factory=list)
    asked: list[int] = field(default_factory=list)  # the given questions' indices, in the order they are asked
    question_lines: list[int] = field(default_factory=list)
    needs: list[list[int]] = field(default_factory=list)
    history_lines: dict[str, int] = field(default_factory=dict)  # history turn id -> its line

    @property
    def line_roles(self) -> list[str] | None:
        """`roles` for a TestExample: None when the user said every line."""
        return None if all(r == "user" for r in self.roles) else list(self.roles)

    def answer_statements(self) -> dict[int, tuple[int, int]]:
        """Per question line, the end of the last line it needs (its gap is measured from there)."""
        return {line: (max(needed), len(self.script[max(needed)])) for line, needed in zip(self.question_lines, self.needs)
                if needed}


def plan_conversation(turns: Sequence[HistoryTurn], questions: Sequence[Question], count: Callable[[str], int],
                      mode: Mode = "reference", distance: int = 0,
                      after_question: Literal["history", "end"] = "history") -> ConversationPlan:
    """The lines of a benchmark conversation (see the module docstring). `count` gives a text's tokens.

    Interleaved, the plan walks the history in order, counting every line's tokens (history and questions; replies
    as none, so that whatever replies add only lengthens a distance), and says each question after the first history
    turn that brings it `distance` tokens past the start of the earliest turn it needs, once every turn it needs is
    said; questions still short of it when the history ends wait after it, in order of their targets."""
    plan = ConversationPlan()
    index = {t.key: i for i, t in enumerate(turns)}
    needed = [sorted({index[k] for k in q.needs if k in index}) for q in questions]
    starts: list[int] = []  # planned start of each line
    pos = 0

    def add(text: str, observe: bool, question: bool, start: int, role: str = "user") -> int:
        plan.script.append(text)
        plan.observe.append(observe)
        plan.roles.append(role)
        plan.is_question.append(question)
        plan.waits.append(Wait())
        starts.append(start)
        return len(plan.script) - 1

    def ask(k: int) -> None:
        nonlocal pos
        q = questions[k]
        if q.at is not None and plan.script:
            _until(plan, q.at)
        target = _target(k) if mode == "interleaved" else None
        start = pos
        if target is not None and target > pos and plan.script:  # past the history: wait until it is far enough
            previous = len(plan.script) - 1
            wait = target - starts[previous]
            plan.waits[previous] = plan.waits[previous].model_copy(update={"tokens": wait})
            start = starts[previous] + wait
        add(q.text, False, True, start)
        plan.asked.append(k)
        pos = start + count(q.text)

    def _target(k: int) -> int | None:
        lines = needed[k]
        return None if not lines else starts[plan.history_lines[turns[lines[0]].key]] + distance

    waiting = list(range(len(questions)))
    for i, turn in enumerate(turns):
        if after_question == "end" and mode == "interleaved" and not waiting:
            break
        if turn.opens is not None and plan.script:
            _until(plan, turn.opens)
        plan.history_lines[turn.key] = add(turn.text, True, False, pos, turn.role)
        pos += count(turn.text)
        if mode == "interleaved":
            ready = [k for k in waiting if needed[k] and needed[k][-1] <= i and (_target(k) or 0) <= pos]
            for k in sorted(ready, key=lambda k: (_target(k) or 0, k)):
                ask(k)
                waiting.remove(k)
    tail = sorted(waiting, key=lambda k: (_target(k) or 0, k)) if mode == "interleaved" else waiting
    for k in tail:
        ask(k)
    plan.question_lines = [i for i, q in enumerate(plan.is_question) if q]
    plan.needs = [[plan.history_lines[turns[i].key] for i in needed[k]] for k in plan.asked]
    return plan


def _until(plan: ConversationPlan, when: datetime) -> None:
    """The next line is said at `when` at the earliest (the clock jumps there, never back)."""
    last = len(plan.script) - 1
    wait = plan.waits[last]
    if wait.until is None or when > wait.until:
        plan.waits[last] = wait.model_copy(update={"until": when})
