"""A reference benchmark's Python source, read for its prompts and never run: LongMemEval's `evaluate_qa.py`, BEAM's
`prompts.py` and `compute_metrics.py`, from a checkout the user names (`--reference-prompts`).

One way in for every such file: it is checked to be a regular file of bounded size before it is opened (a FIFO, a
device or a folder is named as what it is, and never blocks), and a source Python's own parser cannot hold (nested
past its limits: `RecursionError`, `MemoryError`) is one line like any other unreadable file. What is read from the
tree follows Python's own rule for names: of a name defined twice at the top level, the last definition is the one.
"""

from __future__ import annotations

import ast
from pathlib import Path

from ltm_harness._errors import DefinitionError
from ltm_harness._guard.files import read_text
from ltm_harness._guard.limits import exception_line


def parse_source(path: Path, project: str, clone: str, max_bytes: int) -> ast.Module:
    """The parsed file; a DefinitionError in one line naming the file and what to give instead (`project`: the
    checkout's name, "LongMemEval"; `clone`: its repository's URL)."""
    try:
        source = read_text(path, max_bytes)  # checked to be a regular file of bounded size before opening
    except FileNotFoundError:
        raise DefinitionError(f"{path} does not exist; name the folder of a {project} checkout (git clone "
                              f"{clone})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DefinitionError(f"{path}: cannot be read ({getattr(exc, 'strerror', None) or exc}); name a {project} "
                              "checkout") from None
    try:
        return ast.parse(source, filename=str(path))
    except (SyntaxError, ValueError) as exc:
        raise DefinitionError(f"{path}: not Python this version can parse ({exception_line(exc, 160)}); name a "
                              f"{project} checkout") from None
    except (RecursionError, MemoryError):
        raise DefinitionError(f"{path}: nested too deeply for Python's parser (an expression or a chain of branches "
                              f"far deeper than {project}'s source has); name a {project} checkout") from None


def last_function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    """The top-level function `name` as Python would call it: its last definition (None: there is none)."""
    found = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name]
    return found[-1] if found else None


def last_assignment(tree: ast.Module, name: str) -> ast.Assign | None:
    """The top-level `name = ...` that holds when the module has run: its last assignment (None: there is none)."""
    found = [node for node in tree.body if isinstance(node, ast.Assign) and len(node.targets) == 1
             and isinstance(node.targets[0], ast.Name) and node.targets[0].id == name]
    return found[-1] if found else None
