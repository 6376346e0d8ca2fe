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


def phrase_positions(text: str, phrase: str) -> list[int]:
    """Word-boundary positions of `phrase` in the normalised `text`."""
    p, t = normalize(phrase), f" {normalize(text)} "
    out: list[int] = []
    start = 0
    if not p:
        return out
    needle = f" {p} "
    while (i := t.find(needle, start)) != -1:
        out.append(i)
        start = i + 1
    return out


def last_mentioned(text: str, candidates: list[str]) -> str | None:
    """Which candidate is mentioned last in `text` (None if none is)."""
    best, best_pos = None, -1
    for c in candidates:
        positions = phrase_positions(text, c)
        if positions and positions[-1] > best_pos:
            best, best_pos = c, positions[-1]
    return best


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


# Words that mark a value just after them: as the current one ("now it is Red", "most recently Red"), as one that no
# longer holds ("it used to be Brown"), as recalled ("you also mentioned Cream"), as the next of a sequence ("Brown,
# then Cream"), or as denied ("Red, not Cream"); and words that hedge between two values ("Red or Cream").
_MARKERS = [
    ("current", re.compile(r"\b(now|currently|current|latest|last(?! (week|time|month|year|night|session))|"
                           r"most recent(ly)?|recently|these days|nowadays|today|at the moment|at present|"
                           r"changed (it )?to|switched (it )?to|updated (it )?to|finally|in the end)\b")),
    ("past", re.compile(r"\b(used to|you were|previously|before|earlier|originally|at first|initially|first|"
                        r"formerly|once|in the past)\b")),
    ("recall", re.compile(r"\b(also|mentioned|told me|said|too|as well)\b")),
    ("sequence", re.compile(r"\b(then|after that|later|afterwards|next)\b")),
    ("negated", re.compile(r"\b(not|no longer|rather than|instead of|nor)\b")),
]
_HEDGE = re.compile(r"\b(or|either|maybe|perhaps|possibly|not sure|unsure)\b")
_NEGATION = re.compile(r"\b(not|no longer|rather than|instead of|than|nor)\b")
_NEAR = 10  # words before a value that can mark it


def _mentions(text: str, values: list[str]) -> list[tuple[int, str]]:
    """(position in the normalised text, value) of every mention, in order; a longer value wins an overlap."""
    found: list[tuple[int, int, str]] = []
    for v in sorted(values, key=lambda v: -len(normalize(v))):
        n = len(normalize(v))
        for pos in phrase_positions(text, v):
            if not any(a <= pos < b or pos <= a < pos + n for a, b, _ in found):
                found.append((pos, pos + n, v))
    return [(a, v) for a, _, v in sorted(found)]


def _marker(words: str) -> str:
    """The kind of the marker nearest the end of `words` (the words just before a value), "" if none."""
    marks = [(m.end(), kind) for kind, pattern in _MARKERS for m in pattern.finditer(words)]
    return max(marks)[1] if marks else ""


def score_latest(response: str, expected: str, rivals: list[str], noun: str) -> tuple[float, float, list[str]]:
    """For facts that change: right when the value the reply gives as the current one is `expected`.

    The reply may recall the earlier values, before or after its answer ("Red. Before that Brown and Cream", "It used
    to be Brown, then Cream, and now it is Red"); a value it denies ("Red, not Cream") is not an answer. Which value
    it gives: the last one marked current ("now", "most recently", ...); else, when it opens on a value marked as
    past ("it used to be Brown, ...") or on a sequence ("Brown, then Cream, ..."), the last value named; else, when a
    later value is marked as past or recalled ("before that", "you also mentioned"), the first value named (the
    answer, then the history); else the last value named (values stated one after another, the latest last). Naming
    `expected` and another value with "or", "maybe", ... between them hedges: wrong, whichever comes first.
    """
    others = [c for c in rivals if normalize(c) != normalize(expected)]
    if not phrase_positions(response, expected):
        return 0.0, 1.0, [f"{expected!r} is not in the answer."]
    if not others or not any(phrase_positions(response, c) for c in others):
        return 1.0, 1.0, [f"{expected!r} is the only {noun} in the answer."]
    want = normalize(expected)
    norm = f" {normalize(response)} "
    named = _mentions(response, others + [expected])
    for (a, va), (b, vb) in zip(named, named[1:]):
        if want in (normalize(va), normalize(vb)) and normalize(va) != normalize(vb):
            between = norm[a + len(normalize(va)) + 1:b + 1]
            if _HEDGE.search(between) and not _NEGATION.search(between):
                rival = vb if normalize(va) == want else va
                return 0.0, 1.0, [f"The answer hedges between {expected!r} and {rival!r}."]
    mentions: list[tuple[str, str]] = []  # (value, marker) in reply order; markers count within a sentence
    for part in re.split(r"(?<=[.!?;])\s+|\n+", response):
        part_norm = f" {normalize(part)} "
        end, previous = 0, ""
        for pos, v in _mentions(part, others + [expected]):
            words = part_norm[end:pos].split()
            mark = _marker(" ".join(words[-_NEAR:]))
            if not mark and previous == "negated" and set(words) <= {"or", "and", "nor"}:
                mark = "negated"  # "not Brown or Cream"
            mentions.append((v, mark))
            end, previous = pos + len(normalize(v)) + 1, mark
    given_ones = [(v, mark) for v, mark in mentions if mark != "negated"] or mentions
    current = [v for v, mark in given_ones if mark == "current"]
    if current:
        given, how = current[-1], "marked as the current one"
    elif given_ones[0][1] == "past" or (len(given_ones) > 1 and given_ones[1][1] == "sequence"):
        given, how = given_ones[-1][0], "named last, after earlier ones"
    elif any(mark in ("past", "recall") for _, mark in given_ones[1:]):
        given, how = given_ones[0][0], "given first, then earlier ones recalled"
    else:
        given, how = given_ones[-1][0], "the last of the values stated"
    if normalize(given) == want:
        return 1.0, 1.0, [f"{expected!r} is the {noun} the answer gives ({how})."]
    return 0.0, 1.0, [f"The answer gives {given!r} as the {noun} ({how}), not {expected!r}."]
