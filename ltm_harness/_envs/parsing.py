"""Reading a chat reply as an action or as a list of answers. Tolerant, deterministic, documented.

An action is read from a reply by the first rule that applies:

1. a JSON object with an `"action"` key anywhere in the reply (the first one): its value;
2. a line such as `action: left` or `Action = 3`: the word or number after it;
3. the allowed actions mentioned in the reply as whole words (names, case-insensitive) or whole
   numbers (number ranges): if exactly one distinct allowed action is mentioned, that one.

A value that is not allowed, a reply that mentions two or more different allowed actions (and has
no JSON or `action:` line to settle it), and a reply that mentions none are `InvalidAction`s, with
the reason. Answers to a problem set are read by the first rule that applies:

1. the first JSON list in the reply (or a JSON object's `"answers"` list): item i answers problem i;
2. numbered lines, `3. answer`, `3) answer` or `3: answer`, numbered as the problems were;
3. nothing: every answer is missing (None), which counts as wrong.
"""

from __future__ import annotations

import re
from typing import Any

from ltm_harness._guard import jsonsafe
from ltm_harness._envs.header import Action, InvalidAction, Space

_ACTION_LINE = re.compile(r"\baction\s*[:=]\s*[\"']?([A-Za-z]+|-?\d+)", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.-])-?\d+(?![\w]|\.\d)")
_NUMBERED = re.compile(r"^\s*(\d+)\s*[.):]\s*(.*?)\s*$", re.MULTILINE)


def json_values(text: str, opener: str) -> list[Any]:
    """Every JSON value that starts with `opener` (`{` or `[`) in `text`, in order, outermost only."""
    return [value for value, _, _ in jsonsafe.scan(text, opener)]  # bounded: tries and depth


def _coerce(value: object, space: "Space") -> "Action | None":
    """`value` as an allowed action of `space`, or None."""
    if space.choices:
        if isinstance(value, str):
            wanted = value.strip().lower()
            return next((c for c in space.choices if c.lower() == wanted), None)
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
        value = int(value)
    if isinstance(value, int) and space.contains(value):
        return value
    return None


def _refuse(reply: str, reason: str) -> "InvalidAction":
    return InvalidAction(reply=reply, reason=reason)


def parse_action(reply: str, space: "Space") -> "Action | InvalidAction":
    """The action in `reply` (see the module docstring for the rules)."""
    text = reply if isinstance(reply, str) else str(reply)
    for obj in json_values(text, "{"):
        if isinstance(obj, dict) and "action" in obj:
            action = _coerce(obj["action"], space)
            if action is None:
                return _refuse(text, f"{obj['action']!r} is not an allowed action")
            return action
    line = _ACTION_LINE.search(text)
    if line:
        action = _coerce(line.group(1), space)
        if action is None:
            return _refuse(text, f"{line.group(1)!r} is not an allowed action")
        return action
    mentioned: list[Action] = []
    if space.choices:
        lowered = text.lower()
        for choice in space.choices:
            if re.search(rf"(?<![\w-]){re.escape(choice.lower())}(?![\w-])", lowered):
                mentioned.append(choice)
    elif space.is_range:
        for match in _NUMBER.finditer(text):
            number = _coerce(match.group(0), space)
            if number is not None and number not in mentioned:
                mentioned.append(number)
    if len(mentioned) == 1:
        return mentioned[0]
    if not mentioned:
        return _refuse(text, "no allowed action found in the reply")
    return _refuse(text, "the reply names several actions: " + ", ".join(str(a) for a in mentioned))


def _answer_text(value: object) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    return str(value).strip()


def parse_answers(reply: str, count: int, first_number: int = 1) -> list[str | None]:
    """`count` answers from `reply` for problems numbered from `first_number` (see the module docstring)."""
    text = reply if isinstance(reply, str) else str(reply)
    for value in json_values(text, "["):
        if isinstance(value, list):
            return _fit([_answer_text(v) for v in value], count)
    for obj in json_values(text, "{"):
        if isinstance(obj, dict) and isinstance(obj.get("answers"), list):
            return _fit([_answer_text(v) for v in obj["answers"]], count)
    answers: list[str | None] = [None] * count
    for match in _NUMBERED.finditer(text):
        index = int(match.group(1)) - first_number
        if 0 <= index < count and answers[index] is None and match.group(2):
            answers[index] = match.group(2).strip().strip("\"'")
    return answers


def _fit(values: list[str | None], count: int) -> list[str | None]:
    return (values + [None] * count)[:count]
