"""Results derived from an event log: the events are the single source of truth of a session.

`results_from_events` rebuilds every test's result from its turns (what was said and answered, where
and when), its start and end events (span, score, reasons) and its definition; it must equal what the
session wrote to results.json.
"""

from __future__ import annotations

from dataclasses import dataclass

from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._store.events import Event, SessionStart, TestEnd, TestStart, TurnEvent
from ltm_harness._authoring.example import TestExample
from ltm_harness._results.models import TestResult, measure_gaps
from ltm_harness._engine.tokens import get_tokenizer


@dataclass(slots=True)
class _Line:
    pos: int
    planned: int
    tokens: int
    text: str
    is_question: bool


def results_from_events(events: list[Event], examples: dict[str, TestExample],
                        datasets: dict[str, DatasetInterface]) -> list[TestResult]:
    """The results of one session's log; `examples` by unique id, `datasets` by name."""
    start = next((e for e in events if isinstance(e, SessionStart)), None)
    if start is None:
        raise ValueError("the event log has no session_start event")
    count = get_tokenizer(start.tokenizer).count
    starts: dict[str, TestStart] = {}
    lines: dict[str, list[_Line]] = {}
    asked: dict[str, list[TurnEvent]] = {}
    results = []
    for e in events:
        if isinstance(e, TestStart):
            starts[e.test] = e
            lines[e.test], asked[e.test] = [], []
        elif isinstance(e, TurnEvent) and e.kind == "test" and e.test is not None:
            lines[e.test].append(_Line(e.pos, e.planned or 0, e.user_tokens, e.user, e.question))
            if e.question:
                asked[e.test].append(e)
        elif isinstance(e, TestEnd):
            example = examples[e.test]
            dataset = datasets[example.dataset_name]
            began = starts.get(e.test) or TestStart(  # never started: its session stopped first (session_aborted)
                test=e.test, turn=e.turn, pos=e.pos, time=e.time, span=dataset.memory_span)
            results.append(TestResult(
                dataset=example.dataset_name,
                example_id=example.example_id,
                status=e.status,
                score=e.score,
                max_score=e.max_score,
                reasons=e.reasons,
                verdicts=e.verdicts,
                questions=[t.user for t in asked.get(e.test, [])],
                responses=[t.reply for t in asked.get(e.test, [])],
                expected=example.expected_responses,
                memory_span=began.span,
                gaps=measure_gaps(lines.get(e.test, []), dataset.answer_statement_idx(example), count, start.isolated,
                                  dataset.gap_questions(example)),
                start_turn=began.turn,
                end_turn=e.turn,
                tokens=e.pos - began.pos,
            ))
    return results
