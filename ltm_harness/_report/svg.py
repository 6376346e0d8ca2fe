"""Charts as inline SVG, drawn here: the shared drawing primitives and the score bars per dataset (the score panels
against a token quantity are in svg_score.py, score against cost in svg_cost.py).

Every function returns SVG markup (a string) with all text escaped; colours are given by the caller,
one per agent name. The same agent shown again (another run of a comparison, another config of a study) has the
same colour and a `variant` above 0: its lines are dashed and its bars and dots lighter. Charts carry <title>
tooltips, so a reader can hover a bar or a point for its numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape


INK = "#333"
GRID = "#ddd"
FONT = 'font-family="system-ui, sans-serif"'
DASHES = ("6 3", "2 3", "8 3 2 3")  # the lines of an agent's later appearances on a page (variant 1, 2, 3, 4 ...)


def dash(variant: int) -> str:
    return f' stroke-dasharray="{DASHES[(variant - 1) % len(DASHES)]}"' if variant else ""


def mark(colour: str, variant: int) -> str:
    """How a mean or a span point is filled: solid, or (the same agent again) hollow."""
    return f'fill="#fff" stroke="{colour}" stroke-width="2"' if variant else f'fill="{colour}" stroke="#fff"'


def px(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


def svg_doc(width: float, height: float, label: str, body: list[str]) -> str:
    return (f'<svg class="chart" width="{px(width)}" height="{px(height)}" viewBox="0 0 {px(width)} {px(height)}" '
            f'role="img" aria-label="{escape(label)}" {FONT} font-size="11">' + "".join(body) + "</svg>")


def text_at(x: float, y: float, text: str, anchor: str = "middle", extra: str = "") -> str:
    return f'<text x="{px(x)}" y="{px(y)}" text-anchor="{anchor}" fill="{INK}"{extra}>{escape(text)}</text>'




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


def y_axis(body: list[str], left: float, right: float, top: float, height: float, ticks: list[float],
            fmt: str = "{:.2g}") -> None:
    hi = ticks[-1]
    for t in ticks:
        y = top + height - height * t / hi
        body.append(f'<line x1="{px(left)}" x2="{px(right)}" y1="{px(y)}" y2="{px(y)}" stroke="{GRID}"/>')
        body.append(text_at(left - 4, y + 4, fmt.format(t), "end"))


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
    body = [text_at(width / 2, 14, title, extra=' font-weight="600"')]
    ticks = [0.0, top_value / 2, top_value]
    y_axis(body, left, width - 6, top, plot_h, ticks)
    base = top + plot_h
    for i, b in enumerate(bars):
        x = left + 4 + i * (bw + 4)
        tip = escape(f"{b.label}: {'no result' if b.value is None else f'{b.value:.2f} ± {b.std:.2f}'}{b.note}")
        if b.value is None:
            body.append(f'<g><title>{tip}</title>{text_at(x + bw / 2, base - 3, "–")}</g>')
            continue
        h = max(plot_h * min(b.value, top_value) / top_value, 0.0)
        whisker = ""
        if b.std > 0:
            y1 = base - plot_h * min(b.value + b.std, top_value) / top_value
            y2 = base - plot_h * max(b.value - b.std, 0.0) / top_value
            cx = x + bw / 2
            whisker = (f'<line x1="{px(cx)}" x2="{px(cx)}" y1="{px(y1)}" y2="{px(y2)}" stroke="{INK}"/>'
                       f'<line x1="{px(cx - 3)}" x2="{px(cx + 3)}" y1="{px(y1)}" y2="{px(y1)}" stroke="{INK}"/>')
        # A zero score still gets a visible sliver, so "scored 0" differs from "no result".
        light = f' fill-opacity="0.4" stroke="{b.colour}"' if b.variant else ""
        body.append(f'<g class="bar"><title>{tip}</title><rect x="{px(x)}" y="{px(base - max(h, 1.5))}" '
                    f'width="{px(bw)}" height="{px(max(h, 1.5))}" fill="{b.colour}"{light}/>{whisker}</g>')
    body.append(f'<line x1="{px(left)}" x2="{px(width - 6)}" y1="{px(base)}" y2="{px(base)}" stroke="{INK}"/>')
    return svg_doc(width, height, title, body)
