"""The private packages stay layered as docs/architecture.md draws them: every import (at the top of a module, inside
a function or for type checking) points to a package lower in the table, and no modules import each other in a
circle."""

from __future__ import annotations

import ast
from pathlib import Path

import ltm_harness

ROOT = Path(ltm_harness.__file__).parent
# top to bottom, as in docs/architecture.md; the public faces (ltm_harness, envs, aivle, testing) may import anything
LAYERS = ["_cli", "_grid", "_api", "_report", "_protocols", "_interop", "_runner", "_envs", "_stats", "_results", "_authoring", "_engine",
          "_agents", "_llm", "_registry", "_store", "_scoring", "_resources", "_tokens", "_guard", "_errors"]


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the modules of the package at `root` it imports, read from its source with `ast` (nothing is
    imported). Every import statement counts, wherever it is: at the top, inside a function (a lazy import is still
    a dependency, and a circle through one is still a circle), under `if TYPE_CHECKING:`. `from P import x` is an
    import of the module `P.x` when there is one, else of `P`; `import P.Q` of `P.Q`; relative imports are resolved.
    Imports by name at run time (`importlib.import_module("...")`) are not seen."""
    paths = {_module_name(p, root): p for p in root.rglob("*.py") if "_shipped" not in p.parts}

    def known(name: str) -> str | None:  # the module itself, or the package that defines the name
        while name and name not in paths:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        targets: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(known(a.name) for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([base] if base else []))
                targets.update(f"{base}.{a.name}" if f"{base}.{a.name}" in paths else known(base) for a in node.names)
        graph[module] = {t for t in targets if t is not None and t != module}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The modules that import each other in a circle, directly or through others: each strongly connected component
    of more than one module (Tarjan's algorithm), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(cycles)


def _imports() -> dict[str, set[str]]:
    return import_graph(ROOT)


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def test_every_private_package_is_in_the_table():
    on_disk = {p.stem if p.suffix == ".py" else p.name for p in ROOT.iterdir()
               if p.name.startswith("_") and not p.name.startswith("__") and p.name != "_shipped"
               and (p.suffix == ".py" or (p / "__init__.py").is_file())}
    assert on_disk == set(LAYERS)


def test_imports_only_point_down_the_layers():
    upward = []
    for module, targets in _imports().items():
        layer = _layer(module)
        if layer is None:
            continue
        for target in targets:
            other = _layer(target)
            if other is not None and other != layer and LAYERS.index(other) < LAYERS.index(layer):
                upward.append(f"{module} imports {target}")
    assert upward == []


def test_no_modules_import_each_other_in_a_circle():
    assert import_cycles(_imports()) == []


def test_the_cycle_finder_sees_circles_through_lazy_relative_and_package_imports(tmp_path: Path):
    pkg = tmp_path / "pkg"
    files = {
        "__init__.py": "",
        "a.py": "from pkg import b\n",  # a -> b (a module named in a `from package import`)
        "b.py": "def f():\n    from .c import g\n",  # b -> c (lazy, relative)
        "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\ndef g(): ...\n",  # c -> a
        "d.py": "import pkg.a\n",  # d -> a, in no circle
        "sub/__init__.py": "from pkg.sub.e import E\n",  # the package -> e
        "sub/e.py": "from pkg.sub import helper\nclass E: ...\n",  # e -> the package (helper is no module)
    }
    for name, text in files.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text)
    assert import_cycles(import_graph(pkg)) == [["pkg.a", "pkg.b", "pkg.c"], ["pkg.sub", "pkg.sub.e"]]
