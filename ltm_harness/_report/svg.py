"""Charts as inline SVG, drawn here: score bars per dataset, score against achieved gap, cost against score.

Every function returns SVG markup (a string) with all text escaped; colours are given by the caller,
one per agent name. The same agent shown again (another run of a comparison, another config of a study) has the
same colour and a `variant` above 0: its lines are dashed and its bars and dots lighter. Charts carry <title>
tooltips, so a reader can hover a bar or a point for its numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape
from typing import Any, Callable

from ltm_harness._results.models import gap_bin
from ltm_harness._tokens import plural, short_count

INK = "#333"
GRID = "#ddd"
FONT = 'font-family="system-ui, sans-serif"'
DASHES = ("6 3", "2 3", "8 3 2 3")  # the lines of an agent's later appearances on a page (variant 1, 2, 3, 4 ...)


def _dash(variant: int) -> str:
    return f' stroke-dasharray="{DASHES[(variant - 1) % len(DASHES)]}"' if variant else ""


def _mark(colour: str, variant: int) -> str:
    """How a mean or a span point is filled: solid, or (the same agent again) hollow."""
    return f'fill="#fff" stroke="{colour}" stroke-width="2"' if variant else f'fill="{colour}" stroke="#fff"'


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
    variant: int = 0  # above 0: the same agent again (lighter, outlined)


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
        light = f' fill-opacity="0.4" stroke="{b.colour}"' if b.variant else ""
        body.append(f'<g class="bar"><title>{tip}</title><rect x="{_f(x)}" y="{_f(base - max(h, 1.5))}" '
                    f'width="{_f(bw)}" height="{_f(max(h, 1.5))}" fill="{b.colour}"{light}/>{whisker}</g>')
    body.append(f'<line x1="{_f(left)}" x2="{_f(width - 6)}" y1="{_f(base)}" y2="{_f(base)}" stroke="{INK}"/>')
    return _svg(width, height, title, body)


@dataclass
class Series:
    label: str
    colour: str
    points: list[tuple[float, float, str]] = field(default_factory=list)  # x, y, what the point is
    variant: int = 0  # above 0: the same agent again (dashed line, hollow marks)


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


MIN_BIN = 4  # tests a bin needs before its mean is drawn and joined by a line; fewer are shown as their points
CELL = 6.0  # pixels: points of one agent closer than this (at the same score) are drawn as one, sized by count
DODGE = 6.0  # pixels between the points of different agents that fall on the same spot
LINE_DODGE = 2.0  # pixels between the equal means of agents in one bin, so equal lines show side by side


def _log_score_frame(title: str, xs: list[float], width: float, height: float, top: float, x_label: str,
                     empty: str) -> "tuple[list[str], Callable[[float], float], Callable[[float], float]] | str":
    """The frame of a chart of scores (0..1, linear) against a token quantity (log scale): title, axes, grid lines
    and x label, and the two scales (x, y) to place marks with; or the whole chart saying `empty` when no x is
    positive."""
    xs = [x for x in xs if x > 0]
    left, right, bottom = 44.0, 14.0, 40.0
    plot_w, plot_h = width - left - right, height - top - bottom
    body = [_text(width / 2, 15, title, extra=' font-weight="600"')]
    if not xs:
        body.append(_text(width / 2, height / 2, empty))
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
        x = sx(t)
        body.append(f'<line x1="{_f(x)}" x2="{_f(x)}" y1="{_f(top)}" y2="{_f(base)}" stroke="{GRID}"/>')
        body.append(_text(x, base + 14, short_count(t)))
    body.append(_text(left + plot_w / 2, height - 6, x_label))
    body.append(f'<line x1="{_f(left)}" x2="{_f(width - right)}" y1="{_f(base)}" y2="{_f(base)}" stroke="{INK}"/>')
    return body, sx, sy


def _bin_edges(x: float) -> tuple[int, int]:
    return gap_bin(int(x))


def score_panel(title: str, series: list[Series], axis: str = "achieved information gap (tokens, log scale)",
                width: float = 640, height: float = 300, draw_points: bool = True, min_bin: int = MIN_BIN,
                empty: str = "no information gaps were measured") -> str:
    """Score (0..1) of every test against a token quantity on the x axis (log scale: the information gap, the memory
    distance, ...), per agent.

    Tests are binned by that quantity (bins double in width, as in the results' curves); a bin with at least
    `min_bin` tests gets its mean drawn, and consecutive such bins are joined by a line. A bin with fewer tests is no
    evidence for a trend, so only its tests' points are drawn (also when `draw_points` is off, which leaves out the
    other points of big runs). Points that would cover each other are made visible, deterministically: one agent's
    tests on the same spot are one dot whose size grows with their count (the tooltip lists them), and the dots of
    different agents on one spot are set side by side, and agents with equal means are drawn LINE_DODGE pixels apart.
    """
    frame = _log_score_frame(title, [x for s in series for x, _, _ in s.points], width, height, 34.0, axis, empty)
    if isinstance(frame, str):
        return frame
    body, sx, sy = frame
    # Per agent, its bins in order: a mean (x, y, tip) for a bin with enough tests, None for one with too few; and
    # which points are drawn: all of them, or (for big runs) only those of bins too small for a mean.
    shown: list[list[tuple[float, float, str]]] = []
    trails: list[list[tuple[tuple[int, int], float, float, str] | None]] = []
    for s in series:
        bins: dict[tuple[int, int], list[tuple[float, float, str]]] = {}
        for g, v, what in s.points:
            if g > 0:
                bins.setdefault(_bin_edges(g), []).append((g, v, what))
        keep: list[tuple[float, float, str]] = []
        trail: list[tuple[tuple[int, int], float, float, str] | None] = []
        for edges in sorted(bins):
            members = bins[edges]
            if len(members) < min_bin:
                keep += members
                trail.append(None)
                continue
            if draw_points:
                keep += members
            mg = 10 ** (sum(math.log10(g) for g, _, _ in members) / len(members))
            mv = sum(v for _, v, _ in members) / len(members)
            tip = f"{s.label}: mean score {mv:.2f} over {plural(len(members), 'test')} from {short_count(edges[0])} to {short_count(edges[1])} tokens"
            trail.append((edges, sx(mg), sy(mv), tip))
        shown.append(keep)
        trails.append(trail)
    # Agents with the same mean in a bin are drawn LINE_DODGE pixels apart, so equal lines show as parallel ones.
    ties: dict[tuple[tuple[int, int], int], list[int]] = {}
    for i, trail in enumerate(trails):
        for m in trail:
            if m is not None:
                ties.setdefault((m[0], round(m[2] / 3)), []).append(i)
    lift = {(key[0], i): (group.index(i) - (len(group) - 1) / 2) * LINE_DODGE for key, group in ties.items() for i in group}
    body.append(f'<g class="points">{"".join(_dots(series, shown, sx, sy))}</g>')
    means: list[str] = []
    for i, (s, trail) in enumerate(zip(series, trails)):
        run: list[tuple[float, float, str]] = []  # consecutive bins with a mean: one polyline
        for m in [*trail, None]:
            if m is None:
                if len(run) > 1:
                    body.append(_polyline(run, s.colour, s.variant))
                run = []
                continue
            edges, mx, my, tip = m
            my += lift[(edges, i)]
            run.append((mx, my, tip))
            means.append(f'<rect class="mean" x="{_f(mx - 4)}" y="{_f(my - 4)}" width="8" height="8" '
                         f'{_mark(s.colour, s.variant)} transform="rotate(45 {_f(mx)} {_f(my)})">'
                         f"<title>{escape(tip)}</title></rect>")
    body += means
    return _svg(width, height, title, body)


def _polyline(run: list[tuple[float, float, str]], colour_: str, variant: int = 0) -> str:
    path = " ".join(f"{_f(x)},{_f(y)}" for x, y, _ in run)
    return f'<polyline points="{path}" fill="none" stroke="{colour_}" stroke-width="2"{_dash(variant)}/>'


def _dots(series: list[Series], shown: list[list[tuple[float, float, str]]], sx: Any, sy: Any) -> list[str]:
    """The points of every agent, grouped by spot: one dot per agent and spot, sized by its count; agents sharing
    a spot side by side."""
    spots: dict[tuple[int, int], dict[int, list[tuple[float, float, str]]]] = {}
    for i, points in enumerate(shown):
        for g, v, what in points:
            key = (round(sx(g) / CELL), round(v * 40))
            spots.setdefault(key, {}).setdefault(i, []).append((g, v, what))
    out = []
    for key in sorted(spots):
        agents = spots[key]
        order = sorted(agents)
        for j, i in enumerate(order):
            members = sorted(agents[i], key=lambda m: (m[0], m[2]))
            n = len(members)
            cx = sum(sx(g) for g, _, _ in members) / n + (j - (len(order) - 1) / 2) * DODGE
            cy = sy(sum(v for _, v, _ in members) / n)
            r = min(3.0 + 1.5 * math.sqrt(n - 1), 9.0)
            s = series[i]
            if n == 1:
                g, v, what = members[0]
                tip = f"{s.label}: {what}: score {v:.2f} at {g:,.0f} tokens"
            else:
                listed = ", ".join(f"{what} ({v:.2f} at {g:,.0f})" for g, v, what in members[:8])
                more = f" and {n - 8} more" if n > 8 else ""
                tip = f"{s.label}: {plural(n, 'test')} here: {listed}{more}"
            out.append(f'<circle cx="{_f(cx)}" cy="{_f(cy)}" r="{_f(r)}" fill="{s.colour}" '
                       f'fill-opacity="{0.12 if s.variant else 0.55}" '
                       f'stroke="{s.colour}" data-count="{n}"><title>{escape(tip)}</title></circle>')
    return out


def _label_box(x: float, y: float, text: str, anchor: str) -> tuple[float, float, float, float]:
    """The box (x0, y0, x1, y1) a label of 11 px text takes, baseline at y."""
    w = 6.2 * len(text) + 2
    x0 = x if anchor == "start" else x - w if anchor == "end" else x - w / 2
    return (x0, y - 10, x0 + w, y + 3)


def _overlaps(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


# Where a label may go beside its point: (dx, dy, anchor, far from the point so drawn with a leader line).
_LABEL_PLACES = [(8.0, 4.0, "start", False), (-8.0, 4.0, "end", False), (0.0, -9.0, "middle", False),
                 (0.0, 16.0, "middle", False)] + [
    (dx, 4.0 + sign * dist, anchor, True) for dist in (14.0, 28.0, 42.0, 56.0)
    for dx, anchor in ((8.0, "start"), (-8.0, "end")) for sign in (-1, 1)]


def cost_chart(title: str, points: list[tuple[str, str, float, float]], width: float = 640,
               height: float = 300) -> str:
    """Benchmark score (share of the maximum) against cost in USD, one labelled point per agent.

    Labels are placed where they cover no other label and no point: right of their point, else left, above, below,
    then further off with a thin leader line to the point; a label that finds no free place is left to the point's
    tooltip (the legend above the charts names every colour)."""
    left, right, top, bottom = 44.0, 24.0, 26.0, 40.0
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
    ordered = sorted(points, key=lambda p: (-p[3], p[2], p[0]))
    spots = [(sx(cost), sy(share)) for _, _, cost, share in ordered]
    taken = [(x - 6, y - 6, x + 6, y + 6) for x, y in spots]
    for (label, col, cost, share), (x, y) in zip(ordered, spots):
        short = label if len(label) <= 24 else label[:23] + "…"
        placed = None
        for dx, dy, anchor, far in _LABEL_PLACES:
            box = _label_box(x + dx, y + dy, short, anchor)
            if box[0] < 0 or box[2] > width or box[1] < top - 4 or box[3] > base + 2:
                continue
            if not any(_overlaps(box, other) for other in taken):
                placed = (x + dx, y + dy, anchor, box, far)
                break
        text = ""
        if placed is not None:
            lx, ly, anchor, box, dist = placed
            taken.append(box)
            leader = (f'<line x1="{_f(x)}" x2="{_f(lx)}" y1="{_f(y)}" y2="{_f(ly - 4)}" stroke="{GRID}"/>'
                      if dist else "")
            text = leader + _text(lx, ly, short, anchor, extra=' class="label"')
        body.append(f'<g class="point"><title>{escape(f"{label}: benchmark score {share:.0%} of max, cost {money(cost)}")}</title>'
                    f'<circle cx="{_f(x)}" cy="{_f(y)}" r="5" fill="{col}"/>{text}</g>')
    return _svg(width, height, title, body)


@dataclass
class Curve:
    """One agent's mean score at each span, with the bounds of its interval (None: no interval)."""

    label: str
    colour: str
    points: list[tuple[float, float, float | None, float | None, str]] = field(default_factory=list)  # x, mean, lo, hi, note
    variant: int = 0  # above 0: the same agent again (dashed line, hollow points)


def span_chart(title: str, curves: list[Curve], width: float = 520, height: float = 260,
               x_label: str = "memory span (tokens, log scale)") -> str:
    """Mean score (0..1) against span (log scale), a line per agent, with a whisker for each point's interval."""
    frame = _log_score_frame(title, [x for c in curves for x, *_ in c.points], width, height, 26.0, x_label,
                             "no finished cell")
    if isinstance(frame, str):
        return frame
    body, sx, sy = frame
    n = len(curves)
    for i, c in enumerate(curves):
        shift = (i - (n - 1) / 2) * 3.0  # agents' whiskers side by side rather than on top of each other
        pts = sorted(p for p in c.points if p[0] > 0)
        if len(pts) > 1:
            path = " ".join(f"{_f(sx(x) + shift)},{_f(sy(m))}" for x, m, *_ in pts)
            body.append(f'<polyline points="{path}" fill="none" stroke="{c.colour}" stroke-width="2"{_dash(c.variant)}/>')
        for x, m, low, high, note in pts:
            cx = sx(x) + shift
            whisker = ""
            if low is not None and high is not None:
                whisker = (f'<line x1="{_f(cx)}" x2="{_f(cx)}" y1="{_f(sy(high))}" y2="{_f(sy(low))}" '
                           f'stroke="{c.colour}"/>')
            interval = "" if low is None or high is None else f" [{low:.2f}, {high:.2f}]"
            tip = f"{c.label}: {m:.2f}{interval} at span {short_count(x)}{note}"
            body.append(f'<g class="point"><title>{escape(tip)}</title>{whisker}<circle cx="{_f(cx)}" cy="{_f(sy(m))}" '
                        f'r="4" {_mark(c.colour, c.variant)}/></g>')
    return _svg(width, height, title, body)
