"""Test suites: cases run one after another; results in the aiVLE JSON schema.

`TestSuite(suite_id, cases).run(create_agent)` returns plain JSON data,
`{"suite_id": ..., "results": [{"case_id": ..., "result": {"name", "detail", "value", "error"}}]}`,
that survives `json.dumps` / `json.loads` unchanged; errors are strings.
"""

from __future__ import annotations

import types
from typing import Any, Callable, Iterator, Sequence

from pydantic import BaseModel

from ltm_harness._protocols.aivle.evaluator import EvaluationResult
from ltm_harness._protocols.aivle.agent import ChatAgents
from ltm_harness._protocols.aivle.testcase import CreateAgent, TestCase
from ltm_harness._protocols.aivle.worker import run_sync
from ltm_harness._errors import ConfigError, DefinitionError
from ltm_harness._registry.core import Entry, Registry


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


def _accept(obj: Any, where: str) -> Iterator[Entry[Any]]:
    """A TestSuite, a function without arguments returning one, or a module with a `suite` (or `build_suite`)."""
    if isinstance(obj, TestSuite):
        yield Entry(obj.suite_id, obj, where)
    elif isinstance(obj, types.ModuleType):
        found = getattr(obj, "suite", None) or getattr(obj, "build_suite", None)
        if found is None:
            raise DefinitionError(f"{where}: the module has no `suite`; write MODULE:NAME")
        yield from _accept(found, where)
    elif callable(obj):
        yield Entry("", obj, where)
    else:
        raise DefinitionError(f"{where} is a {type(obj).__name__}, not a TestSuite or a function returning one; "
                              "give MODULE:NAME of a suite")


def _builtins() -> Iterator[Entry[Any]]:
    from ltm_harness.aivle.examples import build_suite

    yield Entry("text-envs", build_suite, "built-in", "three cases of the built-in text environments")


SUITES: Registry[Any] = Registry("suite", "ltm_harness.suites", _accept, builtins=_builtins, spec_default="suite",
                                 error=ConfigError, hint="or give MODULE:NAME or path/to/file.py:NAME")


def register_suite(name: str, suite: "TestSuite | Callable[[], TestSuite]") -> None:
    """Make a suite (or a function building it) known by `name` to the `suite` command of this process."""
    SUITES.register(suite, f"code in {getattr(suite, '__module__', '?')}", name=name)


def load_suite(spec: str) -> TestSuite:
    """A suite by name (built-in, registered, from a package) or by spec: `MODULE:NAME` or `path/to/file.py:NAME`
    (NAME defaults to `suite`), a TestSuite object or a function without arguments that returns one."""
    obj = SUITES.find(spec)
    if isinstance(obj, TestSuite):
        return obj
    try:
        made = obj()
    except Exception as exc:
        raise DefinitionError(f"{spec}: building the suite failed ({type(exc).__name__}: {exc}); fix the suite "
                              "factory") from exc
    if isinstance(made, TestSuite):
        return made
    raise DefinitionError(f"{spec}() returned {type(made).__name__}, not a TestSuite; make it return one")
