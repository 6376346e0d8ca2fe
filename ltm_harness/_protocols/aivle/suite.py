"""Test suites: cases run one after another; results in the aiVLE JSON schema.

`TestSuite(suite_id, cases).run(create_agent)` returns plain JSON data,
`{"suite_id": ..., "results": [{"case_id": ..., "result": {"name", "detail", "value", "error"}}]}`,
that survives `json.dumps` / `json.loads` unchanged; errors are strings.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from pydantic import BaseModel

from ltm_harness._protocols.aivle.evaluator import EvaluationResult
from ltm_harness._protocols.aivle.agent import ChatAgents
from ltm_harness._protocols.aivle.testcase import CreateAgent, TestCase
from ltm_harness._protocols.aivle.worker import run_sync


class CaseResult(BaseModel):
    case_id: str
    result: EvaluationResult


class SuiteResult(BaseModel):
    suite_id: str
    results: list[CaseResult]

    def to_json_data(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class TestSuite:
    __test__ = False

    def __init__(self, suite_id: str, cases: Sequence[TestCase]) -> None:
        if not isinstance(suite_id, str) or not suite_id:
            raise ValueError("suite_id must be a non-empty string")
        seen: set[str] = set()
        for case in cases:
            if not isinstance(case, TestCase):
                raise ValueError(f"suite {suite_id!r}: every case must be a TestCase, not {type(case).__name__}")
            if case.case_id in seen:
                raise ValueError(f"suite {suite_id!r}: case_id {case.case_id!r} is used twice; give each case its own id")
            seen.add(case.case_id)
        if not cases:
            raise ValueError(f"suite {suite_id!r} has no cases")
        self.suite_id = suite_id
        self.cases = list(cases)

    async def run_async(self, create_agent: CreateAgent | ChatAgents,
                        on_case: Callable[[TestCase, EvaluationResult], None] | None = None) -> SuiteResult:
        """Run every case in order (each with its own agent from `create_agent(**agent_init)`)."""
        results = []
        for case in self.cases:
            result = await case.run_async(create_agent)
            results.append(CaseResult(case_id=case.case_id, result=result))
            if on_case is not None:
                on_case(case, result)
        return SuiteResult(suite_id=self.suite_id, results=results)

    def run(self, create_agent: CreateAgent | ChatAgents) -> dict[str, Any]:
        """The suite's results as JSON data in the aiVLE schema (from any thread)."""
        return run_sync(lambda: self.run_async(create_agent)).to_json_data()
