"""A second, independent mutation tool, with other operators than mutmut's (benchmarks/mutation.py).

Operators, each applied once per place inside a function body (docstrings, imports and `pass` left alone), and
the number literals of module and class constants:
- `delete`: a statement replaced by `pass` (a whole `if`, loop or `with` with its block, or a single line);
- `return-none`: `return X` becomes `return None`;
- `+1` / `-1`: a number literal (not a bool) one more, one less.

Each mutant is the module's source with one span rewritten (found with `ast`, so the rest of the file is untouched),
written into a scratch copy of the package (the checkout is never changed); the given tests then run in a fresh
Python with that copy first on the path. A mutant is killed when the tests fail (or error, or do not finish
within `--timeout`), else it survived: a gap in the tests, or an equivalent change (say why in a comment).

    python benchmarks/mutation_ops.py ltm_harness/_engine/scheduler.py --tests tests/core/test_scheduler.py
    python benchmarks/mutation_ops.py ltm_harness/_engine/placement.py ltm_harness/_engine/scheduler.py \\
        --tests tests/core/test_scheduler.py tests/core/test_placement.py --sample 60 --seed 1 --budget 900
    python benchmarks/mutation_ops.py MODULE --tests TESTS --list      # the mutants only, nothing run
    python benchmarks/mutation_ops.py MODULE --tests TESTS --only "scheduler.py:113 "   # those of line 113

`--sample N --seed S`: a seeded sample of N mutants over all the modules (the same sample for the same sources and
seed). `--budget S`: stop starting mutants after S seconds (those not run are counted apart, not as survivors).
`--timeout S`: per mutant (default: 3x the unmutated run, at least 20 s). Arguments after `--` go to pytest.
Prints per module: mutants run, killed, timed out (counted as killed), survived, the score (killed + timed out) /
run, and each survivor with its line.
"""

from __future__ import annotations

import argparse
import ast
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "ltm_harness"


@dataclass(frozen=True)
class Mutant:
    module: str  # path from the checkout's root
    line: int
    operator: str  # delete, return-none, +1, -1
    start: int  # byte offsets of the span replaced
    end: int
    text: bytes  # what replaces it
    shown: str  # the original, shortened, for the report

    def source(self, original: bytes) -> bytes:
        return original[:self.start] + self.text + original[self.end:]

    def __str__(self) -> str:
        return f"{self.module}:{self.line} {self.operator}: {self.shown}"


def _offsets(source: bytes) -> list[int]:
    """Byte offset of the start of each line (1-based lines: index 0 unused)."""
    starts = [0, 0]
    for i, byte in enumerate(source):
        if byte == 10:
            starts.append(i + 1)
    return starts


def mutants_of(module: str) -> list[Mutant]:
    source = (ROOT / module).read_bytes()
    tree = ast.parse(source)
    lines = _offsets(source)
    found: list[Mutant] = []

    def span(node: ast.AST) -> tuple[int, int]:
        return (lines[node.lineno] + node.col_offset,  # type: ignore[attr-defined]
                lines[node.end_lineno] + node.end_col_offset)  # type: ignore[attr-defined]

    def shown(node: ast.AST) -> str:
        start, end = span(node)
        first = source[start:end].decode().splitlines()[0].strip()
        return first if len(first) <= 70 else first[:67] + "..."

    def add(node: ast.AST, operator: str, text: str, at: ast.AST | None = None, said: str | None = None) -> None:
        start, end = span(at or node)
        found.append(Mutant(module, node.lineno, operator, start, end, text.encode(),  # type: ignore[attr-defined]
                            said or shown(node)))

    def visit_body(body: list[ast.stmt]) -> None:
        for stmt in body:
            docstring = isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
                and isinstance(stmt.value.value, str)
            if not (docstring or isinstance(stmt, (ast.Pass, ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal))):
                if len(body) > 1 or not isinstance(stmt, ast.Return):
                    add(stmt, "delete", "pass")
            if isinstance(stmt, ast.Return) and stmt.value is not None and not (
                    isinstance(stmt.value, ast.Constant) and stmt.value.value is None):
                add(stmt, "return-none", "None", at=stmt.value)
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt) \
                        and not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    visit_body(inner)
            for handler in getattr(stmt, "handlers", []):
                visit_body(handler.body)
            for case in getattr(stmt, "cases", []):
                visit_body(case.body)
        for stmt in body:  # number literals of this body's statements (nested functions get their own turn)
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                literals(stmt)

    def literals(stmt: ast.stmt) -> None:
        for node in _walk_shallow(stmt):
            if isinstance(node, ast.Constant) and type(node.value) in (int, float):
                line = source.splitlines()[node.lineno - 1].decode().strip()
                for delta, name in ((1, "+1"), (-1, "-1")):
                    add(node, name, repr(node.value + delta), said=f"{node.value!r} -> {node.value + delta!r} in "
                                                                   f"{line if len(line) <= 60 else line[:57] + '...'}")

    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            visit_body(node.body)
        elif isinstance(node, (ast.Module, ast.ClassDef)):  # constants: the literals of module and class assignments
            for stmt in node.body:
                if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                    literals(stmt)
    unique = {(m.start, m.end, m.text): m for m in found}  # a literal met through two bodies counts once
    return sorted(unique.values(), key=lambda m: (m.start, m.operator))


def _walk_shallow(stmt: ast.stmt):  # type: ignore[no-untyped-def]
    """The expression nodes of `stmt` itself: its nested statements' are reached as bodies of their own."""
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        yield node
        for name, value in ast.iter_fields(node):
            if name in ("body", "orelse", "finalbody", "handlers", "cases", "decorator_list", "returns") \
                    or name == "annotation":
                continue
            children = value if isinstance(value, list) else [value]
            stack.extend(child for child in children if isinstance(child, ast.AST) and not isinstance(child, ast.stmt))


def scratch() -> Path:
    """A copy of the package (mutants are written into it) beside links to the checkout's other top-level entries."""
    work = Path(tempfile.mkdtemp(prefix="ltm-mutation-ops-"))
    for entry in ROOT.iterdir():
        if entry.name in (".git", ".venv", "mutants", "results"):
            continue
        if entry.name == PACKAGE:
            shutil.copytree(entry, work / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (work / entry.name).symlink_to(entry)
    return work


def run_tests(work: Path, tests: list[str], pytest_args: list[str], timeout: float) -> str:
    env = {**os.environ, "PYTHONPATH": str(work), "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests,
                               *pytest_args], cwd=work, env=env, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout"
    return "survived" if done.returncode == 0 else "killed"


def main() -> None:
    argv = sys.argv[1:]
    pytest_args = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("modules", nargs="+", help="source files to mutate, from the checkout's root")
    ap.add_argument("--tests", nargs="+", required=True, help="test files or node ids to run per mutant")
    ap.add_argument("--sample", type=int, help="test a seeded sample of N mutants")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--budget", type=float, default=float("inf"), help="seconds; no mutant is started after")
    ap.add_argument("--timeout", type=float, help="seconds per mutant (default: 3x the unmutated run, >= 20)")
    ap.add_argument("--only", action="append", default=[], metavar="TEXT",
                    help="only the mutants whose line (as --list shows it) contains TEXT (repeatable: any of them)")
    ap.add_argument("--list", action="store_true", help="print the mutants, run nothing")
    args = ap.parse_args(argv)
    mutants = [m for module in args.modules for m in mutants_of(module)
               if not args.only or any(text in str(m) for text in args.only)]
    if args.sample is not None and args.sample < len(mutants):
        mutants = sorted(random.Random(args.seed).sample(mutants, args.sample), key=lambda m: (m.module, m.start))
    if args.list:
        for m in mutants:
            print(m)
        print(f"{len(mutants)} mutants")
        return
    work = scratch()
    try:
        started = time.perf_counter()
        if run_tests(work, args.tests, pytest_args, 600) != "survived":
            sys.exit("the tests fail without any mutant: fix them (or leave the failing ones out after --) first")
        timeout = args.timeout or max(20.0, 3 * (time.perf_counter() - started))
        originals = {module: (ROOT / module).read_bytes() for module in args.modules}
        outcome: dict[Mutant, str] = {}
        for n, m in enumerate(mutants, 1):
            if time.perf_counter() - started > args.budget:
                break
            mutated = m.source(originals[m.module])
            try:
                compile(mutated, m.module, "exec")
            except SyntaxError:
                continue
            target = work / m.module
            target.write_bytes(mutated)
            try:
                outcome[m] = run_tests(work, args.tests, pytest_args, timeout)
            finally:
                target.write_bytes(originals[m.module])
            print(f"[{n}/{len(mutants)}] {outcome[m]:8} {m}", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{'module':44} {'run':>5} {'killed':>6} {'timeout':>7} {'survived':>8} {'score':>6}")
    for module in args.modules:
        mine = [o for m, o in outcome.items() if m.module == module]
        killed, timeouts, survived = (mine.count(k) for k in ("killed", "timeout", "survived"))
        score = (killed + timeouts) / len(mine) if mine else 0.0
        print(f"{module:44} {len(mine):>5} {killed:>6} {timeouts:>7} {survived:>8} {score:>6.0%}")
    not_run = len(mutants) - len(outcome)
    if not_run:
        print(f"{not_run} mutants not run (the budget ran out, or they did not compile)")
    survivors = [m for m, o in outcome.items() if o == "survived"]
    if survivors:
        print("survivors:")
        for m in survivors:
            print(f"  {m}")
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
