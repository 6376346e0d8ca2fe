"""The time a download may take and where it may be redirected: the parts of `datafiles`' download that bound it.

* `Pace`: an overall deadline for the whole download (redirects, connection and every byte), besides the
  per-read timeout, and a minimum rate, averaged over windows of `RATE_WINDOW` seconds: a server that trickles a
  byte now and then is stopped by one or the other, in one line. `LTM_DOWNLOAD_DEADLINE` (seconds, default 4
  hours) and `LTM_DOWNLOAD_MIN_RATE` (bytes per second, default 16 KiB/s; 0 turns it off) change them, for a slow
  line.
* `open_following`: the GET of a URL with its redirects followed by hand, each hop judged by
  `_guard.redirects.refusal` before anything connects to it, at most `MAX_REDIRECTS` of them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ltm_harness._errors import ConfigError
from ltm_harness._guard.redirects import MAX_REDIRECTS, refusal

DEADLINE_ENV = "LTM_DOWNLOAD_DEADLINE"
MIN_RATE_ENV = "LTM_DOWNLOAD_MIN_RATE"
DEFAULT_DEADLINE = 4 * 3600.0  # LongMemEval's M file (2.7 GB) at 200 kB/s
DEFAULT_MIN_RATE = 16 * 1024.0
RATE_WINDOW = 60.0  # seconds over which the rate is averaged (the first window starts with the download)
READ_TIMEOUT = 30.0  # no byte for this long: the download broke off
CONNECT_TIMEOUT = 15.0


class RedirectRefused(Exception):
    def __init__(self, target: str, reason: str) -> None:
        super().__init__(reason)
        self.target, self.reason = target, reason


class TooSlow(Exception):
    """The deadline passed, or the rate fell under the minimum; the message says which, in words."""


def _env_number(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not (0 <= value < float("inf")):
        raise ConfigError(f"{name}={raw[:40]!r}: give a number of {'seconds' if name == DEADLINE_ENV else 'bytes per second'}"
                          " (0 or more), or unset it")
    return value


@dataclass
class Pace:
    """How long a download has taken and how fast it goes, against its deadline and minimum rate."""

    deadline: float = DEFAULT_DEADLINE
    min_rate: float = DEFAULT_MIN_RATE
    window: float = RATE_WINDOW
    started: float = field(default_factory=time.monotonic)
    _mark: tuple[float, int] = (0.0, 0)  # where the current rate window began: (time, bytes received by then)

    @classmethod
    def from_env(cls) -> "Pace":
        deadline = _env_number(DEADLINE_ENV, DEFAULT_DEADLINE)
        return cls(deadline=deadline if deadline > 0 else DEFAULT_DEADLINE,
                   min_rate=_env_number(MIN_RATE_ENV, DEFAULT_MIN_RATE), window=RATE_WINDOW)

    def __post_init__(self) -> None:
        self._mark = (self.started, 0)

    def timeout(self) -> Any:
        """The httpx timeout of each read and connection: never longer than the whole deadline."""
        import httpx

        return httpx.Timeout(min(READ_TIMEOUT, self.deadline), connect=min(CONNECT_TIMEOUT, self.deadline))

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def over(self) -> bool:
        return self.elapsed() >= self.deadline

    def check(self, received: int) -> None:
        """TooSlow when the deadline has passed, or the last full window went slower than the minimum rate."""
        now = time.monotonic()
        if now - self.started >= self.deadline:
            raise TooSlow(self.deadline_reason(received))
        since, had = self._mark
        if self.min_rate > 0 and now - since >= self.window:
            rate = (received - had) / (now - since)
            if rate < self.min_rate:
                raise TooSlow(f"went on at {rate:,.1f} bytes/s over {now - since:.1f} s, under the minimum of "
                              f"{self.min_rate:,.0f} bytes/s ({MIN_RATE_ENV}; 0 turns the check off)")
            self._mark = (now, received)

    def deadline_reason(self, received: int) -> str:
        return (f"did not finish within {self.deadline:g} s ({received:,} bytes received; {DEADLINE_ENV} gives "
                "more seconds)")


@contextmanager
def open_following(client: Any, url: str, pace: Pace) -> Iterator[Any]:
    """The streamed response to GET `url` (an httpx.Client with follow_redirects off), its redirects followed
    when `_guard.redirects` allows each hop (RedirectRefused otherwise), within the pace's deadline (TooSlow)."""
    current = url
    for _ in range(MAX_REDIRECTS + 1):
        if pace.over():
            raise TooSlow(pace.deadline_reason(0))
        response = client.send(client.build_request("GET", current), stream=True)
        try:
            if not response.is_redirect:
                yield response
                return
            target = str(response.url.join(response.headers.get("location", "")))
        finally:
            response.close()
        why = refusal(url, current, target)
        if why is not None:
            raise RedirectRefused(target, why)
        current = target
    raise RedirectRefused(current, f"it redirects more than {MAX_REDIRECTS} times")
