"""LongMemEval's own judge prompts, read from a checkout of its repository that the user names, for exact parity.

The project does not ship the reference's prompt texts; a user who has a checkout
(`git clone https://github.com/xiaowu0162/LongMemEval`) can have them used instead of ours. They are read from
`src/evaluation/evaluate_qa.py` by parsing the file with `ast`: nothing in it is imported or run. The function
that builds the prompt (`get_anscheck_prompt(task, question, answer, response, abstention=False)`) is read as it
is written there: string templates assigned to a name inside `if`/`elif` branches on the task (`task in [...]`,
`task == '...'`) and on the abstention flag, each then filled by `<name>.format(<arguments>)` with the question,
the answer and the response in some order. A file shaped otherwise is one DefinitionError line; we never guess.

The result has the same keys and type as `judge.PROMPTS` (the six question types and "abstention"): each template
turned into a JudgePrompt sent as the single user message, read yes/no, at temperature 0 with at most 10 tokens,
as the reference's evaluation calls its judge.

Bounded like every input: the file is checked to be a regular file of at most `MAX_SOURCE_BYTES` before it is
opened (a FIFO, a device or a folder is refused, never read); a file Python's own parser cannot hold (expressions
nested past its limits: `RecursionError`, `MemoryError`) is one line; the function may hold at most `MAX_BRANCHES`
`if`/`elif` branches nested at most `MAX_NESTING` deep (the reference has a handful), counted without recursion
before it is read. When the function is defined more than once, the last definition is read, as Python would call
it.
"""

from __future__ import annotations

import ast
import string
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from ltm_harness._errors import DefinitionError
from ltm_harness._interop.longmemeval.data import QUESTION_TYPES
from ltm_harness._interop.longmemeval.judge import JUDGE_KINDS, MAX_TOKENS, TEMPERATURE
from ltm_harness._interop.reference_source import last_function, parse_source
from ltm_harness._scoring.judge_prompt import JudgePrompt
from ltm_harness._store.files import first_error

SCRIPT = Path("src") / "evaluation" / "evaluate_qa.py"
FUNCTION = "get_anscheck_prompt"
MAX_SOURCE_BYTES = 1 << 20  # the reference's evaluate_qa.py is about 10 kB
MAX_BRANCHES = 200  # if/elif branches in the function (the reference has about ten)
MAX_NESTING = 50  # if/elif branches inside one another (an elif chain of n branches nests n deep)


@dataclass(frozen=True)
class _Template:
    types: frozenset[str]
    abstention: bool | None  # None: in no branch on the flag
    text: str
    arguments: tuple[str, ...]  # the names given to .format, in order
    line: int


class _Shape(Exception):
    """The function is not written as expected (the message says where)."""


class _Reader:
    def __init__(self, fn: ast.FunctionDef) -> None:
        params = [a.arg for a in fn.args.args]
        if len(params) < 4:
            raise _Shape(f"{FUNCTION} takes {len(params)} arguments, not (task, question, answer, response, ...)")
        self.task = params[0]
        self.roles = {params[1]: "question", params[2]: "expected", params[3]: "response"}
        self.flags = set(params[4:])
        self.found: list[_Template] = []

    def block(self, body: list[ast.stmt], types: frozenset[str], abstention: bool | None) -> None:
        pending: dict[str, tuple[str, int]] = {}  # template name -> (text, line), until it is formatted
        for stmt in body:
            if isinstance(stmt, ast.If):
                self.branch(stmt, types, abstention)
            elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                value = stmt.value
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    pending[stmt.targets[0].id] = (value.value, stmt.lineno)
                elif (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                      and value.func.attr == "format"):
                    name = value.func.value
                    if not isinstance(name, ast.Name) or name.id not in pending:
                        raise _Shape(f"line {stmt.lineno}: .format is called on something other than a template "
                                     "assigned just before")
                    text, line = pending.pop(name.id)
                    arguments = tuple(a.id for a in value.args if isinstance(a, ast.Name))
                    if len(arguments) != len(value.args) or value.keywords:
                        raise _Shape(f"line {stmt.lineno}: .format takes other than plain argument names")
                    self.found.append(_Template(types, abstention, text, arguments, line))
        if pending:
            unused, (_, line) = next(iter(pending.items()))
            raise _Shape(f"line {line}: the template {unused} is never filled with .format")

    def branch(self, stmt: ast.If, types: frozenset[str], abstention: bool | None) -> None:
        test = stmt.test
        negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        operand = test.operand if isinstance(test, ast.UnaryOp) and negated else test
        if isinstance(operand, ast.Name) and operand.id in self.flags:
            self.block(stmt.body, types, not negated)
            self.block(stmt.orelse, types, negated)
            return
        chosen = self.task_test(test)
        self.block(stmt.body, types & chosen, abstention)
        self.block(stmt.orelse, types - chosen, abstention)

    def task_test(self, test: ast.expr) -> frozenset[str]:
        if (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == self.task
                and len(test.ops) == 1):
            right, op = test.comparators[0], test.ops[0]
            if isinstance(op, ast.Eq) and isinstance(right, ast.Constant) and isinstance(right.value, str):
                return frozenset([right.value])
            if isinstance(op, ast.In) and isinstance(right, (ast.List, ast.Tuple, ast.Set)):
                values = [e.value for e in right.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                if len(values) == len(right.elts):
                    return frozenset(values)
        raise _Shape(f"line {test.lineno}: a branch on something other than {self.task} == '...', {self.task} in "
                     "[...] or the abstention flag")


def _ours(template: _Template, roles: dict[str, str]) -> str:
    """The template with {question}, {expected} and {response} for its positional fields; other braces doubled."""
    out = []
    auto = 0
    try:
        parsed = list(string.Formatter().parse(template.text))
    except ValueError as exc:
        raise _Shape(f"line {template.line}: the template is not a format string ({exc})") from None
    for literal, field, spec, conversion in parsed:
        out.append(literal.replace("{", "{{").replace("}", "}}"))
        if field is None:
            continue
        if spec or conversion or not (field == "" or field.isdigit()):
            raise _Shape(f"line {template.line}: the template has a field {{{field}}} other than {{}} or {{0}}")
        position = auto if field == "" else int(field)
        auto += 1
        if position >= len(template.arguments) or template.arguments[position] not in roles:
            raise _Shape(f"line {template.line}: a field of the template is not filled with the question, the "
                         "answer or the response")
        out.append("{" + roles[template.arguments[position]] + "}")
    return "".join(out)


def _function(path: Path) -> ast.FunctionDef:
    tree = parse_source(path, "LongMemEval", "https://github.com/xiaowu0162/LongMemEval", MAX_SOURCE_BYTES)
    fn = last_function(tree, FUNCTION)  # defined twice: the last definition is the one Python calls
    if fn is None:
        raise DefinitionError(f"{path}: has no function {FUNCTION} (the one that builds the judge prompt per "
                              "question type); this checkout's evaluation is not the one this harness can read, use "
                              "our prompts")
    _check_branches(fn, path)
    return fn


def _check_branches(fn: ast.FunctionDef, path: Path) -> None:
    """DefinitionError unless `fn` holds at most MAX_BRANCHES if/elif branches nested at most MAX_NESTING deep
    (counted with a stack of its own, so no file can overflow Python's recursion here or in the reader)."""
    branches = 0
    stack: list[tuple[ast.AST, int]] = [(stmt, 0) for stmt in fn.body]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, ast.If):
            branches, depth = branches + 1, depth + 1
            if branches > MAX_BRANCHES or depth > MAX_NESTING:
                what = (f"more than {MAX_BRANCHES} if/elif branches" if branches > MAX_BRANCHES
                        else f"if/elif branches nested more than {MAX_NESTING} deep (line {node.lineno})")
                raise DefinitionError(f"{path}: {FUNCTION} has {what}, far more than LongMemEval's has; name a "
                                      "LongMemEval checkout, or use our prompts")
        for field in ("body", "orelse", "handlers", "finalbody"):
            stack.extend((child, depth) for child in getattr(node, field, ()) if isinstance(child, ast.AST))


def _is_folder_or_absent(path: Path) -> bool:
    """True for a folder (a checkout) or nothing at all; a FIFO, a device or a file is read as the script itself, so
    that the one file check says what it is."""
    try:
        return path.is_dir() or not path.exists()
    except OSError:
        return True


def load_reference_prompts(checkout: Path) -> dict[str, JudgePrompt]:
    """The reference's judge prompts, keyed as `judge.PROMPTS` (the six types and "abstention"), read without
    running anything from `checkout` (a LongMemEval checkout, or its evaluate_qa.py itself). DefinitionError, one
    line, when the file or the function is missing or not shaped as expected."""
    checkout = Path(checkout).expanduser()
    path = checkout if checkout.suffix == ".py" or not _is_folder_or_absent(checkout) else checkout / SCRIPT
    fn = _function(path)
    try:
        reader = _Reader(fn)
        reader.block(fn.body, frozenset(QUESTION_TYPES), None)
        prompts = _assemble(reader)
    except _Shape as exc:
        raise DefinitionError(f"{path}: {FUNCTION} is not shaped as expected ({exc}); use our prompts") from None
    return {kind: _prompt(kind, prompts[kind], path) for kind in JUDGE_KINDS}


def _assemble(reader: _Reader) -> dict[str, str]:
    """Our placeholders in each type's template and the abstention one; _Shape when one is missing or ambiguous."""
    out: dict[str, str] = {}
    for template in reader.found:
        if template.abstention is None:
            raise _Shape(f"line {template.line}: a template outside the branch on the abstention flag")
        text = _ours(template, reader.roles)
        kinds = ["abstention"] if template.abstention else sorted(template.types)
        for kind in kinds:
            if out.get(kind, text) != text:
                raise _Shape(f"line {template.line}: a second, different template for {kind}")
            out[kind] = text
    missing = [k for k in JUDGE_KINDS if k not in out]
    if missing:
        raise _Shape(f"no template for {', '.join(missing)}")
    return out


def _prompt(kind: str, text: str, path: Path) -> JudgePrompt:
    try:
        return JudgePrompt(name=f"longmemeval-reference-{kind}", description=f"LongMemEval's own prompt for {kind} "
                           f"questions, read from {path}", user=text, parse_attempts=2, verdict="yes_no",
                           max_tokens=MAX_TOKENS, temperature=TEMPERATURE)
    except ValidationError as exc:
        raise DefinitionError(f"{path}: {FUNCTION}'s template for {kind} cannot be used ({first_error(exc)})") from None
