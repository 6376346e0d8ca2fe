"""BEAM's own judge prompts, read from a checkout of its repository that the user names, for exact prompt parity.

The project does not ship the reference's texts (its code has no licence). A user with a checkout (`git clone
https://github.com/mohammadtavakoli78/BEAM`) can have them used instead of ours; they are read by parsing the files
with `ast`, nothing in them imported or run:

* `src/prompts.py`, the top-level string `unified_llm_judge_base_prompt` (the rubric judge, sent as the single user
  message, filled by `str.replace` of `<rubric_item>` and `<llm_response>`; its `<question>` is never filled by the
  published code: the `reference` scoring leaves it as the literal placeholder, ours fills in the question);
* `src/evaluation/compute_metrics.py`, the function `llm_equivalence(first_paragraph, second_paragraph, llm)`: the
  system message (a string) and the user message (an f-string of the two snippets: the gold event first, the
  answer's line second) of event ordering's alignment.

The result is the pair of JudgePrompts `judge.RUBRIC` and `judge.SAME_EVENT` are: the same messages byte for byte as
the reference's code builds them. A file shaped otherwise is one DefinitionError line; we never guess.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from ltm_harness._errors import DefinitionError
from ltm_harness._interop.beam.judge import TEMPERATURE
from ltm_harness._interop.reference_source import last_assignment, last_function, parse_source
from ltm_harness._scoring.judge_prompt import JudgePrompt

PROMPTS_FILE = Path("src") / "prompts.py"
METRICS_FILE = Path("src") / "evaluation" / "compute_metrics.py"
RUBRIC_NAME = "unified_llm_judge_base_prompt"
EQUIVALENCE_FUNCTION = "llm_equivalence"
QUESTION_SLOT = "<question>"  # what the reference's rubric prompt keeps where the question would go
_MAX_SOURCE_BYTES = 4 << 20
_SLOTS = {"<question>": "{question}", "<rubric_item>": "{expected}", "<llm_response>": "{response}"}


@dataclass(frozen=True)
class ReferencePrompts:
    rubric: JudgePrompt
    same_event: JudgePrompt


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _parse(path: Path) -> ast.Module:
    return parse_source(path, "BEAM", "https://github.com/mohammadtavakoli78/BEAM", _MAX_SOURCE_BYTES)


def _unchecked(name: str, description: str, system: str, user: str, verdict: str,
               max_tokens: int | None) -> JudgePrompt:
    """A JudgePrompt whose template may lack a placeholder the reference does not fill (its alignment message has
    no question): built without the check that every placeholder is there, after checking that it formats."""
    user.format(question="", expected="", response="", context="")
    return JudgePrompt.model_construct(name=name, description=description, system=system, user=user,
                                       parse_attempts=2, verdict=verdict, max_tokens=max_tokens,
                                       temperature=TEMPERATURE)


def rubric_template(text: str) -> str:
    """The reference's rubric prompt as a template of ours: braces doubled, its three slots as our placeholders."""
    out = _escape(text)
    for slot, ours in _SLOTS.items():
        out = out.replace(slot, ours)
    return out


def read_rubric_prompt(path: Path) -> JudgePrompt:
    node = last_assignment(_parse(path), RUBRIC_NAME)  # assigned twice: the last value is the one the module holds
    if node is None:
        raise DefinitionError(f"{path}: has no top-level {RUBRIC_NAME}; this checkout is not the one this harness can "
                              "read, use our prompts")
    if not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
        raise DefinitionError(f"{path}: line {node.lineno}: {RUBRIC_NAME} is not a plain string; use our prompts")
    text = node.value.value
    if "<rubric_item>" not in text or "<llm_response>" not in text:
        raise DefinitionError(f"{path}: {RUBRIC_NAME} has no <rubric_item> or <llm_response> slot; use our prompts")
    return _unchecked("beam-reference-rubric", f"BEAM's own rubric judge prompt, read from {path}", "",
                      rubric_template(text), "json", None)


def _fstring(node: ast.expr, first: str, second: str, where: str) -> str:
    """An f-string (or plain string) of the two snippets as our template: `first` -> {expected}, `second` ->
    {response}."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _escape(node.value)
    if not isinstance(node, ast.JoinedStr):
        raise DefinitionError(f"{where}: the user message is not a string or f-string; use our prompts")
    out = []
    for part in node.values:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            out.append(_escape(part.value))
        elif (isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name) and part.conversion == -1
              and part.format_spec is None and part.value.id in (first, second)):
            out.append("{expected}" if part.value.id == first else "{response}")
        else:
            raise DefinitionError(f"{where}: the user message fills in something other than the two snippets; use "
                                  "our prompts")
    return "".join(out)


def read_same_event_prompt(path: Path) -> JudgePrompt:
    fn = last_function(_parse(path), EQUIVALENCE_FUNCTION)  # defined twice: the last definition is the one called
    if fn is None:
        raise DefinitionError(f"{path}: has no function {EQUIVALENCE_FUNCTION}; use our prompts")
    where = f"{path}: {EQUIVALENCE_FUNCTION} (line {fn.lineno})"
    params = [a.arg for a in fn.args.args]
    if len(params) < 2:
        raise DefinitionError(f"{where}: takes fewer than the two snippets; use our prompts")
    messages: dict[str, ast.expr] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Dict):
            fields = {k.value: v for k, v in zip(node.keys, node.values)
                      if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            role = fields.get("role")
            if isinstance(role, ast.Constant) and role.value in ("system", "user") and "content" in fields:
                messages[str(role.value)] = fields["content"]
    if set(messages) != {"system", "user"}:
        raise DefinitionError(f"{where}: does not build one system and one user message; use our prompts")
    system = messages["system"]
    if not (isinstance(system, ast.Constant) and isinstance(system.value, str)):
        raise DefinitionError(f"{where}: the system message is not a plain string; use our prompts")
    user = _fstring(messages["user"], params[0], params[1], where)
    if "{expected}" not in user or "{response}" not in user:
        raise DefinitionError(f"{where}: the user message does not hold both snippets; use our prompts")
    return _unchecked("beam-reference-same-event", f"BEAM's own event-equivalence messages, read from {path}",
                      system.value, user, "yes_no", None)


def load_reference_prompts(checkout: Path) -> ReferencePrompts:
    """The reference's rubric and alignment prompts, read without running anything from a BEAM checkout."""
    root = Path(checkout).expanduser()
    if not root.is_dir():
        raise DefinitionError(f"{root} is not a folder; name the folder of a BEAM checkout")
    return ReferencePrompts(read_rubric_prompt(root / PROMPTS_FILE), read_same_event_prompt(root / METRICS_FILE))


def is_beam_checkout(path: Path) -> bool:
    return (Path(path) / PROMPTS_FILE).is_file() and (Path(path) / METRICS_FILE).is_file()
