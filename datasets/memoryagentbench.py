"""memoryagentbench: MemoryAgentBench (Hu, Wang and McAuley, arXiv 2507.05257), four competencies of memory agents:
accurate retrieval (AR: RULER QA single- and multi-hop, LongMemEval, EventQA), test-time learning (TTL: five
classification sets learnt from examples, movie recommendation), long-range understanding (LRU: book summaries,
DetectiveQA) and conflict resolution (CR, the paper's selective forgetting: fact consolidation).

Played as the reference plays it: each row (one long context and its questions) is a conversation of its own with a
fresh memory; its context is cut into chunks as the reference cuts them (NLTK sentences packed to `chunk_size`
tokens of GPT-4o-mini's tokenizer: `ltm_harness._interop.mab.chunking`), each chunk said as a short exchange that
needs no reply (the reference's wrapper, in our words: `templates`), then every question, in its source's query
template, answered independently from the memory the chunks left (the agent goes back after each;
`args: {questions: sequential}` asks them in one conversation instead).

Args: `competency` (AR, TTL, LRU, CR, or all: the paper's main table), `sources` (exact `metadata.source` names,
ablation sources too, e.g. eventqa_65536 or factconsolidation_sh_6k), `rows` (per source; default the reference's
`max_test_samples`), `chunk_size` (default 4096 as every reference data config; `paper` for the paper's own sizes,
512 for RULER QA, LongMemEval and fact consolidation), `data_dir` (a copy laid out like the hub's repository; else
fetched on first use: `ltm_harness._interop.mab.fetch`, `LTM_MAB_URL` for a mirror), `scoring` (ours, or reference
for the reference's quirks), `reference_prompts` (a MemoryAgentBench checkout: its own wrappers, query templates and
LongMemEval judge prompts, read by `ast`), `published` (the agents of the paper's Table 3 shown beside ours).

Scoring per source (`scoring`, `recsys`, `judges`): SubEM (RULER QA, EventQA, fact consolidation), EM (ICL,
DetectiveQA), Recall@5 (recommendation), the LongMemEval judge and the summary judge (`--judge MODEL`). Headline as
the paper's: each competency the unweighted mean of its columns (the five ICL sets averaged first into MCC), the
overall score the mean of the competencies; per column and per source beside it.
"""

from __future__ import annotations

import bisect
import re
from functools import cached_property
from pathlib import Path
from typing import Any, Iterator, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field

from ltm_harness._authoring.dataset import DatasetInterface, ResultPart, ResultView
from ltm_harness._authoring.example import LineTokens, TestExample
from ltm_harness._engine.program import TestOutcome
from ltm_harness._errors import DefinitionError
from ltm_harness._interop.conversation import HistoryTurn, Question, plan_conversation
from ltm_harness._interop.mab import published as table3
from ltm_harness._interop.mab.chunking import ENCODING, chunk_text, splitter
from ltm_harness._interop.mab.fetch import entity2id, split_file
from ltm_harness._interop.mab.judges import lme_question, lme_score, summary_score
from ltm_harness._interop.mab.recsys import Movies, recall_at
from ltm_harness._interop.mab.reference_prompts import load_reference_templates
from ltm_harness._interop.mab.rows import MabRow, iter_rows, sources_in
from ltm_harness._interop.mab.scoring import Rule, rule_score
from ltm_harness._interop.mab.sources import BY_COMPETENCY, COLUMNS, COMPETENCIES, MAIN, SOURCES, SPLITS, Source
from ltm_harness._interop.mab.templates import OURS, Templates
from ltm_harness._scoring.headline import Headline, Metric
from ltm_harness._scoring.verdict import Judge
from ltm_harness._tokens import get_tokenizer

ABSTAIN = "I don't know: you never told me that."
_SECONDARY = {"EventQA: eventqa_recall": re.compile(r"eventqa_recall ([0-9.]+)"),
              "recommendation: Recall@1": re.compile(r"\(@1 ([0-9.]+),"),
              "recommendation: Recall@10": re.compile(r", @10 ([0-9.]+)\)")}
NO_NEEDS = ("in_context_learning", "recsys_redial", "infbench_sum")  # golds that are no text of the context
RULES: dict[str, Rule] = {"SubEM": "SubEM", "EM": "EM"}
SOURCE_ORDER = list(SOURCES)


class MabParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    competency: Literal["AR", "TTL", "LRU", "CR", "all"] = "all"
    sources: list[str] | None = None  # exact source names; None: the competency's sources of the main table
    rows: int | None = Field(default=None, gt=0)  # per source; None: the reference's max_test_samples
    chunk_size: int | Literal["paper"] = 4096
    data_dir: str | None = None  # a copy laid out like the hub's repository
    scoring: Literal["ours", "reference"] = "ours"
    reference_prompts: str | None = None  # a MemoryAgentBench checkout
    questions: Literal["independent", "sequential"] = "independent"
    published: list[str] = Field(default_factory=lambda: list(table3.DEFAULT_SHOWN))


class MemoryAgentBench(DatasetInterface):
    name = "memoryagentbench"
    description = ("MemoryAgentBench: accurate retrieval, test-time learning, long-range understanding and conflict "
                   "resolution over long chunked contexts; data fetched on first use from the HuggingFace hub")
    Params = MabParams
    params: MabParams
    conversation_per_example = True
    headline = Headline(metrics=[
        Metric(name="overall (mean of the competencies)", by="competency", within=["column", "source"],
               order=list(COMPETENCIES)),
        Metric(name="score", per="competency", within=["column", "source"], order=list(COMPETENCIES)),
        Metric(name="score", per="column", within=["source"], order=list(COLUMNS)),
        Metric(name="score", per="source", order=SOURCE_ORDER)],
        unjudged="rule-decided", question="question", conversation="row")
    requires_user_data = True  # fetched on first use (or given): never shipped
    # `reference_prompts` is not among them: the reference's templates change what the agent is told
    scoring_args = frozenset({"scoring", "published"})

    def ignored_settings(self) -> dict[str, tuple[str, dict[str, str]]]:
        why = "plays each row's chunks then its questions, where no span or distance is used"
        return {"memory_span": (why, {}), "distance": (why, {})}

    # -- which rows ---------------------------------------------------------------------------------------------
    @property
    def chosen(self) -> list[Source]:
        p = self.params
        names = p.sources if p.sources is not None else (
            list(MAIN) if p.competency == "all" else list(BY_COMPETENCY[p.competency]))
        unknown = [n for n in names if n not in SOURCES]
        if unknown:
            raise DefinitionError(f"memoryagentbench: args.sources: {unknown[0]!r} is not a MemoryAgentBench source "
                                  f"(exact, case-sensitive); use some of {', '.join(SOURCES)}")
        for n in p.published:
            if n not in table3.AGENTS:
                raise DefinitionError(f"memoryagentbench: args.published: {n!r} is not an agent of the paper's "
                                      f"Table 3; use some of {', '.join(table3.AGENTS)}")
        return [SOURCES[n] for n in names]

    def source_files(self) -> list[Path]:
        if self.params.data_dir is None:
            return []
        root = Path(self.params.data_dir).expanduser()
        chosen = self.chosen
        movies = [root / "entity2id.json"] if any(s.family == "recsys_redial" for s in chosen) else []  # oracle names
        return [root / f"data/{split}-00000-of-00001.parquet" for split in SPLITS
                if any(s.split == split for s in chosen)] + movies

    def chunk_size(self, src: Source) -> int:
        size = self.params.chunk_size
        return src.paper_chunk_size if size == "paper" else int(size)

    def generate_examples(self, num_examples: int) -> Iterator[TestExample]:  # type: ignore[override]
        chosen = self.chosen
        if isinstance(self.params.chunk_size, int) and self.params.chunk_size <= 0:
            raise DefinitionError("memoryagentbench: args.chunk_size must be a positive number of tokens, or paper")
        files = {split: split_file(split, self.params.data_dir) for split in SPLITS if any(s.split == split for s in chosen)}
        counts = {name: n for path in files.values() for name, n in sources_in(path)}
        available = sum(min(counts.get(s.name, 0), self.params.rows or s.max_rows) for s in chosen)
        if num_examples > available:
            raise DefinitionError(f"memoryagentbench: {num_examples} rows asked for (dataset_examples), but the data "
                                  f"holds {available} of {', '.join(s.name for s in chosen)}; ask for at most "
                                  f"{available} (--limit {available})")
        made = 0
        for split in SPLITS:
            wanted = {s.name: s for s in chosen if s.split == split}
            if not wanted or made >= num_examples:
                continue
            taken: dict[str, int] = {}
            for row in iter_rows(files[split], split, set(wanted)):
                src = wanted[row.source]
                if taken.get(src.name, 0) >= (self.params.rows or src.max_rows):
                    continue
                taken[src.name] = taken.get(src.name, 0) + 1
                yield self._example(row, src)
                made += 1
                if made >= num_examples:
                    return

    # -- one row --------------------------------------------------------------------------------------------------
    def templates(self, src: Source) -> Templates:
        if self.params.reference_prompts:
            ref = load_reference_templates(Path(self.params.reference_prompts).expanduser().resolve())
            if src.family in ref:
                return ref[src.family]
        return OURS[src.family]

    def _example(self, row: MabRow, src: Source) -> TestExample:
        size = self.chunk_size(src)
        chunks = chunk_text(row.context, size)
        tpl = self.templates(src)
        tokenizer = get_tokenizer(ENCODING)
        wrapper_tokens = {role: tokenizer.count(text) for role, text in tpl.wrap("")}
        turns: list[HistoryTurn] = []
        known: dict[str, int] = {}
        for i, chunk in enumerate(chunks):
            for role, text in tpl.wrap(chunk.text):
                turns.append(HistoryTurn(f"{i}" if role == "user" else f"{i}.ack", text, None, role))
                known[text] = chunk.tokens + wrapper_tokens[role] if role == "user" else wrapper_tokens[role]
        pairs = row.pairs()
        holder = _GoldFinder([c.text for c in chunks]) if src.family not in NO_NEEDS else None
        questions = []
        for question, golds in pairs:
            at = holder.last_holding(golds) if holder is not None else None
            questions.append(Question(tpl.ask(question), (str(at),) if at is not None else ()))
        plan = plan_conversation(turns, questions, lambda t: known[t] if t in known else tokenizer.count(t))
        meta = row.metadata
        records: list[dict[str, Any]] = [{"index": k, "source": src.name, "question": q, "golds": g,
                    "qa_pair_id": _at(meta.qa_pair_ids, k), "question_id": _at(meta.question_ids, k),
                    "question_type": _at(meta.question_types, k)} for k, (q, g) in enumerate(pairs)]
        slug = src.name.replace("*", "star")
        independent = self.params.questions == "independent"
        return self.make_example(
            f"{slug}-{row.index}", plan.script, plan.is_question, [r["golds"] for r in records],
            waits=plan.waits, oracle_answers=[self._oracle(src, r["golds"], r["question_id"]) for r in records], needs=plan.needs,
            observe=plan.observe, roles=plan.line_roles, independent_questions=True if independent else None,
            line_tokens=LineTokens(encoding=ENCODING, counts=plan.tokens),
            description=f"MemoryAgentBench {src.name} row {row.index}: {len(chunks)} chunks of at most {size} tokens, "
                        f"{len(pairs)} questions{', each on its own' if independent else ''}",
            extra={"source": src.name, "split": row.split, "row": row.index, "chunk_size": size,
                   "chunks": len(chunks), "splitter": splitter()[0], "keypoints": [k for k in meta.keypoints or [] if k],
                   "questions": records,
                   "anchors": {str(line): list(a) for line, a in plan.answer_statements().items()}})

    def _oracle(self, src: Source, golds: list[str], question_id: str | None) -> str:
        """What a perfect answer says: the first gold (the ICL label bare); the gold movies' names as a numbered
        list (recommendation); that it was never told, for a LongMemEval abstention question (`_abs`)."""
        if src.family == "longmemeval" and (question_id or "").endswith("_abs"):
            return ABSTAIN
        if src.family == "recsys_redial":
            names = [self.movies.id_to_name.get(int(g)) if g.strip().isdigit() else None for g in golds]
            return "\n".join(f"{i + 1}. {n}" for i, n in enumerate(n for n in names if n))
        return golds[0] if golds else ""

    def answer_statements(self, example: TestExample) -> dict[int, tuple[int, int]] | None:
        return {int(line): (a[0], a[1]) for line, a in example.extra["anchors"].items()}

    def result_parts(self, example: TestExample) -> list[ResultPart]:
        src = SOURCES[example.extra["source"]]
        labels = {"source": src.name, "column": src.column, **({"competency": src.competency} if src.competency else {})}
        return [ResultPart(f"{k}", k, labels) for k in range(len(example.extra["questions"]))]

    # -- scoring ---------------------------------------------------------------------------------------------------
    @cached_property
    def movies(self) -> Movies:
        return Movies.from_entity2id(entity2id(self.params.data_dir))

    async def evaluate_with_judge(self, example: TestExample, questions: list[str], responses: list[str],
                                  judge: Judge | None) -> TestOutcome:
        src = SOURCES[example.extra["source"]]
        parts = []
        for k, q in enumerate(example.extra["questions"]):
            reply = responses[k] if k < len(responses) else ""
            parts.append(await self._score(src, q, reply, judge, example.extra.get("keypoints") or []))
        scored = [p for p in parts if not p.unscored]
        return TestOutcome(sum(p.score for p in scored), float(len(scored)), [], parts=parts, unscored=not scored)

    async def _score(self, src: Source, q: dict[str, Any], reply: str, judge: Judge | None,
                     keypoints: Sequence[str]) -> TestOutcome:
        reference = self.params.scoring == "reference"
        golds = list(q["golds"])
        if src.metric in RULES:
            r = rule_score(src.family, RULES[src.metric], reply, golds, self.params.scoring)
            return TestOutcome(0.0, 1.0, [r.reason], unscored=True) if r.score is None \
                else TestOutcome(r.score, 1.0, [r.reason])
        if src.metric == "Recall@5":
            got = recall_at(reply, golds, self.movies, reference)
            if isinstance(got, str):
                return TestOutcome(0.0, 1.0, [f"unscored: {got}"], unscored=True)
            recall, snapped, names = got
            return TestOutcome(recall[5], 1.0, [f"Recall@5 {recall[5]:g} (@1 {recall[1]:g}, @10 {recall[10]:g}); gold "
                                                f"{names[:3]}, top five {snapped[:5]}"])
        if src.metric == "LME judge":
            lq = lme_question(q["question"], golds, q.get("question_id"), q.get("question_type"), reference)
            scored = await lme_score(lq, reply, judge, self.params.reference_prompts)
            if scored.score is None:
                return TestOutcome(0.0, 1.0, [scored.reason], unscored=True)
            return TestOutcome(scored.score, 1.0, [f"{scored.by}: {scored.reason}"],
                               verdicts=[scored.verdict] if scored.verdict else [])
        if judge is None:
            return TestOutcome(0.0, 1.0, ["unscored: a summary is scored by the judge (run with --judge MODEL, or "
                                          "rescore the run with one)"], unscored=True)
        score, reason, verdicts = await summary_score(judge, q["question"], golds, keypoints, reply, reference)
        if score is None:
            return TestOutcome(0.0, 1.0, [reason], unscored=True, verdicts=verdicts)
        return TestOutcome(score, 1.0, [reason], verdicts=verdicts)

    def summary_metrics(self, examples: Sequence[TestExample], results: Sequence[ResultView]) -> dict[str, float]:
        """Beside the headline: the reference's secondary numbers found in the reasons (EventQA's `eventqa_recall`,
        Recall@1 and @10 of the recommendations), then the paper's Table 3 rows named in `published`, for the
        competencies and columns this run played, on our 0..1 scale and marked as theirs."""
        played = {s.competency for s in self.chosen if s.competency}
        columns = {s.column for s in self.chosen if s.competency}
        out: dict[str, float] = {}
        for name, pattern in _SECONDARY.items():
            found = [float(m.group(1)) for r in results if r.status == "ok"
                     for reason in getattr(r, "reasons", []) or [] if (m := pattern.search(str(reason)))]
            if found:
                out[name] = sum(found) / len(found)
        for agent in self.params.published:
            row = table3.published(agent)
            for c in COMPETENCIES:
                if c in played:
                    out[f"published, not ours: {agent} · {c}"] = row[table3.COMPETENCY_COLUMN[c]]
            for col in COLUMNS:
                if col in columns and col in row:
                    out[f"published, not ours: {agent} · {col}"] = row[col]
            if played == set(COMPETENCIES):
                out[f"published, not ours: {agent} · overall"] = row["All"]
        return out


def _at(values: list[str | None] | None, k: int) -> str | None:
    return values[k] if values is not None and k < len(values) else None


class _GoldFinder:
    """Which chunk last holds a gold (case-insensitive): the question's memory distance is measured from there."""

    def __init__(self, chunks: list[str]) -> None:
        self.starts: list[int] = []
        pos = 0
        for c in chunks:
            self.starts.append(pos)
            pos += len(c) + 1
        self.text = "\x00".join(chunks).lower()

    def last_holding(self, golds: Sequence[str]) -> int | None:
        found = [self.text.rfind(g.lower()) for g in golds if len(g.strip()) >= 2]
        at = max(found, default=-1)
        return None if at < 0 else bisect.bisect_right(self.starts, at) - 1
