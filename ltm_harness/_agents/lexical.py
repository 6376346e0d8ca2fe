"""A lexical memory (BM25 over remembered sentences) used by the offline baseline agents."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
STOPWORDS = frozenset(
    "a an and are as at be been but by can could did do does for from had has have he her him his how i if in "
    "into is it its me my of on or our please say she so that the their them then there these they this to "
    "told tell us was we were what when where which who whom why will with would you your yours".split()
)


def _stem(word: str) -> str:
    """A light plural folding, so that "names" finds "name"."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def terms(text: str) -> list[str]:
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


@dataclass(slots=True)
class Unit:
    uid: int
    text: str
    terms: Counter[str]
    length: int
    tokens: int


class LexicalMemory:
    """Remembered sentences with an incremental BM25 index; oldest units can be forgotten."""

    K1 = 1.2
    B = 0.75

    def __init__(self) -> None:
        self.units: dict[int, Unit] = {}
        self._order: list[int] = []
        self._head = 0
        self._postings: dict[str, dict[int, int]] = {}
        self._total_len = 0
        self._next = 0
        self.tokens = 0
        self._journal: list[tuple[bool, Unit]] | None = None  # (added?, unit) since the first mark, for undo_to

    def add(self, text: str, tokens: int) -> None:
        """Remember a message, sentence by sentence; `tokens` is the message's count, shared out by length."""
        parts = sentences(text)
        total_chars = sum(len(p) for p in parts) or 1
        for part in parts:
            counts = Counter(terms(part))
            unit = Unit(self._next, part, counts, max(sum(counts.values()), 1), max(1, round(tokens * len(part) / total_chars)))
            self._next += 1
            self._order.append(unit.uid)
            self._insert(unit)
            if self._journal is not None:
                self._journal.append((True, unit))

    def _insert(self, unit: Unit) -> None:
        self.units[unit.uid] = unit
        self._total_len += unit.length
        self.tokens += unit.tokens
        for term, tf in unit.terms.items():
            self._postings.setdefault(term, {})[unit.uid] = tf

    def mark(self) -> tuple[int, int, int]:
        """A point to come back to with `undo_to` (any number of times): from the first mark on, what is added and
        removed is kept in a journal."""
        if self._journal is None:
            self._journal = []
        return len(self._journal), self._head, len(self._order)

    def undo_to(self, mark: tuple[int, int, int]) -> None:
        """The memory as it was at `mark`: units added since removed, units removed since put back."""
        assert self._journal is not None
        size, head, order = mark
        while len(self._journal) > size:
            added, unit = self._journal.pop()
            if added:
                self._drop(unit.uid)
            else:
                self._insert(unit)
        del self._order[order:]
        self._head = head

    def forget_oldest(self) -> None:
        while self._head < len(self._order):
            uid = self._order[self._head]
            self._head += 1
            if uid in self.units:
                self.remove(uid)
                break
        if self._journal is None and self._head > 1024 and self._head * 2 > len(self._order):
            self._order = self._order[self._head:]
            self._head = 0

    def remove(self, uid: int) -> None:
        unit = self._drop(uid)
        if self._journal is not None:
            self._journal.append((False, unit))

    def _drop(self, uid: int) -> Unit:
        unit = self.units.pop(uid)
        self._total_len -= unit.length
        self.tokens -= unit.tokens
        for term in unit.terms:
            posting = self._postings[term]
            del posting[uid]
            if not posting:
                del self._postings[term]
        return unit

    def search(self, query: str, min_relative: float = 0.3, limit: int | None = 5,
               where: Callable[[Unit], bool] | None = None) -> list[Unit]:
        """Units that match `query` well enough (of those `where` accepts), in the order they were remembered."""
        q_terms = set(terms(query))
        n = len(self.units)
        if not q_terms or not n:
            return []
        avg_len = self._total_len / n
        scores: dict[int, float] = {}
        best_possible = 0.0
        for term in q_terms:
            posting = self._postings.get(term)
            df = len(posting) if posting else 0
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            best_possible += idf
            if not posting:
                continue
            for uid, tf in posting.items():
                if where is not None and not where(self.units[uid]):
                    continue
                length = self.units[uid].length
                s = idf * tf * (self.K1 + 1) / (tf + self.K1 * (1 - self.B + self.B * length / avg_len))
                scores[uid] = scores.get(uid, 0.0) + s
        if not scores:
            return []
        top = max(scores.values())
        if top < min_relative * best_possible:
            return []
        # Facts change over a conversation: of the good matches, keep the most recent ones.
        keep = sorted(uid for uid, s in scores.items() if s >= 0.4 * top)
        if limit is not None:
            keep = keep[-limit:]
        return [self.units[uid] for uid in keep]
