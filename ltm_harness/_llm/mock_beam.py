"""How the mock judge (`mock-judge`, ltm_harness._llm.mock_server) answers BEAM's judge prompts, deterministically.

* a rubric item (our prompt: `<rubric_item>` and `<response>` sections): the item's content words (after a leading
  "LLM response should state:"-style label, and without stop words) looked up in the response: all there -> score 1,
  at least half -> 0.5, fewer -> 0, as JSON `{score, reason}`; an item that asks the response to decline (an
  abstention question's "there is no information related to ...") is met by a response that declines (score 1), as
  the rule without a judge decides a clear abstention, so the two agree;
* two snippets to align (our prompt: `<event>` and `<item>`; the reference's layout: `First snippet:` and `Second
  snippet:`): "yes" when the item holds at least 60% of the event's content words (an item's leading "1." or "-"
  ignored), else "no".

Anything else: None (the mock's other judges take it).
"""

from __future__ import annotations

import json
import re

_WORD = re.compile(r"[a-z0-9]+")
_LABEL = re.compile(r"^\s*(?:llm\s+)?response\s+(?:should|must)\s+\w+\s*:\s*", re.I)
_STOP = frozenset(
    "a an the is are was were be been am i you he she it we they my your his her its our their me to of in on at for "
    "and or but with what which who this that these those there here not no can could would should will may might "
    "must about as by from into than then so if do did does have has had".split())
# a reply (or a rubric item) that declines to answer: the mock judge's test for it, BEAM's and LongMemEval's alike
DECLINES = re.compile(r"\b(don'?t know|do not know|never (told|mentioned|said)|not mentioned|no information)\b", re.I)
_SNIPPETS = re.compile(r"First snippet:(.*?)Second snippet:(.*)", re.S)


def _tag(text: str, name: str) -> str | None:
    found = re.search(rf"<{name}>\s*(.*?)\s*</{name}>", text, re.S)
    return found.group(1) if found else None


def _content(text: str) -> list[str]:
    return [w for w in _WORD.findall(_LABEL.sub("", text).lower()) if w not in _STOP]


def _share(wanted: str, got: str) -> float:
    want = _content(wanted) or _WORD.findall(wanted.lower())
    have = set(_WORD.findall(got.lower()))
    return sum(w in have for w in want) / len(want) if want else 0.0


def rubric_reply(prompt: str) -> str | None:
    item, response = _tag(prompt, "rubric_item"), _tag(prompt, "response")
    if item is None or response is None:
        return None
    if DECLINES.search(item) and DECLINES.search(response):
        return json.dumps({"score": 1.0, "reason": "the item asks to decline and the response declines"})
    share = _share(item, response)
    score = 1.0 if share == 1.0 else 0.5 if share >= 0.5 else 0.0
    return json.dumps({"score": score, "reason": f"{share:.0%} of the item's words are in the response"})


def same_event_reply(prompt: str) -> str | None:
    event, item = _tag(prompt, "event"), _tag(prompt, "item")
    if event is None or item is None:
        found = _SNIPPETS.search(prompt)
        if found is None:
            return None
        event, item = found.group(1), found.group(2)
    item = re.sub(r"^\s*(?:\d+[.)]|[-*])\s*", "", item)
    return "yes" if _share(event, item) >= 0.6 else "no"


def beam_judge_reply(prompt: str) -> str | None:
    """The mock judge's reply to a BEAM judge prompt (module docstring), None for any other prompt."""
    return rubric_reply(prompt) or same_event_reply(prompt)
