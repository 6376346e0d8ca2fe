"""The numeric building blocks of the lifelong-learning metrics (pure functions on lists of floats)."""

from __future__ import annotations

import math
from statistics import fmean, median

SCALE_LOW = 1.0
SCALE_HIGH = 101.0
TERMINAL_FRACTION = 0.1
MAX_WINDOW = 100


def normalise(value: float, low: float, high: float) -> float:
    """`value` on the task's range [low, high] mapped to 1..101: 1 + 100 (value - low) / (high - low).

    A task whose values never vary (high == low) carries no information; its values all map to 1."""
    if high <= low:
        return SCALE_LOW
    return SCALE_LOW + (SCALE_HIGH - SCALE_LOW) * (value - low) / (high - low)


def smoothing_window(n: int) -> int:
    """The window of the learning-curve moving average: min(floor(0.2 n), 100)."""
    return min(int(0.2 * n), MAX_WINDOW)


def smooth(values: list[float], window: int | None = None) -> list[float]:
    """Centred moving average with window w (default `smoothing_window(len(values))`), shrunk at the ends.

    s_i = mean(x_j for j in [i - a, i + b] within 0..n-1), a = floor((w - 1) / 2), b = w - 1 - a.
    A window below 2 leaves the values as they are."""
    n = len(values)
    w = smoothing_window(n) if window is None else window
    if w < 2:
        return list(values)
    a = (w - 1) // 2
    b = w - 1 - a
    return [fmean(values[max(0, i - a):min(n, i + b + 1)]) for i in range(n)]


def saturation(curve: list[float]) -> tuple[float, int]:
    """(saturation value, experiences to saturation): max(s), and 1 + the first index where s reaches it."""
    top = max(curve)
    return top, curve.index(top) + 1


def terminal(curve: list[float], fraction: float = TERMINAL_FRACTION) -> float:
    """Mean of the last k = max(1, ceil(fraction * n)) values."""
    k = max(1, math.ceil(fraction * len(curve)))
    return fmean(curve[-k:])


def first_reaching(curve: list[float], level: float) -> int | None:
    """1 + the first index where the curve is at or above `level`, or None when it never is."""
    for i, value in enumerate(curve):
        if value >= level:
            return i + 1
    return None


def theil_sen_slope(values: list[float]) -> float:
    """Median of the pairwise slopes (y_j - y_i) / (j - i), i < j, of values taken at x = 0, 1, 2, ...

    Needs at least two values."""
    if len(values) < 2:
        raise ValueError("a slope needs at least two values")
    return float(median((values[j] - values[i]) / (j - i)
                        for i in range(len(values)) for j in range(i + 1, len(values))))


def ratio(before: float, after: float) -> float:
    """Transfer ratio tp2 / tp1 (values on the 1..101 scale, so tp1 > 0)."""
    return after / before


def contrast(before: float, after: float) -> float:
    """Transfer contrast (tp2 - tp1) / (tp1 + tp2)."""
    return (after - before) / (after + before)
