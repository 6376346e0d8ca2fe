"""Neutral filler that fills information gaps: arithmetic practice questions built from templates.

Filler must never mention names, colours, places, items, times or anything a test asks about, so
it is made only of numbers and arithmetic words. Each message is a short instruction, worked
question/answer lines and a final open question; the agent is asked for a short JSON reply.

Every line is counted once, when the seeded pool is built. A message's token count is the sum of
its parts' counts: each part ends with a newline and the next starts with a letter, so the
tokenizer never merges across parts (tests check this against a full count).
"""

from __future__ import annotations

import math
import random
from bisect import bisect_right
from dataclasses import dataclass

from ltm_harness._tokens import Tokenizer

SHORT_HEADERS = ('Please answer as JSON.\n', 'Please answer this one as JSON.\n', 'Answer the question as JSON, please.\n')
HEADER = 'Arithmetic practice. Read the worked examples, then answer the last question as JSON, like {"answer": 12}.\n'
POOL_LINES = 1200
POOL_FINALS = 1500


@dataclass(frozen=True, slots=True)
class FillerMessage:
    text: str
    tokens: int
    expected_reply: str


def _is_prime(n: int) -> bool:
    return n > 1 and all(n % p for p in range(2, math.isqrt(n) + 1))


def _qa(rng: random.Random) -> tuple[str, str]:
    """One arithmetic question and its answer, from a seeded template."""
    a, b = rng.randint(2, 99), rng.randint(2, 99)
    kind = rng.randrange(14)
    if kind == 11:
        return f"If a number is doubled and the result is {2 * a}, what was the number?", str(a)
    if kind == 12:
        c = rng.randint(2, 9)
        return f"What do you get when you add {a} to the product of {b} and {c}?", str(a + b * c)
    if kind == 13:
        c, d = rng.randint(2, 99), rng.randint(2, 99)
        return f"What is the sum of {a}, {b}, {c} and {d}, counting each number once?", str(a + b + c + d)
    if kind == 0:
        return f"What is {a} plus {b}?", str(a + b)
    if kind == 1:
        return f"What is {a + b} minus {b}?", str(a)
    if kind == 2:
        return f"What is {a} times {b}?", str(a * b)
    if kind == 3:
        return f"What is {a * b} divided by {b}?", str(a)
    if kind == 4:
        return f"What is the remainder when {a * 7 + b} is divided by {a}?", str((a * 7 + b) % a)
    if kind == 5:
        n = rng.randint(2, 400)
        return f"Is {n} a prime number?", "yes" if _is_prime(n) else "no"
    if kind == 6:
        return f"What is {a} squared?", str(a * a)
    if kind == 7:
        sides = rng.randint(3, 20)
        return f"How many sides has a polygon whose interior angles add up to {180 * (sides - 2)} degrees?", str(sides)
    if kind == 8:
        p, x = rng.choice((10, 20, 25, 50, 75)), rng.randint(1, 40) * 20
        return f"What is {p} percent of {x}?", str(p * x // 100)
    if kind == 9:
        return f"What is the greatest common divisor of {a * 6} and {b * 6}?", str(math.gcd(a * 6, b * 6))
    n = rng.randint(100, 99999)
    return f"What is the sum of the digits of {n}?", str(sum(int(d) for d in str(n)))


class _Pool:
    """The seeded pool of lines and its size tables: built once per (encoding, seed) and shared."""

    def __init__(self, tokenizer: Tokenizer, seed: int) -> None:
        rng = random.Random(f"ltm-harness-filler:{seed}")
        self.header_tokens = tokenizer.count(HEADER)
        self.lines: list[tuple[str, int]] = []
        for _ in range(POOL_LINES):
            q, a = _qa(rng)
            line = f"Q: {q} A: {a}.\n"
            self.lines.append((line, tokenizer.count(line)))
        self.finals_by_size: dict[int, list[tuple[str, str]]] = {}
        for _ in range(POOL_FINALS):
            q, a = _qa(rng)
            text = f"Q: {q}"
            self.finals_by_size.setdefault(tokenizer.count(text), []).append((text, a))
        self.lines_by_size: dict[int, list[str]] = {}
        for line, n in self.lines:
            self.lines_by_size.setdefault(n, []).append(line)
        self.final_sizes = sorted(self.finals_by_size)
        self.fits: dict[int, tuple[tuple[int, ...], int, int]] = {}  # a memo, the same for every generator
        # Every total that zero to three pool lines can make, with the fewest lines that make it.
        sizes = sorted(self.lines_by_size)
        self.line_sums: dict[int, tuple[int, ...]] = {0: ()}
        for combo in [*((a,) for a in sizes), *((a, b) for a in sizes for b in sizes if a <= b),
                      *((a, b, c) for a in sizes for b in sizes for c in sizes if a <= b <= c)]:
            self.line_sums.setdefault(sum(combo), combo)
        # A fixed seeded order of the pool, doubled so that any run of lines is one slice; a message
        # takes the lines from a random start, so choosing them costs one bisect, not a loop.
        rng.shuffle(self.lines)
        doubled = self.lines + self.lines
        self.texts = [line for line, _ in doubled]
        self.prefix = [0]
        for _, n in doubled:
            self.prefix.append(self.prefix[-1] + n)
        self.short_headers = sorted((tokenizer.count(h), h) for h in SHORT_HEADERS)
        self.rng_state = rng.getstate()  # where each generator's own draws start


_POOLS: dict[tuple[str, int], _Pool] = {}


class FillerGenerator:
    """Makes filler messages of a requested token size, deterministically from a seed.

    The pool is shared by all generators of the same encoding and seed (isolated runs make one
    generator per test); each generator has its own random draws, starting from the same state."""

    def __init__(self, tokenizer: Tokenizer, seed: int = 0, max_tokens: int = 4096) -> None:
        key = (tokenizer.encoding_name, seed)
        if key not in _POOLS:
            _POOLS[key] = _Pool(tokenizer, seed)
        pool = _POOLS[key]
        self._rng = random.Random()
        self._rng.setstate(pool.rng_state)
        self.max_tokens = max_tokens
        self._header_tokens = pool.header_tokens
        self._lines = pool.lines
        self._finals_by_size = pool.finals_by_size
        self._lines_by_size = pool.lines_by_size
        self._final_sizes = pool.final_sizes
        self._fits = pool.fits
        self._line_sums = pool.line_sums
        self._texts = pool.texts
        self._prefix = pool.prefix
        self._short_headers = pool.short_headers
        self.full_min_tokens = self._header_tokens + self._final_sizes[0]
        self.min_tokens = self._short_headers[0][0] + self._final_sizes[0]
        if max_tokens < self.min_tokens + max(n for _, n in self._lines) * 2:
            raise ValueError(f"filler max_message_tokens={max_tokens} is too small; use at least {self.full_min_tokens + 64}")

    def make(self, target_tokens: int) -> FillerMessage:
        """A filler message of as close to `target_tokens` tokens as possible (within the bounds)."""
        target = max(self.min_tokens, min(int(target_tokens), self.max_tokens))
        # Small gaps get a short instruction so that even a few dozen tokens can be filled exactly.
        if target >= 2 * self.full_min_tokens:
            header_tokens, header = self._header_tokens, HEADER
        else:  # the short instruction whose length lets the rest fit exactly, if any does
            header_tokens, header = min(self._short_headers, key=lambda h: (self._fit(target - h[0])[2], h[0]))
        remaining = target - header_tokens
        parts = [header]
        used = header_tokens
        max_final = self._final_sizes[-1]
        max_line = max(self._lines_by_size)
        if remaining > max_final + max_line:
            start = self._rng.randrange(len(self._lines))
            end = bisect_right(self._prefix, self._prefix[start] + remaining - (max_final + max_line)) - 1
            end = min(end, start + len(self._lines))
            parts.extend(self._texts[start:end])
            n = self._prefix[end] - self._prefix[start]
            used += n
            remaining -= n
        # Close the gap: up to two sized lines plus a sized final question, exact where the pool allows.
        extra, final_size, _ = self._fit(remaining)
        for size in extra:
            parts.append(self._rng.choice(self._lines_by_size[size]))
            used += size
        question, answer = self._rng.choice(self._finals_by_size[final_size])
        parts.append(question)
        used += final_size
        return FillerMessage("".join(parts), used, f'{{"answer": "{answer}"}}')

    def _fit(self, tokens: int) -> tuple[tuple[int, ...], int, int]:
        """Sizes of up to three extra lines and of the final question that add up to `tokens` (or the
        closest), and the error."""
        cached = self._fits.get(tokens)
        if cached is None:
            cached = self._fits[tokens] = min(
                ((extra, final, abs(tokens - total - final)) for total, extra in self._line_sums.items()
                 for final in self._final_sizes),
                key=lambda c: (c[2], len(c[0]), c[1]),
            )
        return cached
