"""Test suites: cases run one after another; results in the aiVLE JSON schema.

`TestSuite(suite_id, cases).run(create_agent)` returns plain JSON data,
`{"suite_id": ..., "results": [{"case_id": ..., "result": {"name", "detail", "value", "error"}}]}`,
that survives `json.dumps` / `json.loads` unchanged; errors are strings.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from pydantic import BaseModel

from ltm_harness._protocols.aivle.evaluator import EvaluationResult
from ltm_harness._protocols.aivle.agent import ChatAgents
from ltm_harness._protocols.aivle.testcase import CreateAgent, TestCase
from ltm_harness._protocols.aivle.worker import run_sync
from ltm_harness._errors import DefinitionError


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


def _load_module(target: str) -> Any:
    if target.endswith(".py") or "/" in target or "\\" in target:
        path = Path(target).resolve()
        if not path.is_file():
            raise DefinitionError(f"suite module {target!r} not found; give an importable module or a .py file")
        name = "ltm_harness_suite_" + hashlib.sha256(str(path).encode()).hexdigest()[:12]
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise DefinitionError(f"{path}: cannot be loaded as a Python module; give a .py file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[name]
            raise DefinitionError(f"{path}: failed to import ({type(exc).__name__}: {exc}); fix the suite module") from exc
        return module
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as exc:
        raise DefinitionError(f"cannot import suite module {target!r} ({exc}); give an importable module or a .py file") from None
    except Exception as exc:
        raise DefinitionError(f"suite module {target!r} failed to import ({type(exc).__name__}: {exc}); fix it") from exc


def load_suite(spec: str) -> TestSuite:
    """`MODULE:NAME` or `path/to/file.py:NAME` (NAME defaults to `suite`): a TestSuite object or a
    function without arguments that returns one."""
    target, sep, attr = spec.rpartition(":")
    if not sep or not target or "/" in attr or "\\" in attr or attr.endswith(".py"):
        target, attr = spec, "suite"
    module = _load_module(target)
    if not hasattr(module, attr):
        found = sorted(k for k, v in vars(module).items() if isinstance(v, TestSuite))
        hint = f"; suites in it: {', '.join(found)}" if found else ""
        raise DefinitionError(f"{target} has no {attr!r}{hint}; write MODULE:NAME")
    obj = getattr(module, attr)
    if isinstance(obj, TestSuite):
        return obj
    if callable(obj):
        try:
            made = obj()
        except Exception as exc:
            raise DefinitionError(f"{target}:{attr}() failed ({type(exc).__name__}: {exc}); fix the suite factory") from exc
        if isinstance(made, TestSuite):
            return made
        raise DefinitionError(f"{target}:{attr}() returned {type(made).__name__}, not a TestSuite; make it return one")
    raise DefinitionError(f"{target}:{attr} is a {type(obj).__name__}, not a TestSuite or a function returning one; "
                    "give MODULE:NAME of a suite")
