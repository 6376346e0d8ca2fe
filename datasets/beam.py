"""beam: BEAM ("Beyond a Million Tokens", Tavakoli et al., ICLR 2026), single-user conversations of 100K, 500K, 1M
and 10M tokens, each with 20 probing questions over ten memory abilities, scored by a rubric judge.

Each chat is a conversation of its own here, played as the reference plays it: every message in order and in its
own role (a 10M chat assembled from its ten sub-plans, ids running on across them), each batch at its date
(`time_anchor`) through the virtual clock, as history that needs no reply, then the probing questions, ability by
ability, each answered independently from the memory the history left (`args: {questions: sequential}`: in one
conversation). `args: {scale: 100K
| 500K | 1M | 10M}` chooses the chats; the reference's file where it has one (`chat_trunecated.json`, else
`chat.json`). The data is fetched on first use from the repository at a pinned commit, file by file (see
`ltm_harness._interop.beam.fetch`; `LTM_BEAM_URL` for a mirror, `args: {data_dir: PATH}` for a checkout or copy);
CC BY-SA 4.0, never shipped.

Modes (`args: {mode: ...}`): `reference` (default), all the history then the questions; `interleaved`, each
question once `distance` tokens (default: the memory span) have passed since its earliest evidence message
(`source_chat_ids`), so that results show score against memory distance per ability.

Scoring (`ltm_harness._interop.beam.grade`): with a judge (`--judge MODEL`), each rubric item scored 1 / 0.5 / 0 by
our prompt (the reference's own with `--reference-prompts PATH-TO-A-BEAM-CHECKOUT`), a question's score their mean;
event ordering by aligning the answer's lines to the gold events, tau_norm x F1 (both reported). `args: {scoring:
reference}` uses the published code's arithmetic instead (int() of every item score, the question slot left
unfilled, tau_norm alone for event ordering). Without a judge only clear abstentions on abstention questions are
decided (by a rule), the rest is unscored and counted. The headline is the mean of the ten abilities' means.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field

from ltm_harness._authoring.dataset import DatasetInterface, ResultPart, ResultView
from ltm_harness._authoring.example import TestExample
from ltm_harness._engine.program import TestOutcome
from ltm_harness._errors import DefinitionError
from ltm_harness._interop.beam.chat import ChatMessage
from ltm_harness._interop.beam.fetch import CHATS, ChatSource, chat_source, local_source
from ltm_harness._interop.beam.grade import ORDER_REASON, grade
from ltm_harness._interop.beam.probing import ABILITIES, ABILITY_NAMES, QUIRKS, BeamQuestion, Quirks, drop_unknown
from ltm_harness._interop.beam.reference_prompts import ReferencePrompts, load_reference_prompts
from ltm_harness._interop.conversation import HistoryTurn, Question, plan_conversation
from ltm_harness._scoring.headline import Headline, Metric
from ltm_harness._tokens import get_tokenizer

ABILITY_ORDER = [ABILITY_NAMES[a] for a in ABILITIES]
_LABEL = re.compile(r"^\s*(?:llm\s+)?response\s+(?:should|must)\s+\w+\s*:\s*", re.I)
_ORDER = re.compile(re.escape(ORDER_REASON) + r" F1 ([0-9.]+), tau_norm ([0-9.]+|undefined)")


class BeamParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scale: Literal["100K", "500K", "1M", "10M"] = "100K"
    mode: Literal["reference", "interleaved"] = "reference"
    distance: int | None = Field(default=None, gt=0)  # interleaved: tokens from the evidence (default: memory_span)
    data_dir: str | None = None  # a checkout or copy laid out like the repository
    chats: list[int] | None = None  # chat numbers (folders 1..N); None: all, in order
    abilities: list[str] = Field(default_factory=lambda: list(ABILITIES))
    scoring: Literal["ours", "reference"] = "ours"  # the arithmetic: ours, or the published code's
    # reference mode: `independent` (default), each question answered from the memory the history left (the agent
    # goes back after each), as the reference answers; `sequential`, each after the earlier questions and answers.
    # Interleaved mode is always sequential (the history goes on after a question).
    questions: Literal["independent", "sequential"] | None = None
    reference_prompts: str | None = None  # a BEAM checkout: its judge prompts, for exact prompt parity


def history_turn(message: ChatMessage) -> HistoryTurn:
    """A message as history: its content, in its own role (the assistant's replies are the agent's own, as the
    reference's long-context baseline gives them), at its batch's date when it opens one."""
    return HistoryTurn(str(message.id), message.content, message.opens, message.role)


def oracle_answer(q: BeamQuestion) -> str:
    """What a perfect answer says: the gold events one per line (event ordering), else the rubric's items (labels
    such as "LLM response should state:" dropped), after the gold answer of an abstention question."""
    if q.ability == "event_ordering":
        return "\n".join(q.rubric)
    items = [_LABEL.sub("", item).strip() for item in q.rubric]
    return "\n".join(([q.gold] if q.ability == "abstention" and q.gold else []) + items)


class Beam(DatasetInterface):
    name = "beam"
    description = ("BEAM: single-user chats of 100K to 10M tokens, 20 probing questions each over ten memory "
                   "abilities, rubric-judged; data fetched on first use (CC BY-SA)")
    Params = BeamParams
    params: BeamParams
    conversation_per_example = True
    # Quoted as the paper quotes it: the average of the ten abilities (the unweighted mean of their means), and each
    # ability's score; `headline_spec` names the arithmetic (ours or the reference's). Without a judge the rule
    # decides only clear abstentions: the numbers then name themselves "rule-decided" and count the decided ones.
    headline = Headline(metrics=[Metric(name="average of the ten abilities", by="ability", order=ABILITY_ORDER),
                                 Metric(name="score", per="ability", order=ABILITY_ORDER)],
                        unjudged="rule-decided", question="question", conversation="chat",
                        judge="gpt-4.1-mini")  # the reference's gpt_llm (src/llm.py)
    requires_user_data = True  # fetched on first use (or given): never shipped
    scoring_args = frozenset({"scoring", "reference_prompts"})

    # -- generation -----------------------------------------------------------------------------------------
    def source_files(self) -> list[Path]:
        """A copy of the user's (`data_dir`) decides the tests: editing its files makes them again. (Fetched files
        are the pinned commit's, checked by their blob ids.)"""
        p = self.params
        if p.data_dir is None:
            return []
        out: list[Path] = []
        for n in p.chats if p.chats is not None else range(1, CHATS[p.scale] + 1):
            try:
                out += local_source(p.data_dir, p.scale, n).files
            except DefinitionError:
                continue  # a chat the copy lacks: said when (if) a run plays it
        return out

    def generate_examples(self, num_examples: int) -> Iterator[TestExample]:  # type: ignore[override]
        p = self.params
        bad = [a for a in p.abilities if a not in ABILITIES]
        if bad:
            raise DefinitionError(f"beam: args.abilities: {bad[0]!r} is not a BEAM ability; use some of "
                                  f"{', '.join(ABILITIES)}")
        if p.mode == "interleaved" and p.questions == "independent":
            raise DefinitionError("beam: args.questions: independent questions are the reference mode's protocol; in "
                                  "interleaved mode the history goes on after each question, so they are asked in "
                                  "sequence: leave args.questions out, or use mode: reference")
        chats = p.chats if p.chats is not None else list(range(1, CHATS[p.scale] + 1))
        wrong = [n for n in chats if not 1 <= n <= CHATS[p.scale]]
        if wrong:
            raise DefinitionError(f"beam: args.chats: {wrong[0]} is not a {p.scale} chat; they are numbered 1 to "
                                  f"{CHATS[p.scale]}")
        if num_examples > len(chats):
            raise DefinitionError(f"beam: {num_examples} chats asked for (dataset_examples), but {p.scale} has "
                                  f"{len(chats)}; ask for at most {len(chats)}")
        for n in chats[:num_examples]:  # one chat at a time: only the files a run needs are fetched
            yield self._example(chat_source(p.scale, n, p.data_dir))

    def _example(self, source: ChatSource) -> TestExample:
        p = self.params
        quirks = Quirks()
        turns: list[HistoryTurn] = []
        start: datetime | None = None
        for m in source.messages():
            if m.anchor_text is not None and m.opens is None:
                quirks.note("dates_unread")
            start = start or m.opens
            turns.append(history_turn(m))
        known = {int(t.key) for t in turns}
        questions = [q for q in drop_unknown(source.questions(quirks), known, quirks) if q.ability in p.abilities]
        count = get_tokenizer().count if p.mode == "interleaved" else _no_count  # reference mode plans no distance
        plan = plan_conversation(turns, [Question(q.question, tuple(str(i) for i in q.evidence)) for q in questions],
                                 count, p.mode, p.distance or self.memory_span)
        asked = [questions[k] for k in plan.asked]
        return self.make_example(
            f"{source.scale}-{source.number}", plan.script, plan.is_question,
            [q.gold if q.gold is not None else "\n".join(q.rubric) for q in asked],
            waits=plan.waits, oracle_answers=[oracle_answer(q) for q in asked], needs=plan.needs,
            observe=plan.observe, roles=plan.line_roles, independent_questions=True if self.independent else None,
            description=f"BEAM {source.scale} chat {source.number} ({source.kind} file), {len(turns)} messages, "
                        f"{len(asked)} questions, {p.mode} mode"
                        f"{', each question on its own' if self.independent else ''}",
            extra={
                "scale": source.scale, "chat": source.number, "file": source.kind,
                "start": start.isoformat() if start else None,
                "questions": [q.model_dump(mode="json") for q in asked],
                "anchors": {str(line): list(anchor) for line, anchor in plan.answer_statements().items()},
                "data_quirks": {k: quirks.counts[k] for k in QUIRKS if quirks.counts.get(k)},
            },
        )

    # -- the conversation ------------------------------------------------------------------------------------
    def conversation_start(self, example: TestExample) -> datetime | None:
        start = example.extra.get("start")
        return datetime.fromisoformat(start) if start else None

    def result_parts(self, example: TestExample) -> list[ResultPart]:
        return [ResultPart(f"{q['ability']}.{q['index']}", k, {"ability": ABILITY_NAMES[q["ability"]]})
                for k, q in enumerate(example.extra["questions"])]

    def answer_statements(self, example: TestExample) -> dict[int, tuple[int, int]] | None:
        return {int(line): (anchor[0], anchor[1]) for line, anchor in example.extra["anchors"].items()}

    @property
    def independent(self) -> bool:
        """Each question answered from the memory the history left (the reference protocol)."""
        p = self.params
        return p.mode == "reference" and p.questions != "sequential"

    # -- scoring -----------------------------------------------------------------------------------------------
    def _prompts(self) -> ReferencePrompts | None:
        return load_reference_prompts(Path(self.params.reference_prompts)) if self.params.reference_prompts else None

    async def evaluate_with_judge(self, example: TestExample, questions: list[str], responses: list[str],
                                  judge: Any) -> TestOutcome:
        prompts = self._prompts() if judge is not None else None
        parts = []
        for k, raw in enumerate(example.extra["questions"]):
            q = BeamQuestion.model_validate(raw)
            response = responses[k] if k < len(responses) else ""
            graded = await grade(q, response, judge, self.params.scoring, prompts)
            reasons = graded.reasons + (_quirks_reason(example) if k == 0 else [])
            if graded.score is None:
                parts.append(TestOutcome(0.0, 1.0, reasons, unscored=True, verdicts=graded.verdicts))
            else:
                parts.append(TestOutcome(graded.score, 1.0, reasons, verdicts=graded.verdicts))
        scored = [p for p in parts if not p.unscored]
        return TestOutcome(sum(p.score for p in scored), float(len(scored)), [], parts=parts,
                           unscored=not scored)

    def headline_spec(self) -> Headline:
        arithmetic = "the reference's arithmetic" if self.params.scoring == "reference" else "our arithmetic"
        first, *rest = self.headline.metrics
        return self.headline.model_copy(update={"metrics": [
            first.model_copy(update={"name": f"average of the ten abilities ({arithmetic})"}), *rest]})

    def summary_metrics(self, examples: Sequence[TestExample], results: Sequence[ResultView]) -> dict[str, float]:
        """Beside the headline (which counts what the rule decided without a judge): event ordering's F1 and
        tau_norm (its score is tau_norm x F1, or tau_norm alone in the reference's arithmetic), and the data's slips
        by kind."""
        f1s: list[float] = []
        taus: list[float] = []
        for r in results:
            reasons = list(getattr(r, "reasons", []) or [])
            if r.status == "unscored":
                continue
            for reason in reasons:
                found = _ORDER.match(str(reason))
                if found:
                    f1s.append(float(found.group(1)))
                    if found.group(2) != "undefined":
                        taus.append(float(found.group(2)))
        out: dict[str, float] = {}
        if f1s:
            out["event ordering: F1"] = sum(f1s) / len(f1s)
        if taus:
            out["event ordering: tau_norm"] = sum(taus) / len(taus)
        quirks: dict[str, int] = {}  # from the results (reading every chat's test back would cost a 10M chat each)
        for r in results:
            for reason in getattr(r, "reasons", []) or []:
                if str(reason).startswith(QUIRKS_REASON):
                    for kind, n in json.loads(str(reason)[len(QUIRKS_REASON):]).items():
                        quirks[kind] = quirks.get(kind, 0) + int(n)
        for kind in QUIRKS:
            if quirks.get(kind):
                out[f"data: {kind.replace('_', ' ')}"] = float(quirks[kind])
        return out


def _no_count(text: str) -> int:
    return 0


QUIRKS_REASON = "data quirks of this chat: "


def _quirks_reason(example: TestExample) -> list[str]:
    """The chat's data quirks, said with its first question's result (the summary counts them from there)."""
    quirks = example.extra.get("data_quirks") or {}
    return [QUIRKS_REASON + json.dumps(quirks, sort_keys=True)] if quirks else []
