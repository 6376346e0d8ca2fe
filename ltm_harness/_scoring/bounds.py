"""What a score must be, wherever one comes from (a dataset's `evaluate_correct`, a continual callback, a results
file): numbers (not booleans or strings), finite, `max_score > 0` and `0 <= score <= max_score`."""

from __future__ import annotations

import math
from typing import Any


def score_problem(score: Any, max_score: Any, reasons: Any = ()) -> str | None:
    """Why (score, max_score, reasons) is not a valid score, or None when it is."""
    for name, value in (("score", score), ("max_score", max_score)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"{name} is {type(value).__name__} {_short(value)}, not a number"
        if not math.isfinite(value):
            return f"{name} is {value!r}, not a finite number"
    if max_score <= 0:
        return f"max_score is {max_score!r}; it must be above 0"
    if not 0 <= score <= max_score:
        return f"score {score!r} is outside 0..{max_score!r}"
    if not isinstance(reasons, (list, tuple)) or not all(isinstance(r, str) for r in reasons):
        return "reasons must be a list of strings"
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "..."
