"""The wait a server asks for: `retry-after-ms`, or `Retry-After` in seconds or as an HTTP date."""

from __future__ import annotations

import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any

from ltm_harness._guard.limits import MAX_SECONDS


def retry_after_seconds(headers: Mapping[str, Any] | None) -> float | None:
    """Seconds to wait (never negative, never more than MAX_SECONDS), or None when the headers ask nothing."""
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return _bounded(float(ms) / 1000)
        except (TypeError, ValueError):
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return _bounded(float(value))
    except (TypeError, ValueError):
        pass
    try:
        when = parsedate_to_datetime(str(value))
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        return None
    return _bounded(when.timestamp() - time.time())


def _bounded(seconds: float) -> float | None:
    if seconds != seconds:  # NaN
        return None
    return min(max(0.0, seconds), MAX_SECONDS)
