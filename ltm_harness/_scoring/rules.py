"""Helpers datasets use to score replies: normalisation, phrase matching, JSON extraction."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from ltm_harness._guard import jsonsafe

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


def extract_json(text: str) -> Any | None:
    """The first JSON object or array in a reply (code fences and prose around it are allowed)."""
    for value, _, _ in jsonsafe.scan(text):  # bounded: tries and depth
        return value
    return None


def word_overlap(reply: str, expected: str) -> float:
    """Share of the expected text's words that occur in the reply."""
    want = normalize(expected).split()
    if not want:
        return 0.0
    have = set(normalize(reply).split())
    return sum(w in have for w in want) / len(want)


def score_latest(response: str, expected: str, rivals: list[str], noun: str) -> tuple[float, float, list[str]]:
    """For facts that change: right when `expected` is named and no rival is named after it.

    Naming earlier values first is fine ("it was Brown, now it is Red"); naming one after is not.
    """
    if not phrase_positions(response, expected):
        return 0.0, 1.0, [f"{expected!r} is not in the answer."]
    others = [c for c in rivals if c.lower() != expected.lower()]
    if last_mentioned(response, others + [expected]) != expected:
        return 0.0, 1.0, [f"{expected!r} is in the answer, but another {noun} is named after it."]
    return 1.0, 1.0, [f"{expected!r} is the (last) {noun} in the answer."]
