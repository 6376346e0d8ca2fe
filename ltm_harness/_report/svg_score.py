"""Score charts on a log-scaled token axis, as inline SVG: score against a token quantity per test (the information
gap, the memory distance), binned means joined by lines, and a mean score per span with its interval."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape
from typing import Any, Callable

from ltm_harness._guard.limits import cut_words
from ltm_harness._report.svg import GRID, INK, dash, mark, px, svg_doc, text_at, y_axis
from ltm_harness._results.models import gap_bin
from ltm_harness._tokens import plural, short_count


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


LEFT = 44.0  # pixels left of the plot: the y axis's labels
INSET = 10.0  # pixels between the y axis and the smallest x (and the largest x and the right edge): no dot on a label


def x_range(series: "list[Series]") -> tuple[float, float] | None:
    """The x bounds that fit every positive x of `series` (None: none): give it to each panel of a row so that
    their x axes are the same."""
    xs = [x for s in series for x, _, _ in s.points if x > 0]
    return _log_bounds(min(xs), max(xs)) if xs else None


def _legend(series: "list[Series]", width: float, y: float) -> tuple[list[str], float]:
    """A legend for a chart of several lines, drawn in it under the title (a swatch and a label per series, wrapped
    to the width), and how tall it is."""
    out, x, row = [], LEFT, 0
    for s in series:
        w = 24 + 6.8 * len(s.label)  # a swatch, a gap, the label at about 6.8 px a character (11 px font)
        if x + w > width - 8 and x > LEFT:
            x, row = LEFT, row + 1
        top = y + 14 * row
        out.append(f'<rect x="{px(x)}" y="{px(top - 8)}" width="10" height="10" {mark(s.colour, s.variant)}/>')
        out.append(text_at(x + 14, top + 1, s.label, "start"))
        x += w
    return ['<g class="legend">', *out, "</g>"], 14.0 * (row + 1) if series else 0.0


def _log_score_frame(title: str, xs: list[float], width: float, height: float, top: float, x_label: str,
                     empty: str, bounds: tuple[float, float] | None = None, head: list[str] | None = None
                     ) -> "tuple[list[str], Callable[[float], float], Callable[[float], float]] | str":
    """The frame of a chart of scores (0..1, linear) against a token quantity (log scale): title, axes, grid lines
    and x label, and the two scales (x, y) to place marks with; or the whole chart saying `empty` when no x is
    positive. `bounds`: the x range (shared by a row of panels), else the one that fits `xs`; `head`: drawn under
    the title (a legend)."""
    xs = [x for x in xs if x > 0]
    left, right, bottom = LEFT, 14.0, 40.0
    plot_w, plot_h = width - left - right, height - top - bottom
    shown = cut_words(title, int(width / 6.6))  # bold 11 px: about 6.6 px a character; the whole title is its label
    body = [text_at(width / 2, 15, shown, extra=' font-weight="600"')] + (head or [])
    if not xs:
        body.append(text_at(width / 2, height / 2, empty))
        return svg_doc(width, height, title, body)
    lo, hi = bounds if bounds is not None else _log_bounds(min(xs), max(xs))
    llo, lhi = math.log10(lo), math.log10(hi)
    inner = plot_w - 2 * INSET

    def sx(v: float) -> float:
        return left + INSET + inner * (math.log10(min(max(v, lo), hi)) - llo) / (lhi - llo)

    def sy(v: float) -> float:
        return top + plot_h * (1 - max(0.0, min(v, 1.0)))

    y_axis(body, left, width - right, top, plot_h, [0.0, 0.25, 0.5, 0.75, 1.0])
    base = top + plot_h
    for t in _log_ticks(lo, hi, plot_w):
        x = sx(t)
        body.append(f'<line x1="{px(x)}" x2="{px(x)}" y1="{px(top)}" y2="{px(base)}" stroke="{GRID}"/>')
        body.append(text_at(x, base + 14, short_count(t)))
    body.append(text_at(left + plot_w / 2, height - 6, x_label))
    body.append(f'<line x1="{px(left)}" x2="{px(width - right)}" y1="{px(base)}" y2="{px(base)}" stroke="{INK}"/>')
    return body, sx, sy


def _bin_edges(x: float) -> tuple[int, int]:
    return gap_bin(int(x))


def score_panel(title: str, series: list[Series], axis: str = "achieved information gap (tokens, log scale)",
                width: float = 640, height: float = 300, draw_points: bool = True, min_bin: int = MIN_BIN,
                empty: str = "no information gaps were measured", bounds: tuple[float, float] | None = None,
                legend: bool = False) -> str:
    """Score (0..1) of every test against a token quantity on the x axis (log scale: the information gap, the memory
    distance, ...), per agent.

    Tests are binned by that quantity (bins double in width, as in the results' curves); a bin with at least
    `min_bin` tests gets its mean drawn, and consecutive such bins are joined by a line. A bin with fewer tests is no
    evidence for a trend, so only its tests' points are drawn (also when `draw_points` is off, which leaves out the
    other points of big runs). Points that would cover each other are made visible, deterministically: one agent's
    tests on the same spot are one dot whose size grows with their count (the tooltip lists them), and the dots of
    different agents on one spot are set side by side, and agents with equal means are drawn LINE_DODGE pixels apart.
    `bounds`: the x range (the same for a row of panels: `x_range`); `legend`: a legend of the series drawn under the
    title (for a chart whose lines are not the page's agents, e.g. a line per category).
    """
    head, extra = _legend(series, width, 32.0) if legend else ([], 0.0)
    frame = _log_score_frame(title, [x for s in series for x, _, _ in s.points], width, height + extra, 34.0 + extra,
                             axis, empty, bounds, head)
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
            means.append(f'<rect class="mean" x="{px(mx - 4)}" y="{px(my - 4)}" width="8" height="8" '
                         f'{mark(s.colour, s.variant)} transform="rotate(45 {px(mx)} {px(my)})">'
                         f"<title>{escape(tip)}</title></rect>")
    body += means
    return svg_doc(width, height + extra, title, body)


def _polyline(run: list[tuple[float, float, str]], colour_: str, variant: int = 0) -> str:
    path = " ".join(f"{px(x)},{px(y)}" for x, y, _ in run)
    return f'<polyline points="{path}" fill="none" stroke="{colour_}" stroke-width="2"{dash(variant)}/>'


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
            cx = max(cx, LEFT + r + 1)  # never over the y axis's labels
            s = series[i]
            if n == 1:
                g, v, what = members[0]
                tip = f"{s.label}: {what}: score {v:.2f} at {g:,.0f} tokens"
            else:
                listed = ", ".join(f"{what} ({v:.2f} at {g:,.0f})" for g, v, what in members[:8])
                more = f" and {n - 8} more" if n > 8 else ""
                tip = f"{s.label}: {plural(n, 'test')} here: {listed}{more}"
            out.append(f'<circle cx="{px(cx)}" cy="{px(cy)}" r="{px(r)}" fill="{s.colour}" '
                       f'fill-opacity="{0.12 if s.variant else 0.55}" '
                       f'stroke="{s.colour}" data-count="{n}"><title>{escape(tip)}</title></circle>')
    return out

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
            path = " ".join(f"{px(sx(x) + shift)},{px(sy(m))}" for x, m, *_ in pts)
            body.append(f'<polyline points="{path}" fill="none" stroke="{c.colour}" stroke-width="2"{dash(c.variant)}/>')
        for x, m, low, high, note in pts:
            cx = sx(x) + shift
            whisker = ""
            if low is not None and high is not None:
                whisker = (f'<line x1="{px(cx)}" x2="{px(cx)}" y1="{px(sy(high))}" y2="{px(sy(low))}" '
                           f'stroke="{c.colour}"/>')
            interval = "" if low is None or high is None else f" [{low:.2f}, {high:.2f}]"
            tip = f"{c.label}: {m:.2f}{interval} at span {short_count(x)}{note}"
            body.append(f'<g class="point"><title>{escape(tip)}</title>{whisker}<circle cx="{px(cx)}" cy="{px(sy(m))}" '
                        f'r="4" {mark(c.colour, c.variant)}/></g>')
    return svg_doc(width, height, title, body)
