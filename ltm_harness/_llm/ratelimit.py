"""Pacing calls to a provider's rate limit: one `RateGate` per endpoint and model, driven by what the provider says.

* **AIMD concurrency.** A gate lets at most `limit` requests be in flight. A 429 halves it (at most once per wait it
  asks, so a burst of 429s from one over-full moment counts once); each success adds 1/limit back, up to the ceiling.
* **Pauses the provider asks for.** A 429's `Retry-After` (or `retry-after-ms`) holds every new request of the gate
  until then; a response saying `x-ratelimit-remaining-requests: 0` (or fewer tokens remaining than a typical call
  takes) holds them until enough are back: its `x-ratelimit-reset-requests` (`-tokens`) time (`1s`, `6m0s`, `20ms`:
  when the whole limit is back), scaled by the share of the limit (`x-ratelimit-limit-*`) the call needs; and the
  requests said to remain are a token bucket: each request sent takes one, and when none is left the next waits the
  time the provider takes to give one back. So the gate slows down before the provider refuses anything.

The response headers reach the gate through the transport (`ltm_harness._llm.transport`), which hands each response's
status and headers to the `Seen` box of the call under way (a context variable: the call's own task)."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Callable

from ltm_harness._guard.retry_after import retry_after_seconds

MAX_PAUSE = 600.0  # seconds: the longest pause a header can impose on one gate
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")


@dataclass
class Seen:
    """The status and headers of the last response of one call (filled by the transport)."""

    status: int = 0
    headers: Mapping[str, Any] = field(default_factory=dict)


SEEN: ContextVar[Seen | None] = ContextVar("ltm_harness_seen_response", default=None)


def reset_seconds(value: Any) -> float | None:
    """An `x-ratelimit-reset-*` value in seconds: `1s`, `6m0s`, `1h2m3.5s`, `20ms`, or a bare number of seconds."""
    if value is None:
        return None
    text = str(value).strip().lower()
    try:
        return min(max(float(text), 0.0), MAX_PAUSE)
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text.replace(" ", ""):
        return None
    scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    return min(sum(float(n) * scale[u] for n, u in parts), MAX_PAUSE)


def _int(value: Any) -> int | None:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


class RateGate:
    """The pace of one endpoint and model (see the module docstring). `ceiling`: the most requests in flight."""

    def __init__(self, ceiling: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.ceiling = max(ceiling, 1)
        self.limit = float(self.ceiling)
        self.in_use = 0
        self.paused_until = 0.0
        self.rate_limited = 0  # 429s this gate saw
        self.lowest_limit = self.ceiling  # the least concurrency it came down to
        self._clock = clock
        self._cond: asyncio.Condition | None = None
        self._tokens_per_call = 0.0  # a running mean of the tokens a call takes (prompt + reply)
        self._halved_until = 0.0  # 429s before then came from the same over-full moment as the last cut
        self._allowance: int | None = None  # requests the provider has left for us (x-ratelimit-remaining-requests)
        self._slot = 0.0  # seconds the provider takes to give one request back

    def _condition(self) -> asyncio.Condition:
        if self._cond is None:
            self._cond = asyncio.Condition()
        return self._cond

    async def __aenter__(self) -> "RateGate":
        cond = self._condition()
        while True:
            delay = self.paused_until - self._clock()
            if delay > 0:
                await asyncio.sleep(delay)
                continue
            async with cond:
                if self.paused_until > self._clock():
                    continue
                if self.in_use < max(int(self.limit), 1):
                    if self._allowance is not None:  # the requests the provider said are left, less those sent since
                        if self._allowance <= 0:
                            self._allowance = 1  # one is back after a slot's time
                            self._pause(self._slot)
                            continue
                        self._allowance -= 1
                    self.in_use += 1
                    return self
                await cond.wait()

    async def __aexit__(self, *exc: object) -> None:
        cond = self._condition()
        async with cond:
            self.in_use -= 1
            cond.notify_all()

    def _pause(self, seconds: float) -> None:
        self.paused_until = max(self.paused_until, self._clock() + min(seconds, MAX_PAUSE))

    def observe(self, seen: Seen, tokens: int = 0) -> None:
        """What a response said: its status (429: slow down) and the rate-limit headers."""
        headers = seen.headers
        now = self._clock()
        if seen.status == 429:
            self.rate_limited += 1
            asked = retry_after_seconds(headers)
            if self._halved_until <= now:  # the first 429 since the last cut was waited out: halve the concurrency
                self.limit = max(self.limit / 2, 1.0)
                self.lowest_limit = min(self.lowest_limit, int(self.limit))
                self._halved_until = now + (asked if asked is not None else 1.0)
            self._pause(asked if asked is not None else 1.0)
        elif 200 <= seen.status < 300:
            self.limit = min(self.limit + 1 / self.limit, float(self.ceiling))
            if tokens:
                self._tokens_per_call = tokens if not self._tokens_per_call else \
                    0.9 * self._tokens_per_call + 0.1 * tokens
        if not headers:
            return
        left = _int(headers.get("x-ratelimit-remaining-requests"))
        full = reset_seconds(headers.get("x-ratelimit-reset-requests"))
        limit = _int(headers.get("x-ratelimit-limit-requests"))
        if left is not None:  # those in flight but this one may not be counted in it yet
            self._allowance = max(left - max(self.in_use - 1, 0), 0)
            if full and limit is not None and limit > left:
                self._slot = full / (limit - left)
            elif limit:
                self._slot = max(self._slot, 1.0 / limit)
        self._hold_for(headers, "requests", 1.0)
        self._hold_for(headers, "tokens", max(self._tokens_per_call, 1.0))

    def _hold_for(self, headers: Mapping[str, Any], kind: str, need: float) -> None:
        """Pause when fewer `kind` remain than a call needs: until enough have come back. The reset header says
        when the whole limit is back; with the limit known, the wait is the share of it that `need` takes."""
        left = _int(headers.get(f"x-ratelimit-remaining-{kind}"))
        if left is None or left >= need:
            return
        full = reset_seconds(headers.get(f"x-ratelimit-reset-{kind}"))
        if not full:
            return
        limit = _int(headers.get(f"x-ratelimit-limit-{kind}"))
        if limit is not None and limit > left:
            full = full * min((need - left) / (limit - left), 1.0)
        self._pause(full)
