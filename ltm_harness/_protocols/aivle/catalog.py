"""Suites by name: the built-in example, those registered in code or by installed packages (`ltm_harness.suites`
entry points), and specs (`module:NAME`, `path/to/file.py:NAME`, NAME defaulting to `suite`)."""

from __future__ import annotations

import types
from typing import Any, Callable, Iterator

from ltm_harness._errors import ConfigError, DefinitionError
from ltm_harness._protocols.aivle.suite import TestSuite
from ltm_harness._registry.core import Entry, Registry
from ltm_harness._registry.loading import code_source
from ltm_harness._protocols.aivle.examples import build_suite


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
    yield Entry("text-envs", build_suite, "built-in", "three cases of the built-in text environments")


SUITES: Registry[Any] = Registry("suite", "ltm_harness.suites", _accept, builtins=_builtins, spec_default="suite",
                                 error=ConfigError, hint="or give MODULE:NAME or path/to/file.py:NAME")


def register_suite(name: str, suite: "TestSuite | Callable[[], TestSuite]") -> None:
    """Make a suite (or a function building it) known by `name` to the `suite` command of this process."""
    SUITES.register(suite, code_source(suite), name=name)


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
