"""Tables a reader can follow (issue 32.4): test ids in natural order, numbers formatted one way, no memory span or
information gaps where a benchmark is asked question by question, no "(40.2x span 4k)" where the span is ignored,
and names in terminal columns never split mid-word."""

from __future__ import annotations

import io
from types import SimpleNamespace

from rich.console import Console

from ltm_harness._cli.progress import progress_span
from ltm_harness._cli.tables import report_table
from ltm_harness._report.labels import count_text, metric_text
from ltm_harness._report.page import payload_of_test
from ltm_harness._report.tables import AgentRow, DatasetRow, sort_key_of_test
from ltm_harness._results.models import GapMeasure, TestResult


def test_test_ids_sort_as_a_reader_counts():
    ids = ["q10", "q2", "q1", "conv-26.q17", "conv-26.q9", "conv-3.q1", "q100"]
    assert sorted(ids, key=lambda i: sort_key_of_test("d", i)) == [
        "conv-3.q1", "conv-26.q9", "conv-26.q17", "q1", "q2", "q10", "q100"]


def test_numbers_are_formatted_one_way():
    assert [metric_text(v) for v in (1.0, 0.0, 0.25, None)] == ["1.00", "0.00", "0.25", "-"]  # never "F1 1"
    assert metric_text(1540.0) == "1,540" and count_text(1.0) == "1" and count_text(0.5) == "0.5"


def _result(dataset: str) -> TestResult:
    return TestResult(dataset=dataset, example_id="conv-1.q3", status="ok", score=1.0, max_score=1.0, reasons=[],
                      questions=["q?"], responses=["a"], expected=["a"], memory_span=4000,
                      gaps=[GapMeasure(line=3, target_tokens=100, achieved_tokens=99)], start_turn=0, end_turn=1,
                      tokens=10)


def test_a_benchmark_asked_question_by_question_shows_no_span_or_gaps():
    goodai = payload_of_test(_result("colours"), None)
    assert goodai["span"] == 4000 and goodai["gaps"]
    locomo = payload_of_test(_result("locomo"), None, spans=False)
    assert locomo["span"] is None and locomo["gaps"] == [] and locomo["target"] is None and locomo["achieved"] is None


def test_the_progress_names_no_span_a_benchmark_ignores():
    def dataset(span: int, ignores: bool) -> SimpleNamespace:
        return SimpleNamespace(memory_span=span, ignored_settings=lambda: {"memory_span": ("", {})} if ignores else {})

    assert progress_span([dataset(4000, True)]) is None  # LoCoMo in reference mode
    assert progress_span([dataset(4000, True), dataset(2000, False)]) == 2000
    assert progress_span([]) is None


def _agent(label: str) -> AgentRow:
    zero = dict(benchmark_score=0.5, max_benchmark_score=1, benchmark_share=0.5, benchmark_datasets_scored=1,
                ltm_score=0.0, ltm_score_tests=0, tests=1, scored=1, unscored=0, errored=0, turns=1, filler_turns=0,
                conversation_tokens=1, agent_prompt_tokens=0, agent_completion_tokens=0, agent_tokens=0, cost_usd=0.0,
                total_cost_usd=0.0, cost_agent_usd=None, cost_judge_usd=None, cost_generation_usd=None,
                cost_test_usd=None, llm_calls=None, llm_retries=None, wall_seconds=0.0)
    return AgentRow(run="r", agent=label, label=label, **zero)


def test_terminal_columns_never_split_a_name_mid_word():
    labels = ["mem0-published · locomo-mem0", "retrieval · locomo", "openai:gpt-4o-mini@8k · locomo-live",
              "mem0-published · locomo-mem0-again"]
    rows = [DatasetRow(run="r", agent=a, label=a, dataset="locomo", metric="F1", tests=1, scored=1, unscored=0,
                       errored=0, score=0.5, std=0.0, target_gap=None, achieved_gap=None) for a in labels]
    console = Console(file=io.StringIO(), width=80)
    console.print(report_table("t", [_agent(a) for a in labels], rows, width=80))
    text = console.file.getvalue()  # type: ignore[attr-defined]
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80  # the table fits
    cells = [c.strip() for line in lines for c in line.replace("┃", "│").split("│")]
    pieces = {p for c in cells for p in c.split()}
    # names wrap at spaces and after hyphens, never inside a word: never "mem0-publishe" and "d"
    assert {"mem0-", "published", "locomo-"} <= pieces and not any(p in pieces for p in ("publishe", "d", "mem0-publishe"))
