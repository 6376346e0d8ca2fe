"""Results derived from an event log: the events are the single source of truth of a session.

`ResultsBuilder` rebuilds every test's result from its turns (what was said and answered, where and when), its
start and end events (span, score, reasons) and its definition. It is the one place a `TestResult` is made: a
running session feeds it each event as it is written, and `results_from_events` feeds it a log read from disk,
so the results of a run and those rebuilt from its logs are the same by construction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from pydantic import BaseModel

from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._authoring.example import TestExample
from ltm_harness._tokens import get_tokenizer
from ltm_harness._results.models import GapMeasure, TestResult, measure_gaps
from ltm_harness._scoring.verdict import JudgeVerdict
from ltm_harness._store.events import SessionStart, Status, TestEnd, TestStart, TurnEvent


@dataclass(slots=True)
class _Line:
    pos: int
    planned: int
    tokens: int
    text: str
    is_question: bool


@dataclass(slots=True)
class _Running:
    start: TestStart
    lines: list[_Line] = field(default_factory=list)
    asked: list[TurnEvent] = field(default_factory=list)


class ResultsBuilder:
    """The results of one session, built event by event; `examples` by unique id, `datasets` by name."""

    def __init__(self, examples: Mapping[str, TestExample], datasets: Mapping[str, DatasetInterface]) -> None:
        self.examples = examples
        self.datasets = datasets
        self.results: list[TestResult] = []
        self._count: Callable[[str], int] | None = None
        self._isolated = False
        self._running: dict[str, _Running] = {}

    def add(self, event: BaseModel) -> None:
        if isinstance(event, TurnEvent):
            if event.kind == "test" and event.test is not None:
                running = self._running[event.test]
                running.lines.append(_Line(event.pos, event.planned or 0, event.user_tokens, event.user, event.question))
                if event.question:
                    running.asked.append(event)
        elif isinstance(event, TestStart):
            self._running[event.test] = _Running(event)
        elif isinstance(event, TestEnd):
            self._end(event)
        elif isinstance(event, SessionStart):
            self._count = get_tokenizer(event.tokenizer).count
            self._isolated = event.isolated

    def _end(self, e: TestEnd) -> None:
        if self._count is None:
            raise ValueError("the event log has no session_start event")
        example = self.examples[e.test]
        dataset = self.datasets[example.dataset_name]
        running = self._running.pop(e.test, None) or _Running(TestStart(  # never started: its session stopped first
            test=e.test, turn=e.turn, pos=e.pos, time=e.time, span=dataset.memory_span))
        began = running.start
        gaps = measure_gaps(running.lines, dataset.answer_statement_idx(example), self._count, self._isolated,
                            dataset.gap_questions(example), dataset.needed_lines(example),
                            dataset.answer_statements(example))

        def result(example_id: str, status: Status, score: float, max_score: float, reasons: list[str],
                   verdicts: list[JudgeVerdict], asked: list[TurnEvent], expected: list[Any], gaps: list[GapMeasure],
                   labels: dict[str, str], raw_score: float | None = None, group: str | None = None) -> TestResult:
            return TestResult(dataset=example.dataset_name, example_id=example_id, status=status, score=score,
                              max_score=max_score, reasons=reasons, verdicts=verdicts, questions=[t.user for t in asked],
                              responses=[t.reply for t in asked], expected=expected, memory_span=began.span, gaps=gaps,
                              start_turn=began.turn, end_turn=e.turn, tokens=e.pos - began.pos, raw_score=raw_score,
                              labels=labels or None, group=group)

        parts = dataset.result_parts(example)
        if not parts:
            self.results.append(result(example.example_id, e.status, e.score, e.max_score, e.reasons, e.verdicts,
                                       running.asked, example.expected_responses, gaps,
                                       dataset.result_labels(example), e.raw_score))
            return
        # A test scored question by question: one result per part, each with its question's gap; a test that ended
        # without part scores (errored, or its session stopped) errors every part with its reasons.
        question_lines = [i for i, line in enumerate(running.lines) if line.is_question]
        by_line: dict[int, list[GapMeasure]] = {}
        for gap in gaps:
            by_line.setdefault(gap.line, []).append(gap)
        for k, part in enumerate(parts):
            q = part.question
            end = e.parts[k] if e.parts is not None and k < len(e.parts) else None
            line = question_lines[q] if q < len(question_lines) else -1
            self.results.append(result(
                f"{example.example_id}.{part.id}", end.status if end else e.status, end.score if end else 0.0,
                end.max_score if end else 1.0, end.reasons if end else e.reasons, end.verdicts if end else [],
                running.asked[q:q + 1], example.expected_responses[q:q + 1], by_line.get(line, []),
                dict(part.labels), group=example.example_id))


def results_from_events(events: Iterable[BaseModel], examples: Mapping[str, TestExample],
                        datasets: Mapping[str, DatasetInterface]) -> list[TestResult]:
    """The results of one session's log; `examples` by unique id, `datasets` by name."""
    builder = ResultsBuilder(examples, datasets)
    for event in events:
        builder.add(event)
    if builder._count is None:
        raise ValueError("the event log has no session_start event")
    return builder.results
