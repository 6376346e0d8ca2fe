"""What the mock provider keeps between requests, as a real one does: its rate limits and its prompt cache.

* **Rate limits** (`RateLimits`): requests and tokens per window (a minute by default), per model, as token buckets
  that refill continuously. A request takes one request and its tokens (prompt, plus `max_tokens` when given, as
  OpenAI counts them); one that does not fit is answered 429 with `Retry-After`/`retry-after-ms` (when enough will be
  back). Every answer carries `x-ratelimit-limit-*`, `x-ratelimit-remaining-*` and `x-ratelimit-reset-*` (when the
  whole limit is back: `1.25s`, `20ms`) for requests and tokens.
* **Prompt cache** (`PromptCache`): a request whose leading messages repeat an earlier request's (same model) has
  those tokens served from the cache, counted in `usage.prompt_tokens_details.cached_tokens`: at least `min_tokens`,
  in steps of `step` (OpenAI: 1024 and 128)."""

from __future__ import annotations

import hashlib
import math
import time
from typing import Callable

MAX_PREFIXES = 1_000_000  # prefixes the prompt cache remembers before it starts afresh


class Bucket:
    """`capacity` units refilled over `window` seconds."""

    def __init__(self, capacity: int, window: float, clock: Callable[[], float]) -> None:
        self.capacity = capacity
        self.rate = capacity / window
        self.level = float(capacity)
        self._clock = clock
        self._at = clock()

    def _refill(self) -> None:
        now = self._clock()
        self.level = min(self.capacity, self.level + (now - self._at) * self.rate)
        self._at = now

    def wait_for(self, need: float) -> float:
        """Seconds until `need` units are there (0: they are now)."""
        self._refill()
        need = min(need, self.capacity)
        return 0.0 if self.level >= need else (need - self.level) / self.rate

    def take(self, need: float) -> None:
        self.level -= min(need, self.capacity)

    def headers(self, kind: str) -> dict[str, str]:
        self._refill()
        reset = (self.capacity - self.level) / self.rate
        return {f"x-ratelimit-limit-{kind}": str(self.capacity),
                f"x-ratelimit-remaining-{kind}": str(max(int(self.level), 0)),
                f"x-ratelimit-reset-{kind}": duration(reset)}


def duration(seconds: float) -> str:
    """A reset time as OpenAI writes it: `20ms` under a second, else `1.25s`."""
    if seconds < 1:
        return f"{math.ceil(seconds * 1000)}ms"
    return f"{seconds:.2f}s"


class RateLimits:
    """Per model: `rpm` requests and `tpm` tokens per `window` seconds (None: no such limit)."""

    def __init__(self, rpm: int | None, tpm: int | None, window: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rpm, self.tpm, self.window = rpm, tpm, window
        self._clock = clock
        self._buckets: dict[tuple[str, str], Bucket] = {}

    @property
    def active(self) -> bool:
        return bool(self.rpm or self.tpm)

    def _bucket(self, model: str, kind: str, capacity: int) -> Bucket:
        key = (model, kind)
        if key not in self._buckets:
            self._buckets[key] = Bucket(capacity, self.window, self._clock)
        return self._buckets[key]

    def admit(self, model: str, tokens: int) -> tuple[float, dict[str, str]]:
        """(seconds to wait, 0 when the request is admitted and taken from the buckets; the rate-limit headers)."""
        buckets: list[tuple[Bucket, float]] = []
        if self.rpm:
            buckets.append((self._bucket(model, "requests", self.rpm), 1))
        if self.tpm:
            buckets.append((self._bucket(model, "tokens", self.tpm), tokens))
        wait = max((bucket.wait_for(need) for bucket, need in buckets), default=0.0)
        if wait == 0:
            for bucket, need in buckets:
                bucket.take(need)
        return wait, self.headers(model)

    def headers(self, model: str) -> dict[str, str]:
        out: dict[str, str] = {}
        if self.rpm:
            out.update(self._bucket(model, "requests", self.rpm).headers("requests"))
        if self.tpm:
            out.update(self._bucket(model, "tokens", self.tpm).headers("tokens"))
        return out


class PromptCache:
    """The prompt prefixes each model has seen (see the module docstring)."""

    def __init__(self, min_tokens: int = 1024, step: int = 128) -> None:
        self.min_tokens, self.step = min_tokens, step
        self._seen: set[bytes] = set()

    def cached(self, model: str, texts: list[str], counts: list[int]) -> int:
        """The tokens of the longest run of leading messages seen before (`texts`, each with its count); the
        prefixes of this request are remembered."""
        if len(self._seen) > MAX_PREFIXES:
            self._seen.clear()
        running = hashlib.sha256(model.encode("utf-8"))
        tokens, hit = 0, 0
        for text, count in zip(texts, counts):
            running.update(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest())
            key = running.copy().digest()
            tokens += count
            if key in self._seen:
                hit = tokens
            else:
                self._seen.add(key)
        if hit < self.min_tokens:
            return 0
        return hit - hit % self.step
