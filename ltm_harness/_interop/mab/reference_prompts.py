"""The reference's own wrappers and query templates, read from a MemoryAgentBench checkout the user names
(`--reference-prompts PATH` or `args: {reference_prompts: PATH}`): `utils/templates.py`'s `BASE_TEMPLATES`, parsed
by Python's `ast` (`ast.literal_eval` of the assignment), never imported or run. The long-context agent's query
variant is used (the one an agent that answers from everything it was told gets), each `memorize` text said as one
history turn as the reference's long-context agent appends it (its `{time_stamp}` left empty: no wall clock)."""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

from ltm_harness._errors import DefinitionError
from ltm_harness._interop.mab.templates import Templates
from ltm_harness._interop.reference_source import last_assignment, parse_source

FILE = "utils/templates.py"
CLONE = "https://github.com/HUST-AI-HYZ/MemoryAgentBench"
VARIANT = "long_context_agent"
MAX_BYTES = 1 << 20


def is_mab_checkout(path: Path) -> bool:
    return (path / FILE).is_file() and (path / "conversation_creator.py").is_file()


@lru_cache(maxsize=4)
def load_reference_templates(checkout: Path) -> dict[str, Templates]:
    """family -> the reference's Templates; one DefinitionError line when the checkout does not hold them."""
    path = checkout / FILE
    tree = parse_source(path, "MemoryAgentBench", CLONE, MAX_BYTES)
    node = last_assignment(tree, "BASE_TEMPLATES")
    if node is None:
        raise DefinitionError(f"{path}: defines no BASE_TEMPLATES; name a MemoryAgentBench checkout (git clone {CLONE})")
    resolved = _resolve_names(tree, node.value)
    try:
        data = ast.literal_eval(resolved)
    except (ValueError, TypeError, SyntaxError, RecursionError) as exc:
        raise DefinitionError(f"{path}: BASE_TEMPLATES is not a plain literal ({str(exc)[:80]}); name a "
                              "MemoryAgentBench checkout") from None
    out: dict[str, Templates] = {}
    try:
        for family, entry in data.items():
            query = entry["query"][VARIANT] if isinstance(entry["query"], dict) else entry["query"]
            out[str(family)] = Templates(memorize=str(entry["memorize"]), ack="", query=str(query))
    except (KeyError, TypeError, AttributeError) as exc:
        raise DefinitionError(f"{path}: BASE_TEMPLATES is not shaped as MemoryAgentBench's (missing {exc}); name a "
                              "MemoryAgentBench checkout") from None
    return out


def _resolve_names(tree: ast.Module, expr: ast.expr) -> ast.expr:
    """`expr` with top-level string constants it names (e.g. SYSTEM_MESSAGE) put in place, so it is a literal."""

    class Inline(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            found = last_assignment(tree, node.id)
            if found is not None and isinstance(found.value, ast.Constant) and isinstance(found.value.value, str):
                return ast.copy_location(ast.Constant(found.value.value), node)
            return node

    return Inline().visit(expr)
