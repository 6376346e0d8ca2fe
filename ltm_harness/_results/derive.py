"""Results derived from an event log: the events are the single source of truth of a session.

`ResultsBuilder` rebuilds every test's result from its turns (what was said and answered, where and when), its
start and end events (span, score, reasons) and its definition. It is the one place a `TestResult` is made: a
running session feeds it each event as it is written, and `results_from_events` feeds it a log read from disk,
so the results of a run and those rebuilt from its logs are the same by construction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

from pydantic import BaseModel

from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._authoring.example import TestExample
from ltm_harness._tokens import get_tokenizer
from ltm_harness._results.models import TestResult, measure_gaps
from ltm_harness._store.events import SessionStart, TestEnd, TestStart, TurnEvent


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
        self.results.append(TestResult(
            dataset=example.dataset_name,
            example_id=example.example_id,
            status=e.status,
            score=e.score,
            max_score=e.max_score,
            reasons=e.reasons,
            verdicts=e.verdicts,
            questions=[t.user for t in running.asked],
            responses=[t.reply for t in running.asked],
            expected=example.expected_responses,
            memory_span=began.span,
            gaps=measure_gaps(running.lines, dataset.answer_statement_idx(example), self._count, self._isolated,
                              dataset.gap_questions(example), dataset.needed_lines(example)),
            start_turn=began.turn,
            end_turn=e.turn,
            tokens=e.pos - began.pos,
            raw_score=e.raw_score,
        ))


def results_from_events(events: Iterable[BaseModel], examples: Mapping[str, TestExample],
                        datasets: Mapping[str, DatasetInterface]) -> list[TestResult]:
    """The results of one session's log; `examples` by unique id, `datasets` by name."""
    builder = ResultsBuilder(examples, datasets)
    for event in events:
        builder.add(event)
    if builder._count is None:
        raise ValueError("the event log has no session_start event")
    return builder.results
