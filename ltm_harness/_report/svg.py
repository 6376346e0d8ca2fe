"""Charts as inline SVG, drawn here: score bars per dataset, score against achieved gap, cost against score.

Every function returns SVG markup (a string) with all text escaped; colours are given by the caller,
one per agent. Charts carry <title> tooltips, so a reader can hover a bar or a point for its numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

from ltm_harness._tokens import short_count

PALETTE = ["#3366cc", "#dc3912", "#ff9900", "#109618", "#990099", "#0099c6", "#dd4477", "#66aa00",
           "#b82e2e", "#316395", "#994499", "#22aa99"]
INK = "#333"
GRID = "#ddd"
FONT = 'font-family="system-ui, sans-serif"'


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def _f(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _svg(width: float, height: float, label: str, body: list[str]) -> str:
    return (f'<svg class="chart" width="{_f(width)}" height="{_f(height)}" viewBox="0 0 {_f(width)} {_f(height)}" '
            f'role="img" aria-label="{escape(label)}" {FONT} font-size="11">' + "".join(body) + "</svg>")


def _text(x: float, y: float, text: str, anchor: str = "middle", extra: str = "") -> str:
    return f'<text x="{_f(x)}" y="{_f(y)}" text-anchor="{anchor}" fill="{INK}"{extra}>{escape(text)}</text>'




def money(x: float) -> str:
    if x == 0:
        return "$0"
    if x >= 100:
        return f"${x:,.0f}"
    if x >= 1:
        return f"${x:.2f}"
    if x >= 0.01:
        return f"${x:.2g}"
    return f"${x:.4f}".rstrip("0") if x >= 0.0001 else f"${x:.1e}"


def nice_ticks(hi: float, count: int = 4) -> list[float]:
    """Round ticks from 0 to at least `hi`."""
    if hi <= 0:
        return [0.0, 1.0]
    raw = hi / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    n = math.ceil(hi / step - 1e-9)
    return [round(i * step, 12) for i in range(n + 1)]


def _y_axis(body: list[str], left: float, right: float, top: float, height: float, ticks: list[float],
            fmt: str = "{:.2g}") -> None:
    hi = ticks[-1]
    for t in ticks:
        y = top + height - height * t / hi
        body.append(f'<line x1="{_f(left)}" x2="{_f(right)}" y1="{_f(y)}" y2="{_f(y)}" stroke="{GRID}"/>')
        body.append(_text(left - 4, y + 4, fmt.format(t), "end"))


@dataclass
class Bar:
    label: str
    colour: str
    value: float | None  # None: no result for this agent
    std: float = 0.0
    note: str = ""


def bar_chart(title: str, bars: list[Bar], top_value: float = 1.0) -> str:
    """One small chart: a bar per agent (mean with a ± std whisker), values from 0 to `top_value`."""
    n = max(len(bars), 1)
    bw = max(8.0, min(26.0, 220.0 / n))
    left, top, plot_h = 34.0, 24.0, 110.0
    width = left + n * (bw + 4) + 12
    width = max(width, 40 + 7 * len(title))
    height = top + plot_h + 14
    body = [_text(width / 2, 14, title, extra=' font-weight="600"')]
    ticks = [0.0, top_value / 2, top_value]
    _y_axis(body, left, width - 6, top, plot_h, ticks)
    base = top + plot_h
    for i, b in enumerate(bars):
        x = left + 4 + i * (bw + 4)
        tip = escape(f"{b.label}: {'no result' if b.value is None else f'{b.value:.2f} ± {b.std:.2f}'}{b.note}")
        if b.value is None:
            body.append(f'<g><title>{tip}</title>{_text(x + bw / 2, base - 3, "–")}</g>')
            continue
        h = max(plot_h * min(b.value, top_value) / top_value, 0.0)
        whisker = ""
        if b.std > 0:
            y1 = base - plot_h * min(b.value + b.std, top_value) / top_value
            y2 = base - plot_h * max(b.value - b.std, 0.0) / top_value
            cx = x + bw / 2
            whisker = (f'<line x1="{_f(cx)}" x2="{_f(cx)}" y1="{_f(y1)}" y2="{_f(y2)}" stroke="{INK}"/>'
                       f'<line x1="{_f(cx - 3)}" x2="{_f(cx + 3)}" y1="{_f(y1)}" y2="{_f(y1)}" stroke="{INK}"/>')
        # A zero score still gets a visible sliver, so "scored 0" differs from "no result".
        body.append(f'<g class="bar"><title>{tip}</title><rect x="{_f(x)}" y="{_f(base - max(h, 1.5))}" '
                    f'width="{_f(bw)}" height="{_f(max(h, 1.5))}" fill="{b.colour}"/>{whisker}</g>')
    body.append(f'<line x1="{_f(left)}" x2="{_f(width - 6)}" y1="{_f(base)}" y2="{_f(base)}" stroke="{INK}"/>')
    return _svg(width, height, title, body)


@dataclass
class Series:
    label: str
    colour: str
    points: list[tuple[float, float, str]] = field(default_factory=list)  # x, y, what the point is


def _log_ticks(lo: float, hi: float, room: float) -> list[float]:
    """Ticks at 1-2-5 steps between lo and hi, thinned to 1-5 or 1 steps when `room` pixels are too few."""
    for mantissas in ((1, 2, 5), (1, 5), (1,)):
        ticks = [m * 10.0 ** k for k in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
                 for m in mantissas if lo <= m * 10.0 ** k <= hi]
        if len(ticks) * 42 <= room:
            break
    return ticks


def _log_bounds(lo: float, hi: float) -> tuple[float, float]:
    """The nearest 1-2-5 steps below `lo` and above `hi` (a span of at least one step)."""
    steps = [m * 10.0 ** k for k in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 2) for m in (1, 2, 5)]
    below = max(t for t in steps if t <= lo)
    above = min(t for t in steps if t >= hi)
    if above <= below:
        above = min(t for t in steps if t > below)
    return below, above


def gap_chart(title: str, series: list[Series], width: float = 640, height: float = 300, draw_points: bool = True,
              x_label: str = "achieved information gap (tokens, log scale)") -> str:
    """Score (0..1) of every test against its achieved information gap (log scale), per agent; a line
    through the mean score of each half-decade of gaps."""
    gaps = [x for s in series for x, _, _ in s.points if x > 0]
    left, right, top, bottom = 44.0, 14.0, 26.0, 40.0
    plot_w, plot_h = width - left - right, height - top - bottom
    body = [_text(width / 2, 15, title, extra=' font-weight="600"')]
    if not gaps:
        body.append(_text(width / 2, height / 2, "no information gaps were measured"))
        return _svg(width, height, title, body)
    lo, hi = _log_bounds(min(gaps), max(gaps))
    llo, lhi = math.log10(lo), math.log10(hi)

    def sx(g: float) -> float:
        return left + plot_w * (math.log10(max(g, lo)) - llo) / (lhi - llo)

    def sy(v: float) -> float:
        return top + plot_h * (1 - max(0.0, min(v, 1.0)))

    _y_axis(body, left, width - right, top, plot_h, [0.0, 0.25, 0.5, 0.75, 1.0])
    base = top + plot_h
    for t in _log_ticks(lo, hi, plot_w):
        x = sx(t)
        body.append(f'<line x1="{_f(x)}" x2="{_f(x)}" y1="{_f(top)}" y2="{_f(base)}" stroke="{GRID}"/>')
        body.append(_text(x, base + 14, short_count(t)))
    body.append(_text(left + plot_w / 2, height - 6, x_label))
    body.append(f'<line x1="{_f(left)}" x2="{_f(width - right)}" y1="{_f(base)}" y2="{_f(base)}" stroke="{INK}"/>')
    n = len(series)
    for i, s in enumerate(series):
        shift = (i - (n - 1) / 2) * 2.5  # agents' points side by side rather than on top of each other
        dots = []
        bins: dict[int, list[tuple[float, float]]] = {}
        for g, v, what in s.points:
            if g <= 0:
                continue
            bins.setdefault(math.floor(math.log10(g) * 2), []).append((g, v))
            if draw_points:
                dots.append(f'<circle cx="{_f(sx(g))}" cy="{_f(sy(v) + shift)}" r="3" fill="{s.colour}" fill-opacity="0.45">'
                            f'<title>{escape(f"{s.label}: {what}: score {v:.2f} at {g:,.0f} tokens")}</title></circle>')
        body.append(f'<g class="points">{"".join(dots)}</g>')
        means = []
        for key in sorted(bins):
            members = bins[key]
            mg = 10 ** (sum(math.log10(g) for g, _ in members) / len(members))
            mv = sum(v for _, v in members) / len(members)
            tip = (f"{s.label}: mean score {mv:.2f} over {len(members)} test(s) with gaps "
                   f"{short_count(min(g for g, _ in members))}–{short_count(max(g for g, _ in members))}")
            means.append((sx(mg), sy(mv), tip))
        if len(means) > 1:
            path = " ".join(f"{_f(x)},{_f(y)}" for x, y, _ in means)
            body.append(f'<polyline points="{path}" fill="none" stroke="{s.colour}" stroke-width="2"/>')
        for x, y, tip in means:
            body.append(f'<circle cx="{_f(x)}" cy="{_f(y)}" r="4.5" fill="{s.colour}" stroke="#fff">'
                        f'<title>{escape(tip)}</title></circle>')
    return _svg(width, height, title, body)


def cost_chart(title: str, points: list[tuple[str, str, float, float]], width: float = 640,
               height: float = 300) -> str:
    """Benchmark score (share of the maximum) against cost in USD, one labelled point per agent."""
    left, right, top, bottom = 44.0, 120.0, 26.0, 40.0
    plot_w, plot_h = width - left - right, height - top - bottom
    body = [_text(width / 2, 15, title, extra=' font-weight="600"')]
    costs = [c for _, _, c, _ in points]
    ticks = nice_ticks(max(costs, default=0.0))
    hi = ticks[-1]

    def sx(c: float) -> float:
        return left + plot_w * c / hi

    def sy(v: float) -> float:
        return top + plot_h * (1 - max(0.0, min(v, 1.0)))

    _y_axis(body, left, left + plot_w, top, plot_h, [0.0, 0.25, 0.5, 0.75, 1.0])
    base = top + plot_h
    for t in ticks:
        body.append(f'<line x1="{_f(sx(t))}" x2="{_f(sx(t))}" y1="{_f(top)}" y2="{_f(base)}" stroke="{GRID}"/>')
        body.append(_text(sx(t), base + 14, money(t)))
    body.append(f'<line x1="{_f(left)}" x2="{_f(left + plot_w)}" y1="{_f(base)}" y2="{_f(base)}" stroke="{INK}"/>')
    caption = "cost (USD)" if any(costs) else "cost (USD): no agent reported a cost"
    body.append(_text(left + plot_w / 2, height - 6, caption))
    placed: list[tuple[float, float]] = []  # label positions so far: labels near each other are moved apart
    for label, col, cost, share in sorted(points, key=lambda p: (-p[3], p[2])):
        x, y = sx(cost), sy(share)
        ly = y + 4
        while any(abs(px - x) < 90 and abs(py - ly) < 12 for px, py in placed):
            ly += 12
        placed.append((x, ly))
        short = label if len(label) <= 20 else label[:19] + "…"
        body.append(f'<g class="point"><title>{escape(f"{label}: benchmark score {share:.0%} of max, cost {money(cost)}")}</title>'
                    f'<circle cx="{_f(x)}" cy="{_f(y)}" r="5" fill="{col}"/>'
                    f'{_text(x + 8, ly, short, "start")}</g>')
    return _svg(width, height, title, body)


@dataclass
class Curve:
    """One agent's mean score at each span, with the bounds of its interval (None: no interval)."""

    label: str
    colour: str
    points: list[tuple[float, float, float | None, float | None, str]] = field(default_factory=list)  # x, mean, lo, hi, note


def span_chart(title: str, curves: list[Curve], width: float = 520, height: float = 260,
               x_label: str = "memory span (tokens, log scale)") -> str:
    """Mean score (0..1) against span (log scale), a line per agent, with a whisker for each point's interval."""
    xs = [x for c in curves for x, *_ in c.points if x > 0]
    left, right, top, bottom = 44.0, 14.0, 26.0, 40.0
    plot_w, plot_h = width - left - right, height - top - bottom
    body = [_text(width / 2, 15, title, extra=' font-weight="600"')]
    if not xs:
        body.append(_text(width / 2, height / 2, "no finished cell"))
        return _svg(width, height, title, body)
    lo, hi = _log_bounds(min(xs), max(xs))
    llo, lhi = math.log10(lo), math.log10(hi)

    def sx(v: float) -> float:
        return left + plot_w * (math.log10(max(v, lo)) - llo) / (lhi - llo)

    def sy(v: float) -> float:
        return top + plot_h * (1 - max(0.0, min(v, 1.0)))

    _y_axis(body, left, width - right, top, plot_h, [0.0, 0.25, 0.5, 0.75, 1.0])
    base = top + plot_h
    for t in _log_ticks(lo, hi, plot_w):
        body.append(f'<line x1="{_f(sx(t))}" x2="{_f(sx(t))}" y1="{_f(top)}" y2="{_f(base)}" stroke="{GRID}"/>')
        body.append(_text(sx(t), base + 14, short_count(t)))
    body.append(_text(left + plot_w / 2, height - 6, x_label))
    body.append(f'<line x1="{_f(left)}" x2="{_f(width - right)}" y1="{_f(base)}" y2="{_f(base)}" stroke="{INK}"/>')
    n = len(curves)
    for i, c in enumerate(curves):
        shift = (i - (n - 1) / 2) * 3.0  # agents' whiskers side by side rather than on top of each other
        pts = sorted(p for p in c.points if p[0] > 0)
        if len(pts) > 1:
            path = " ".join(f"{_f(sx(x) + shift)},{_f(sy(m))}" for x, m, *_ in pts)
            body.append(f'<polyline points="{path}" fill="none" stroke="{c.colour}" stroke-width="2"/>')
        for x, m, low, high, note in pts:
            cx = sx(x) + shift
            whisker = ""
            if low is not None and high is not None:
                whisker = (f'<line x1="{_f(cx)}" x2="{_f(cx)}" y1="{_f(sy(high))}" y2="{_f(sy(low))}" '
                           f'stroke="{c.colour}"/>')
            interval = "" if low is None or high is None else f" [{low:.2f}, {high:.2f}]"
            tip = f"{c.label}: {m:.2f}{interval} at span {short_count(x)}{note}"
            body.append(f'<g class="point"><title>{escape(tip)}</title>{whisker}<circle cx="{_f(cx)}" cy="{_f(sy(m))}" '
                        f'r="4" fill="{c.colour}" stroke="#fff"/></g>')
    return _svg(width, height, title, body)
