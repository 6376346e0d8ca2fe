"""A small benchmark of the LoCoMo / LongMemEval shape for the report tests: dated history that needs no reply, then
questions, each its own result labelled by category (and one by abstention), one category left unscored without a
judge, and the benchmark's own named metrics, a known data error among them. In `interleaved` mode each question
comes `memory_span` tokens after the turns it needs (the span is the memory distance, as in the shipped configs)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import ltm_harness
from ltm_harness import DatasetInterface
from ltm_harness._authoring.catalog import DATASETS
from ltm_harness._authoring.dataset import ResultPart
from ltm_harness._engine.program import TestOutcome
from ltm_harness._interop.conversation import HistoryTurn, Question, plan_conversation
from ltm_harness._tokens import get_tokenizer

NAME = "quiz_bench"
DAY1 = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
SESSIONS = [
    (DAY1, ["Alice: I adopted a cat last week, her name is Miso.", "Bob: That is lovely, what colour is she?",
            "Alice: She is ginger with white paws."]),
    (DAY1 + timedelta(days=3), ["Bob: I started learning the cello on Monday.", "Alice: How is it going so far?",
                                "Bob: Slowly, my teacher is called Ingrid."]),
    (DAY1 + timedelta(days=10), ["Alice: We moved to Lisbon yesterday.", "Bob: Wow, Lisbon is beautiful.",
                                 "Alice: The flat is near the river."]),
]
QUESTIONS = [  # question, expected, needed turn ids, category
    ("What is the name of Alice's cat?", "Miso", ("s0:0",), "single-hop"),
    ("Who teaches Bob the cello?", "Ingrid", ("s1:2",), "single-hop"),
    ("What colour is Miso, and where does Alice live now?", "ginger, Lisbon", ("s0:2", "s2:0"), "multi-hop"),
    ("How many days after the cat did Bob start the cello?", "3", ("s0:0", "s1:0"), "temporal"),
    ("What would Alice enjoy doing near the river?", "walks", ("s2:2",), "open-domain"),  # needs a judge
    ("What is the name of Bob's dog?", "not mentioned", ("s1:0",), "adversarial"),
]
CATEGORIES = list(dict.fromkeys(c for *_, c in QUESTIONS))
UNSCORED = "open-domain"  # scored only by a judge: unscored in a run without one
METRICS = ("J (lenient judge, categories 1-4)", "J: questions judged", "data: <int> answers")


class Quiz(DatasetInterface):
    """Two friends' dated chat as history, then six questions, each its own result labelled by category."""

    name = NAME
    description = "a small benchmark of the LoCoMo shape (report tests)"
    conversation_per_example = True

    def __init__(self, memory_span: int = 4000, seed: int = 0, mode: str = "reference") -> None:
        super().__init__(memory_span, seed)
        self.mode = mode

    def generate_examples(self, n: int):
        turns = [HistoryTurn(f"s{s}:{t}", text, when if t == 0 else None)
                 for s, (when, lines) in enumerate(SESSIONS) for t, text in enumerate(lines)]
        out = []
        for i in range(n):
            plan = plan_conversation(turns, [Question(q, needs) for q, _, needs, _ in QUESTIONS], get_tokenizer().count,
                                     self.mode, self.memory_span)  # type: ignore[arg-type]
            asked = [QUESTIONS[k] for k in plan.asked]
            out.append(self.make_example(f"chat-{i}", plan.script, plan.is_question, [a for _, a, _, _ in asked],
                                         waits=plan.waits, needs=plan.needs, observe=plan.observe,
                                         oracle_answers=[a for _, a, _, _ in asked],
                                         extra={"categories": [c for *_, c in asked],
                                                "anchors": {str(q): list(a) for q, a in plan.answer_statements().items()}}))
        return out

    def conversation_start(self, example):
        return DAY1

    def result_parts(self, example):
        return [ResultPart(f"q{k}", k, {"category": c, **({"abstention": "yes"} if c == "adversarial" else {})})
                for k, c in enumerate(example.extra["categories"])]

    def answer_statements(self, example):
        return {int(q): (a[0], a[1]) for q, a in example.extra["anchors"].items()}

    async def evaluate_with_judge(self, example, questions, responses, judge):
        parts = []
        for category, response, expected in zip(example.extra["categories"], responses, example.expected_responses):
            if category == UNSCORED and judge is None:
                parts.append(TestOutcome(0.0, 1.0, ["needs a judge"], unscored=True))
            else:
                found = all(w.strip().lower() in response.lower() for w in expected.split(","))
                parts.append(TestOutcome(float(found), 1.0, []))
        return TestOutcome(sum(p.score for p in parts), float(len(parts)), [], parts=parts)

    def summary_metrics(self, examples, results):
        judged = [r for r in results if r.status != "unscored" and (r.labels or {}).get("category") != "adversarial"]
        correct = sum(r.status == "ok" and r.score >= r.max_score for r in judged)
        return {METRICS[0]: correct / len(judged) if judged else 0.0, METRICS[1]: float(len(judged)),
                METRICS[2]: 1.0}


def register() -> None:
    ltm_harness.register_dataset(Quiz)


def unregister() -> None:
    DATASETS.unregister(NAME)
