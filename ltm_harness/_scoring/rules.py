"""Helpers datasets use to score replies: normalisation, phrase matching, JSON extraction."""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

import json5

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
    """The end of the bracketed span opening at `start` (quotes of either kind respected), None if it never closes."""
    closing = {"[": "]", "{": "}"}
    stack: list[str] = []
    quote = ""
    i = start
    while i < len(text):
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
        elif ch in "]}":
            if not stack or stack.pop() != ch:
                return None
            if not stack:
                return i + 1
        i += 1
    return None


def extract_json(text: str) -> Any | None:
    """The first JSON object or array in a reply (code fences and prose around it are allowed).

    Strict JSON first; else the bracketed span is read as JSON5 (the `json5` package), which accepts the slips
    LLMs make in JSON: trailing commas, single quotes, comments, unquoted keys. Nothing is guessed beyond that:
    a list that never closes or prose in brackets is not JSON."""
    decoder = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch in "[{":
            try:
                value, _ = decoder.raw_decode(text, i)
            except json.JSONDecodeError:
                end = _balanced_end(text, i)
                if end is None:
                    continue
                try:
                    value = json5.loads(text[i:end])
                except ValueError:
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


# Words that mark a value as the current one when they come just before it ("now it is Red", "most recently Red"),
# as a value that no longer holds ("it used to be Brown"), or a reply that hedges between values ("Red or Cream").
_CURRENT = re.compile(r"\b(now|currently|current|latest|last(?! (week|time|month|year|night|session))|most recent(ly)?|recently|these days|nowadays|today|at the moment|"
                      r"at present|changed (it )?to|switched (it )?to|updated (it )?to|finally|in the end)\b")
_PAST = re.compile(r"\b(used to|you were|previously|before|earlier|originally|at first|initially|first|formerly|"
                   r"once|past|history)\b")
_SEQUENCE = re.compile(r"\b(then|after that|later|afterwards|next)\b")  # "Brown, then Cream, then Red"
_HEDGE = re.compile(r"\b(or|either|maybe|perhaps|possibly|not sure|unsure|might|may be|could be)\b")
_NEGATION = re.compile(r"\b(not|no longer|rather than|instead of|than|nor)\b")
_NEAR = 6  # words before a value that can mark it current or past


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
    """"current", "past", "sequence" or "": the marker nearest the end of `words` (the words just before a value)."""
    marks = ([(m.end(), "current") for m in _CURRENT.finditer(words)] + [(m.end(), "past") for m in _PAST.finditer(words)]
             + [(m.end(), "sequence") for m in _SEQUENCE.finditer(words)])
    return max(marks)[1] if marks else ""


def score_latest(response: str, expected: str, rivals: list[str], noun: str) -> tuple[float, float, list[str]]:
    """For facts that change: right when the value the reply gives as the current one is `expected`.

    The reply may recall the earlier values as well, before or after the answer ("Red. Before that Brown and
    Cream", "It used to be Brown, then Cream, and now it is Red"). Which value is given as the answer: one marked
    current ("now", "most recently", ...) if any; else, when the reply opens on a value marked as past ("used to
    be Brown, ...") or on a sequence ("Brown, then Cream, ..."), the last value named; else the first value named. A sentence that names `expected` and
    another value with "or", "maybe", ... hedges between them: wrong, whichever comes first.
    """
    others = [c for c in rivals if normalize(c) != normalize(expected)]
    if not phrase_positions(response, expected):
        return 0.0, 1.0, [f"{expected!r} is not in the answer."]
    if not others or not any(phrase_positions(response, c) for c in others):
        return 1.0, 1.0, [f"{expected!r} is the only {noun} in the answer."]
    want = normalize(expected)
    mentions: list[tuple[str, str]] = []  # (value, "current" | "past" | "") in reply order
    for part in re.split(r"(?<=[.!?;])\s+|\n+", response):
        norm = f" {normalize(part)} "
        named = _mentions(part, others + [expected])
        for (a, va), (b, vb) in zip(named, named[1:]):
            if want in (normalize(va), normalize(vb)) and normalize(va) != normalize(vb):
                between = norm[a + len(normalize(va)) + 1:b + 1]
                if _HEDGE.search(between) and not _NEGATION.search(between):
                    rival = vb if normalize(va) == want else va
                    return 0.0, 1.0, [f"The answer hedges between {expected!r} and {rival!r}."]
        end = 0  # the words that can mark a value: those since the previous value, at most _NEAR of them
        for pos, v in named:
            mentions.append((v, _marker(" ".join(norm[end:pos].split()[-_NEAR:]))))
            end = pos + len(normalize(v)) + 1
    current = [v for v, mark in mentions if mark == "current"]
    if current:
        given, how = current[-1], "marked as the current one"
    elif mentions[0][1] == "past" or (len(mentions) > 1 and mentions[1][1] == "sequence"):
        given, how = mentions[-1][0], "named last, after earlier ones"
    else:
        given, how = mentions[0][0], "given first, as the answer"
    if normalize(given) == want:
        return 1.0, 1.0, [f"{expected!r} is the {noun} the answer gives ({how})."]
    return 0.0, 1.0, [f"The answer gives {given!r} as the {noun} ({how}), not {expected!r}."]
