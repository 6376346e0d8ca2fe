"""The built-in datasets are known by name before their modules are loaded: the names read line by line from their
sources are exactly those a parse of the source gives."""

from __future__ import annotations

import ast
from pathlib import Path

from ltm_harness._authoring.catalog import _class_names
from ltm_harness._resources import shipped


def _parsed(path: Path) -> list[str]:
    """The `name = "..."` assignments at the top of each top-level class body, by Python's own parser."""
    return [stmt.value.value for node in ast.parse(path.read_bytes()).body if isinstance(node, ast.ClassDef)
            for stmt in node.body if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str) and any(isinstance(t, ast.Name) and t.id == "name" for t in stmt.targets)]


def test_every_built_in_module_gives_the_names_its_parse_gives():
    modules = [p for p in sorted(shipped("datasets").glob("*.py")) if not p.name.startswith("_")]
    assert len(modules) > 10
    for path in modules:
        assert _class_names(path) == _parsed(path), path.name
    assert "locomo" in _class_names(shipped("datasets") / "locomo.py")


def test_names_outside_a_class_body_or_deeper_in_it_are_not_taken(tmp_path: Path):
    source = tmp_path / "m.py"
    source.write_text('''"""A module.
    name = "in-the-docstring"
"""
name = "module-level"


@decorated
class A(Base):  # a comment
    """Its doc."""

    name = 'a'  # the name
    other = "x"

    def f(self):
        name = "local"


def g():
    name = "in-a-function"


class B:
    class Inner:
        name = "inner"
    name: str = "annotated"
    name = "b"
''')
    assert _class_names(source) == _parsed(source) == ["a", "b"]
