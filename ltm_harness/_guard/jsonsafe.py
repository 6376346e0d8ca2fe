"""JSON parsed with its nesting bounded: deeper than `MAX_JSON_DEPTH` is a ValueError saying so, never a
RecursionError (the standard parser recurses once per level)."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

from ltm_harness._guard.limits import MAX_JSON_DEPTH


class TooDeep(ValueError):
    """JSON nested deeper than allowed."""


def check_depth(data: Any, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Raise TooDeep if `data` (parsed JSON) nests lists/objects deeper than `max_depth` (no recursion here)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > max_depth:
            raise TooDeep(f"nested deeper than {max_depth} levels")
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))


def _may_be_deep(text: str | bytes | bytearray, max_depth: int) -> bool:
    opens = text.count("[") + text.count("{") if isinstance(text, str) else text.count(b"[") + text.count(b"{")
    return opens > max_depth


def loads(text: str | bytes | bytearray, max_depth: int = MAX_JSON_DEPTH,
          object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None) -> Any:
    """`json.loads` with the depth bounded; bad JSON is json.JSONDecodeError as usual, too deep is TooDeep, and an
    integer of more digits than Python reads (`sys.get_int_max_str_digits`, 4,300 by default) is a JSONDecodeError
    at that number (the standard parser raises a bare ValueError there). `object_pairs_hook` as json.loads's (to see
    a key given twice)."""
    try:
        data = json.loads(text, object_pairs_hook=object_pairs_hook)
    except RecursionError:
        raise TooDeep(f"nested deeper than {max_depth} levels") from None
    except ValueError as exc:
        too_long = None if isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError)) else _long_number(text)
        if too_long is None:
            raise
        raise too_long from None
    if _may_be_deep(text, max_depth):  # a cheap count first: most files cannot be too deep
        check_depth(data, max_depth)
    return data


MAX_SCAN_ATTEMPTS = 256  # JSON values tried at most in one free-text reply (each try may read to its end)
_DECODER = json.JSONDecoder()


def scan(text: str, openers: str = "[{", max_depth: int = MAX_JSON_DEPTH,
         attempts: int = MAX_SCAN_ATTEMPTS) -> Iterator[tuple[Any, int, int]]:
    """The JSON values embedded in free text (a chat reply), outermost only, in order: (value, start, end). Bounded:
    at most `attempts` places are tried, a value nested deeper than `max_depth` is skipped (never a
    RecursionError), so a hostile reply costs linear time at most `attempts` times over."""
    i = _next(text, openers, 0)
    while i != -1 and attempts > 0:
        attempts -= 1
        try:
            value, end = _DECODER.raw_decode(text, i)
        except (ValueError, RecursionError):
            i = _next(text, openers, i + 1)
            continue
        try:
            if isinstance(value, (dict, list)) and _may_be_deep(text[i:end], max_depth):
                check_depth(value, max_depth)
        except TooDeep:  # skipped whole, with everything inside it
            i = _next(text, openers, end)
            continue
        yield value, i, end
        i = _next(text, openers, end)


def _long_number(text: str | bytes | bytearray) -> json.JSONDecodeError | None:
    """The error for the first integer of `text` longer than Python reads, where it is (None: there is none)."""
    limit = sys.get_int_max_str_digits()
    doc = text if isinstance(text, str) else text.decode("utf-8", errors="replace")
    found = re.search(r"\d{%d,}" % (limit + 1), doc) if limit else None
    if found is None:
        return None
    return json.JSONDecodeError(f"a number of {found.end() - found.start():,} digits, more than the {limit:,} this "
                                "reader takes", doc, found.start())


def _next(text: str, openers: str, start: int) -> int:
    found = [j for j in (text.find(o, start) for o in openers) if j != -1]
    return min(found) if found else -1


def build(events: Iterator[tuple[str, Any]], root: Any, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """The JSON container just opened (`root`: an empty dict or list), built from the rest of its events as ijson's
    `basic_parse` gives them, one value at a time (the text it is read from is never held whole); nested deeper than
    `max_depth` is TooDeep, raised before anything deeper is made."""
    stack = [root]
    names = [""]
    for event, value in events:
        if event == "map_key":
            names[-1] = value
            continue
        if event in ("end_map", "end_array"):
            stack.pop()
            names.pop()
            if not stack:
                return root
            continue
        top = stack[-1]
        opens = event in ("start_map", "start_array")
        if opens:
            value = {} if event == "start_map" else []
            if len(stack) >= max_depth:
                raise TooDeep(f"nested deeper than {max_depth} levels")
        if type(top) is dict:
            top[names[-1]] = value
        else:
            top.append(value)
        if opens:
            stack.append(value)
            names.append("")
    return root  # not reached: the parser raises at the end of a cut text
