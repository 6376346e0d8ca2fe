"""The private packages stay layered as docs/architecture.md draws them: every import (at the top of a module, inside
a function or for type checking) points to a package lower in the table, and no modules import each other in a
circle."""

from __future__ import annotations

import ast
from pathlib import Path

import ltm_harness

ROOT = Path(ltm_harness.__file__).parent
# top to bottom, as in docs/architecture.md; the public faces (ltm_harness, envs, aivle, testing) may import anything
LAYERS = ["_cli", "_grid", "_api", "_report", "_protocols", "_interop", "_runner", "_envs", "_results", "_authoring", "_engine",
          "_agents", "_llm", "_registry", "_store", "_scoring", "_resources", "_tokens", "_guard", "_errors"]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports() -> dict[str, set[str]]:
    """Module -> the ltm_harness modules it imports (anywhere in its code)."""
    found: dict[str, set[str]] = {}
    for path in ROOT.rglob("*.py"):
        if "_shipped" in path.parts:
            continue
        name = _module_name(path)
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module.startswith("ltm_harness"):
                    targets.add(node.module)
            elif isinstance(node, ast.Import):
                targets.update(a.name for a in node.names if a.name.startswith("ltm_harness"))
        found[name] = targets
    return found


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
    graph = _imports()
    known = set(graph)

    def resolve(target: str) -> str | None:  # `from ltm_harness._x import y` may name a module or a package
        while target and target not in known:
            target = target.rpartition(".")[0]
        return target or None

    edges = {m: {r for t in ts if (r := resolve(t)) and r != m and not m.startswith(r + ".")} for m, ts in graph.items()}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    private_cycles = [c for c in cycles if all(_layer(m) for m in c)]
    assert private_cycles == []
