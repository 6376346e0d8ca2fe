"""How many items a generation prompt asks for ("ten distinct facts" -> 10): generation checks replies against it,
and the mock generator answers with that many."""

from __future__ import annotations

import re

_NUMBERS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                       "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split())}
_COUNTED = re.compile(r"\b(\d{1,2}|" + "|".join(_NUMBERS) + r")\b(?:\s+[a-z-]+){0,3}?\s+"
                      r"(facts|questions|answers|items|steps|statements|sentences|pieces)\b", re.I)


def asked_count(prompt: str) -> int | None:
    """The number of items a prompt asks for ("ten distinct facts" -> 10), if it names one."""
    found = _COUNTED.search(prompt)
    if not found:
        return None
    word = found.group(1).lower()
    return int(word) if word.isdigit() else _NUMBERS[word]
