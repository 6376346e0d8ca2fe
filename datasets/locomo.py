"""locomo: LoCoMo (Maharana et al., ACL 2024), very long-term conversations between two people, each with about
200 questions on what was said; the benchmark memory systems compare themselves on.

Each of its 10 conversations is a conversation of its own here: 19 to 32 dated sessions, said to the agent as
history that needs no reply (`Caroline: ...`, a photo as its caption; an OpenAI-compatible agent makes no call for
them), each session at its date, then its questions. The data file is the repository's `data/locomo10.json`
(CC BY-NC 4.0: never shipped; fetched on first use into the user cache, see `ltm_harness._interop.locomo.fetch`;
`args: {data_file: PATH}` reads a copy of your own).

Modes (`args: {mode: ...}`):

* `reference` (default): all the sessions, then the questions, as the benchmark's own evaluation feeds them: no
  opening message, no filler. Each question is answered from the memory the history left, as in every published
  LoCoMo protocol: after its reply is recorded the agent goes back to its state at the end of the history, so no
  question sees another (`args: {questions: sequential}`: each after the earlier questions and answers instead).
  An agent that cannot go back has its questions asked in sequence, and the run says so. Each question is scored as the reference scores it (by category: F1 on Porter-stemmed
  tokens; multi-hop by comma-separated parts; open-domain against the gold before ';'; adversarial by whether the
  answer says the conversation does not mention it); the dataset's score is the mean over questions, the
  reference's overall number.
* `interleaved`: the sessions in order, each question asked as soon as `distance` tokens (default: the memory span)
  have passed since the first turn its evidence names, so results show score against memory distance per
  category. The same scoring.

With a judge (`--judge MODEL`), categories 1-4 are also judged CORRECT/WRONG with our own prompt, `lenient` (the
vendors' criterion: the same thing or topic) or `strict` (`args: {judge: strict}`), and the share judged correct is
the J number memory vendors publish; the report says which prompt judged.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field

from ltm_harness._authoring.dataset import DatasetInterface, ResultPart, ResultView
from ltm_harness._authoring.example import LineTokens, TestExample
from ltm_harness._engine.program import TestOutcome
from ltm_harness._errors import DefinitionError
from ltm_harness._interop.conversation import HistoryTurn, Question, plan_conversation
from ltm_harness._interop.locomo.data import CATEGORY_NAMES, LocomoSample, render_turn
from ltm_harness._interop.locomo.fetch import load_locomo
from ltm_harness._interop.locomo.judge import JUDGED_CATEGORIES, judge_prompt
from ltm_harness._interop.locomo.scoring import question_text, score_answer
from ltm_harness._scoring.headline import Headline, Metric
from ltm_harness._scoring.verdict import Judge, JudgeUnparseable
from ltm_harness._tokens import get_tokenizer

NOT_MENTIONED = "Not mentioned in the conversation."
QUIRKS = ("int_answers", "evidence_fixed", "evidence_dropped", "questions_without_evidence", "questions_without_answer",
          "sessions_without_turns", "sessions_without_date", "dates_unread", "captions_without_url")


def _utc(when: datetime | None) -> datetime | None:
    """The file's dates carry no time zone: taken as UTC, as the harness's virtual clock runs."""
    return when.replace(tzinfo=timezone.utc) if when is not None and when.tzinfo is None else when


class LoCoMoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mode: Literal["reference", "interleaved"] = "reference"
    distance: int | None = Field(default=None, gt=0)  # interleaved: tokens from the evidence (default: memory_span)
    data_file: str | None = None  # a copy of data/locomo10.json of your own
    categories: list[int] = Field(default_factory=lambda: [1, 2, 3, 4, 5])  # which questions are asked
    conversations: list[str] | None = None  # sample ids (e.g. conv-26); None: in file order
    judge: Literal["lenient", "strict"] = "lenient"  # the J prompt, when the run has a judge
    not_mentioned_hint: Literal["adversarial", "all"] = "adversarial"  # which questions say how to answer "not mentioned"
    # reference mode: `independent` (default), each question answered from the memory the history left (the agent
    # goes back after each); `sequential`, each question after the earlier questions and answers. Interleaved mode
    # is always sequential (the history goes on after a question).
    questions: Literal["independent", "sequential"] | None = None


class LoCoMo(DatasetInterface):
    name = "locomo"
    description = ("LoCoMo: 10 long dated conversations, ~200 questions each (multi-hop, temporal, open-domain, "
                   "single-hop, adversarial); data fetched on first use (CC BY-NC)")
    Params = LoCoMoParams
    params: LoCoMoParams  # the validated args, typed
    conversation_per_example = True
    # Quoted by the reference's F1 (the mean over every question, category 5 by its "not mentioned" rule), per
    # category, and, judged, the vendors' J: the share judged correct over categories 1-4 (`headline_spec` names
    # the judge prompt).
    headline = Headline(metrics=[Metric(name="F1"), Metric(name="F1", per="category", order=list(CATEGORY_NAMES.values())),
                                 Metric(name="J (judge, categories 1-4)", of="verdict",
                                        unless={"category": [CATEGORY_NAMES[5]]})],
                        question="question", conversation="conversation",
                        judge="gpt-4o-mini")  # the J of mem0's evaluation (the vendors' published numbers)
    requires_user_data = True  # its data file is fetched on first use (or given): never shipped
    scoring_args = frozenset({"judge"})

    def ignored_settings(self) -> dict[str, tuple[str, dict[str, str]]]:
        if self.params.mode == "interleaved":
            return {}
        why = "plays in reference mode (every question after the whole conversation)"
        return {"memory_span": (f"{why}, where no span is used", {"mode": "interleaved"}),
                "distance": (f"{why}, where no distance is used", {"mode": "interleaved"}),
                "seed": ("plays its conversations in file order with no filler, so no seed changes it "
                         "(args.conversations chooses them)", {})}

    # -- generation -----------------------------------------------------------------------------------------
    def generate_examples(self, num_examples: int) -> list[TestExample]:
        p = self.params
        bad = sorted(set(p.categories) - set(CATEGORY_NAMES))
        if bad:
            raise DefinitionError(f"locomo: args.categories: {bad[0]} is not a LoCoMo category; use 1 to 5 "
                                  f"({', '.join(f'{k} {v}' for k, v in CATEGORY_NAMES.items())})")
        if p.mode == "interleaved" and p.questions == "independent":
            raise DefinitionError("locomo: args.questions: independent questions are the reference mode's protocol; "
                                  "in interleaved mode the history goes on after each question, so they are asked "
                                  "in sequence: leave args.questions out, or use mode: reference")
        data = load_locomo(Path(p.data_file) if p.data_file else None)
        samples = data.samples
        if p.conversations is not None:
            known = {s.sample_id: s for s in samples}
            missing = [c for c in p.conversations if c not in known]
            if missing:
                raise DefinitionError(f"locomo: args.conversations: {missing[0]!r} is not in the data file; its "
                                      f"conversations are {', '.join(known)}")
            samples = [known[c] for c in p.conversations]
        if num_examples > len(samples):
            raise DefinitionError(f"locomo: {num_examples} conversations asked for (dataset_examples), but the data "
                                  f"has {len(samples)}; ask for at most {len(samples)}")
        quirks = data.quirks.model_dump(include=set(QUIRKS))
        return [self._example(s, quirks) for s in samples[:num_examples]]

    def _example(self, sample: LocomoSample, quirks: dict[str, int]) -> TestExample:
        p = self.params
        tokenizer = get_tokenizer()
        turns = []
        for session in sample.sessions:
            for k, turn in enumerate(session.turns):
                turns.append(HistoryTurn(turn.dia_id, render_turn(turn), _utc(session.date_time) if k == 0 else None,
                                         turn.speaker))
        chosen = [q for q in sample.questions if q.category in p.categories]
        questions = [Question(question_text(q, not_mentioned_hint=p.not_mentioned_hint), tuple(q.evidence))
                     for q in chosen]
        plan = plan_conversation(turns, questions, tokenizer.count, p.mode, p.distance or self.memory_span)
        asked = [chosen[k] for k in plan.asked]
        gold = [q.answer if q.category != 5 else NOT_MENTIONED for q in asked]
        # what a perfect answer says: the gold as the reference scores it (open-domain: before its first ';')
        oracle = [str(g).split(";")[0].strip() if q.category == 3 else str(g) for q, g in zip(asked, gold)]
        start = _utc(next((s.date_time for s in sample.sessions if s.date_time is not None), None))
        return self.make_example(
            sample.sample_id, plan.script, plan.is_question, gold, waits=plan.waits, oracle_answers=oracle,
            needs=plan.needs, observe=plan.observe, roles=plan.line_roles,
            independent_questions=True if self.independent else None,
            line_tokens=LineTokens(encoding=tokenizer.encoding_name, counts=plan.tokens),
            description=f"LoCoMo conversation {sample.sample_id} ({sample.speaker_a} and {sample.speaker_b}), "
                        f"{len(turns)} turns, {len(asked)} questions, {p.mode} mode"
                        f"{', each question on its own' if self.independent else ''}",
            extra={
                "sample_id": sample.sample_id,
                "start": start.isoformat() if start else None,
                "questions": [{"index": q.index, "category": q.category, "question": q.question, "answer": q.answer,
                               "adversarial_answer": q.adversarial_answer} for q in asked],
                "anchors": {str(line): list(anchor) for line, anchor in plan.answer_statements().items()},
                "data_quirks": {k: v for k, v in quirks.items() if v},
            },
        )

    @property
    def independent(self) -> bool:
        """Each question answered from the memory the history left (the reference protocol)."""
        p = self.params
        return p.mode == "reference" and p.questions != "sequential"

    # -- the conversation ------------------------------------------------------------------------------------
    def conversation_start(self, example: TestExample) -> datetime | None:
        start = example.extra.get("start")
        return datetime.fromisoformat(start) if start else None

    def result_parts(self, example: TestExample) -> list[ResultPart]:
        return [ResultPart(f"q{q['index']}", k, {"category": CATEGORY_NAMES[q["category"]]})
                for k, q in enumerate(example.extra["questions"])]

    def answer_statements(self, example: TestExample) -> dict[int, tuple[int, int]] | None:
        return {int(line): (anchor[0], anchor[1]) for line, anchor in example.extra["anchors"].items()}

    # -- scoring -----------------------------------------------------------------------------------------------
    async def evaluate_with_judge(self, example: TestExample, questions: list[str], responses: list[str],
                                  judge: Judge | None) -> TestOutcome:
        """Each question by the reference's rule for its category; with a judge, categories 1-4 also get a
        CORRECT/WRONG verdict (the J number), which never changes the reference score."""
        prompt = judge_prompt(self.params.judge) if judge is not None else None
        parts = []
        for k, q in enumerate(example.extra["questions"]):
            response = responses[k] if k < len(responses) else ""
            category = q["category"]
            score = score_answer(category, response, q["answer"])
            rule = "says it is not mentioned" if category == 5 else "F1"
            reasons = [f"{CATEGORY_NAMES[category]} ({rule}): {score:.3f}"]
            verdicts = []
            if judge is not None and category in JUDGED_CATEGORIES and q["answer"] is not None:
                try:
                    verdict = await judge.grade(q["question"], q["answer"], response, prompt=prompt)
                except JudgeUnparseable as exc:
                    reasons.append(f"not judged: the judge's verdict could not be read ({exc.reason})")
                else:
                    verdicts.append(verdict)
                    reasons.append(f"judge ({self.params.judge}): {'CORRECT' if verdict.score >= 1 else 'WRONG'}")
            parts.append(TestOutcome(score, 1.0, reasons, verdicts=verdicts))
        return TestOutcome(sum(p.score for p in parts), float(len(parts)), [], parts=parts)

    def headline_spec(self) -> Headline:
        metrics = [m.model_copy(update={"name": f"J ({self.params.judge} judge, categories 1-4)"})
                   if m.of == "verdict" else m for m in self.headline.metrics]
        return self.headline.model_copy(update={"metrics": metrics})

    def summary_metrics(self, examples: Sequence[TestExample], results: Sequence[ResultView]) -> dict[str, float]:
        """The file's known data errors, mended or left out, by kind (J is in the headline)."""
        out: dict[str, float] = {}
        quirks: dict[str, Any] = examples[0].extra.get("data_quirks", {}) if examples else {}
        for kind, n in quirks.items():
            out[f"data: {kind.replace('_', ' ')}"] = float(n)
        return out
