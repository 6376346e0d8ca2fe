"""longmemeval: LongMemEval (Wu et al., ICLR 2025), 500 questions on a user's long chat history with an assistant,
each with a haystack of its own: six abilities (single-session user / assistant / preference, multi-session,
temporal reasoning, knowledge update) and 30 questions to abstain on.

Each question is a conversation of its own here (run concurrently, as `isolated` runs are): its haystack's sessions
in date order, said to the agent as history that needs no reply, each turn in its role (the user's as the user's;
the assistant's as the agent's own earlier replies: an OpenAI-compatible agent keeps them as assistant messages, a
framework in its assistant role; `args: {history: text}` says every turn as a user message written `User: ...` /
`Assistant: ...` instead), with no model call for them, each session at its date, then the question at its
`question_date`. The data lives on the HuggingFace hub (`xiaowu0162/longmemeval-cleaned`, the September 2025
clean-up): `variant` oracle (evidence sessions only), s (~115k tokens a question) or m (~500 sessions a question),
fetched on first use into the user cache (`LTM_LONGMEMEVAL_URL`: a mirror folder; `args: {data_file: PATH}`: a
copy of your own) and always read incrementally (ijson), one question at a time.

Modes: `reference` (default), the whole haystack then the question, as the benchmark feeds it; `interleaved`, the
haystack in order and the question as soon as `distance` tokens (default: the memory span) have passed since the
first turn of its evidence (`has_answer`, else the evidence sessions), the rest of the haystack never played.

Scoring: with a judge (`--judge MODEL`), a yes/no verdict per question with our own prompt for its kind (the
reference's criteria), or the reference's own texts with `args: {reference_prompts: PATH-TO-A-CHECKOUT}`; without
one, a rule decides only what it safely can (the gold answer in the reply, a recognisable abstention on an `_abs`
question, an empty reply) and leaves the rest unscored. Results per type and for abstention; the summary adds the
task-averaged accuracy (the mean of the six type accuracies) and the abstention accuracy.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field

from ltm_harness._authoring.dataset import DatasetInterface, ResultView
from ltm_harness._authoring.example import LineTokens, TestExample
from ltm_harness._engine.program import TestOutcome
from ltm_harness._errors import DefinitionError
from ltm_harness._interop.conversation import HistoryTurn, Question, plan_conversation
from ltm_harness._interop.longmemeval.data import QUESTION_TYPES, LMEQuestion, iter_questions, select_questions
from ltm_harness._interop.longmemeval.fetch import data_path
from ltm_harness._interop.longmemeval.reference_prompts import load_reference_prompts
from ltm_harness._interop.longmemeval.scoring import score_reply
from ltm_harness._scoring.headline import Headline, Metric
from ltm_harness._scoring.verdict import Judge
from ltm_harness._tokens import Tokenizer, get_tokenizer

ABSTAIN = "I don't know: you never told me that."
ROLES = {"user": "User", "assistant": "Assistant"}


class LongMemEvalParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    variant: Literal["oracle", "s", "m"] = "s"
    mode: Literal["reference", "interleaved"] = "reference"
    distance: int | None = Field(default=None, gt=0)  # interleaved: tokens from the evidence (default: memory_span)
    data_file: str | None = None  # a LongMemEval JSON file of your own
    reference_prompts: str | None = None  # a LongMemEval checkout: its judge prompt texts, for exact parity
    # how the haystack's turns are said: `roles` (default), each in its role, the assistant's as the agent's own
    # earlier replies; `text`, every turn as a user message written `User: ...` / `Assistant: ...` (as before)
    history: Literal["roles", "text"] = "roles"


def render(role: str, content: str) -> str:
    return f"{ROLES.get(role, role.title())}: {content}"


class LongMemEval(DatasetInterface):
    name = "longmemeval"
    description = ("LongMemEval: 500 questions, each on a chat history of its own (six abilities and abstention); "
                   "data fetched on first use from the HuggingFace hub")
    Params = LongMemEvalParams
    params: LongMemEvalParams  # the validated args, typed
    conversation_per_example = True
    # Quoted as the reference reports it: accuracy overall, task-averaged (the unweighted mean of the types'),
    # over the abstention (`_abs`) questions, and per type. Without a judge the rule decides only some replies: the
    # numbers then name themselves "rule-decided" and count the decided ones. Each question has a haystack of its own.
    headline = Headline(metrics=[Metric(name="accuracy"),
                                 Metric(name="task-averaged accuracy", by="type", order=list(QUESTION_TYPES)),
                                 Metric(name="abstention accuracy", where={"abstention": "yes"}),
                                 Metric(name="accuracy", per="type", order=list(QUESTION_TYPES))],
                        unjudged="rule-decided", question="question", conversation="haystack",
                        judge="gpt-4o-2024-08-06")  # the reference's evaluate_qa.py
    requires_user_data = True  # its data file is fetched on first use (or given): never shipped
    scoring_args = frozenset({"reference_prompts"})

    def ignored_settings(self) -> dict[str, tuple[str, dict[str, str]]]:
        if self.params.mode == "interleaved":
            return {}
        why = "plays in reference mode (each question after its whole haystack)"
        return {"memory_span": (f"{why}, where no span is used", {"mode": "interleaved"}),
                "distance": (f"{why}, where no distance is used", {"mode": "interleaved"})}

    def source_files(self) -> list[Path]:
        """A user's own file decides the tests: editing it makes them again."""
        return [Path(self.params.data_file).expanduser()] if self.params.data_file else []

    # -- generation -----------------------------------------------------------------------------------------
    def generate_examples(self, num_examples: int) -> list[TestExample]:
        p = self.params
        path = data_path(p.variant, p.data_file)
        ids = select_questions(path, num_examples, self.seed)
        if len(ids) < num_examples:
            raise DefinitionError(f"longmemeval: {num_examples} questions asked for (dataset_examples), but {path} "
                                  f"holds {len(ids)}; ask for at most {len(ids)} (--limit {len(ids)})")
        tokenizer = get_tokenizer()
        return [self._example(q, tokenizer) for q in iter_questions(path, only=set(ids))]

    def _example(self, q: LMEQuestion, tokenizer: Tokenizer) -> TestExample:
        p = self.params
        turns: list[HistoryTurn] = []
        evidence: list[str] = []
        wanted = set(q.answer_session_ids)
        for session in q.sessions:
            keys = []
            for t, turn in enumerate(session.turns):
                key = f"{session.id}:{t}"
                opens = session.date if t == 0 else None
                turns.append(HistoryTurn(key, turn.content, opens, turn.role) if p.history == "roles"
                             else HistoryTurn(key, render(turn.role, turn.content), opens))
                if turn.has_answer:
                    evidence.append(key)
                keys.append(key)
            if session.id in wanted and not any(t.has_answer for t in session.turns):
                evidence += keys  # an evidence session without marked turns: all of it
        plan = plan_conversation(turns, [Question(q.question, tuple(evidence), q.question_date)], tokenizer.count,
                                 p.mode, p.distance or self.memory_span, after_question="end")
        oracle = ABSTAIN if q.is_abstention else q.answer
        return self.make_example(
            q.question_id, plan.script, plan.is_question, [q.answer], waits=plan.waits, oracle_answers=[oracle],
            needs=plan.needs, observe=plan.observe, roles=plan.line_roles,
            line_tokens=LineTokens(encoding=tokenizer.encoding_name, counts=plan.tokens),
            description=f"LongMemEval {q.question_type}{' (abstention)' if q.is_abstention else ''}: "
                        f"{len(q.sessions)} sessions, {len(turns)} turns, {p.mode} mode",
            extra={
                "question": q.model_dump(mode="json", exclude={"sessions"}),
                "start": (q.sessions[0].date if q.sessions else q.question_date).isoformat(),
                "anchors": {str(line): list(anchor) for line, anchor in plan.answer_statements().items()},
            },
        )

    # -- the conversation ------------------------------------------------------------------------------------
    def conversation_start(self, example: TestExample) -> datetime | None:
        return datetime.fromisoformat(example.extra["start"])

    def answer_statements(self, example: TestExample) -> dict[int, tuple[int, int]] | None:
        return {int(line): (anchor[0], anchor[1]) for line, anchor in example.extra["anchors"].items()}

    def result_labels(self, example: TestExample) -> dict[str, str]:
        q = self._question(example)
        return {"type": q.question_type, **({"abstention": "yes"} if q.is_abstention else {})}

    @staticmethod
    def _question(example: TestExample) -> LMEQuestion:
        return LMEQuestion.model_validate({**example.extra["question"], "sessions": []})

    # -- scoring -----------------------------------------------------------------------------------------------
    async def evaluate_with_judge(self, example: TestExample, questions: list[str], responses: list[str],
                                  judge: Judge | None) -> TestOutcome:
        """With a judge, its yes/no verdict with the prompt for the question's kind (ours, or the reference's own
        texts read from `reference_prompts`); without one, the rule decides what it safely can, the rest unscored."""
        prompts = load_reference_prompts(Path(self.params.reference_prompts)) \
            if judge is not None and self.params.reference_prompts else None
        scored = await score_reply(self._question(example), responses[0] if responses else "", judge, prompts)
        if scored.score is None:
            hint = "" if judge is not None else " (run with --judge MODEL, or rescore the run with one)"
            return TestOutcome(0.0, 1.0, [f"{scored.reason}{hint}"], unscored=True)
        return TestOutcome(scored.score, 1.0, [f"{scored.by}: {scored.reason}"],
                           verdicts=[scored.verdict] if scored.verdict else [])
