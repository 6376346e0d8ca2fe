"""Helpers datasets use to score replies: normalisation, phrase matching, JSON extraction."""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

import pyjson5

from ltm_harness._guard.jsonsafe import MAX_SCAN_ATTEMPTS, TooDeep, check_depth
from ltm_harness._guard.limits import MAX_JSON_DEPTH

MAX_JSON5_CHARS = 1_048_576  # a bracketed span longer than this is not read leniently

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-"})
_NON_WORD = re.compile(r"[^a-z0-9']+")


def normalize(text: str) -> str:
    """Lower case, plain quotes, punctuation folded to single spaces."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES).lower()
    return " ".join(_NON_WORD.sub(" ", text).replace("'", "").split())


def contains_phrase(text: str, phrase: str) -> bool:
    """Whether `phrase` occurs in `text` as whole words, ignoring case and punctuation."""
    p = normalize(phrase)
    return bool(p) and f" {p} " in f" {normalize(text)} "


def _balanced_end(text: str, start: int) -> int | None:
    """The end of the bracketed span opening at `start` (quotes of either kind respected), None if it never closes,
    is longer than MAX_JSON5_CHARS or nests deeper than MAX_JSON_DEPTH."""
    closing = {"[": "]", "{": "}"}
    stack: list[str] = []
    quote = ""
    i = start
    stop = min(len(text), start + MAX_JSON5_CHARS)
    while i < stop:
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in closing:
            stack.append(closing[ch])
            if len(stack) > MAX_JSON_DEPTH:
                return None
        elif ch in "]}":
            if not stack or stack.pop() != ch:
                return None
            if not stack:
                return i + 1
        i += 1
    return None


def _next_opener(text: str, start: int) -> int:
    found = [j for j in (text.find("[", start), text.find("{", start)) if j != -1]
    return min(found) if found else -1


def extract_json(text: str) -> Any | None:
    """The first JSON object or array in a reply (code fences and prose around it are allowed).

    Strict JSON first; else the bracketed span is read as JSON5 (the `pyjson5` package, a compiled parser with its
    own nesting limit, so hostile replies stay cheap), which accepts the slips LLMs make in JSON: trailing commas,
    single quotes, comments, unquoted keys. Nothing is guessed beyond that:
    a list that never closes or prose in brackets is not JSON. Bounded for hostile replies: at most
    MAX_SCAN_ATTEMPTS places are tried, and a value nested deeper than the JSON depth limit is skipped."""
    decoder = json.JSONDecoder()
    attempts = MAX_SCAN_ATTEMPTS
    i = _next_opener(text, 0)
    while i != -1 and attempts > 0:
        attempts -= 1
        try:
            value, _ = decoder.raw_decode(text, i)
        except (ValueError, RecursionError):
            end = _balanced_end(text, i)
            if end is None:
                i = _next_opener(text, i + 1)
                continue
            try:
                value = pyjson5.decode(text[i:end], maxdepth=MAX_JSON_DEPTH)
            except (pyjson5.Json5Exception, ValueError):
                i = _next_opener(text, i + 1)
                continue
        try:
            check_depth(value)
        except TooDeep:
            i = _next_opener(text, i + 1)
            continue
        return value
    return None


def word_overlap(reply: str, expected: str) -> float:
    """Share of the expected text's words that occur in the reply."""
    want = normalize(expected).split()
    if not want:
        return 0.0
    have = set(normalize(reply).split())
    return sum(w in have for w in want) / len(want)
