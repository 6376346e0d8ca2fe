"""Score against cost as inline SVG: one labelled point per agent, labels placed where they cover nothing."""

from __future__ import annotations

from html import escape

from ltm_harness._report.svg import GRID, INK, money, nice_ticks, px, svg_doc, text_at, y_axis


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
    body = [text_at(width / 2, 15, title, extra=' font-weight="600"')]
    costs = [c for _, _, c, _ in points]
    ticks = nice_ticks(max(costs, default=0.0))
    hi = ticks[-1]

    def sx(c: float) -> float:
        return left + plot_w * c / hi

    def sy(v: float) -> float:
        return top + plot_h * (1 - max(0.0, min(v, 1.0)))

    y_axis(body, left, left + plot_w, top, plot_h, [0.0, 0.25, 0.5, 0.75, 1.0])
    base = top + plot_h
    for t in ticks:
        body.append(f'<line x1="{px(sx(t))}" x2="{px(sx(t))}" y1="{px(top)}" y2="{px(base)}" stroke="{GRID}"/>')
        body.append(text_at(sx(t), base + 14, money(t)))
    body.append(f'<line x1="{px(left)}" x2="{px(left + plot_w)}" y1="{px(base)}" y2="{px(base)}" stroke="{INK}"/>')
    caption = "cost (USD)" if any(costs) else "cost (USD): no agent reported a cost"
    body.append(text_at(left + plot_w / 2, height - 6, caption))
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
            leader = (f'<line x1="{px(x)}" x2="{px(lx)}" y1="{px(y)}" y2="{px(ly - 4)}" stroke="{GRID}"/>'
                      if dist else "")
            text = leader + text_at(lx, ly, short, anchor, extra=' class="label"')
        body.append(f'<g class="point"><title>{escape(f"{label}: benchmark score {share:.0%} of max, cost {money(cost)}")}</title>'
                    f'<circle cx="{px(x)}" cy="{px(y)}" r="5" fill="{col}"/>{text}</g>')
    return svg_doc(width, height, title, body)
