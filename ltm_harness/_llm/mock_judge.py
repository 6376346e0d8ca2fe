"""`mock-judge`: a judge's verdicts, deterministic (see `ltm_harness._llm.mock_server` for the models' table)."""

from __future__ import annotations

import json
import re
from typing import Any

from ltm_harness._llm.mock_beam import DECLINES as _DECLINES
from ltm_harness._llm.mock_replies import _WORD, _text, _words


def _tag(text: str, name: str) -> str | None:
    found = re.search(rf"<{name}>\s*(.*?)\s*</{name}>", text, re.S)
    return found.group(1) if found else None


_LABELLED = re.compile(r"(Reference answer|Rubric|Explanation|Assistant's response): (.*?)(?:\n\n|$)", re.S)


def yes_no_reply(prompt: str) -> str | None:
    """A yes/no verdict for a judge prompt laid out as LongMemEval's (`Reference answer:` / `Rubric:` /
    `Explanation:` and `Assistant's response:`): yes when the response holds every word of the reference answer (or
    the rubric's), or, against an explanation of why the question cannot be answered, when it declines; None for
    other prompts."""
    if "yes or no" not in prompt.lower():
        return None
    found = {label: text.strip() for label, text in _LABELLED.findall(prompt)}
    response = found.get("Assistant's response")
    if response is None:
        return None
    if "Explanation" in found:
        return "yes" if _DECLINES.search(response) else "no"
    expected = found.get("Reference answer") or found.get("Rubric") or ""
    want = _words(expected) or _WORD.findall(expected.lower())
    got = set(_WORD.findall(response.lower()))
    return "yes" if want and all(w in got for w in want) else "no"


def judge_reply(messages: list[dict[str, Any]]) -> str:
    from ltm_harness._llm.mock_beam import beam_judge_reply

    prompt = "\n".join(_text(m) for m in messages)
    beam = beam_judge_reply(prompt)  # BEAM's rubric items and event alignment
    if beam is not None:
        return beam
    said = yes_no_reply(prompt)
    if said is not None:
        return said
    expected, response = _tag(prompt, "expected"), _tag(prompt, "response")
    if expected is None or response is None:
        return json.dumps({"score": 0.0, "reason": "the request had no <expected> and <response> sections"})
    want = _words(expected) or _WORD.findall(expected.lower())
    got = set(_WORD.findall(response.lower()))
    missing = [w for w in want if w not in got]
    if not missing:
        return json.dumps({"score": 1.0, "reason": "the response contains the expected answer"})
    return json.dumps({"score": 0.0, "reason": f"the response lacks: {', '.join(missing[:5])}"})
