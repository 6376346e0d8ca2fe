"""Score panels a reader can compare by eye (issue 32.4): a row of panels shares one x range, dots never cover the y
axis's labels, and a chart of several lines that are not the page's agents draws its own legend."""

from __future__ import annotations

import re

from ltm_harness._report.svg_score import LEFT, Series, score_panel, x_range


def _ticks(svg: str) -> list[str]:
    """The x axis's tick labels (the texts under the plot, centred)."""
    return re.findall(r'<text x="[\d.]+" y="([\d.]+)" text-anchor="middle"[^>]*>([^<]+)</text>', svg)


def test_panels_of_one_row_share_the_x_range():
    near = [Series("a", "#111", [(100.0, 1.0, "q1"), (300.0, 0.0, "q2")])]
    far = [Series("a", "#111", [(20_000.0, 1.0, "q3"), (90_000.0, 0.5, "q4")])]
    alone = [score_panel("near", near, width=300, height=210), score_panel("far", far, width=300, height=210)]
    assert _ticks(alone[0]) != _ticks(alone[1])  # each on its own range: not comparable
    bounds = x_range(near + far)
    assert bounds == (100.0, 100_000.0)
    shared = [score_panel("near", near, width=300, height=210, bounds=bounds),
              score_panel("far", far, width=300, height=210, bounds=bounds)]
    labels = [[t for y, t in _ticks(svg) if t not in ("near", "far") and float(y) > 150] for svg in shared]
    assert labels[0] == labels[1] and labels[0]


def test_dots_never_cover_the_y_axis_labels():
    # three agents with many tests at the smallest x: the biggest dots, set side by side
    series = [Series(name, "#123", [(1000.0, 0.5, f"q{i}") for i in range(40)]) for name in ("a", "b", "c")]
    series[0].points.append((50_000.0, 1.0, "far"))
    svg = score_panel("crowded", series)
    circles = re.findall(r'<circle cx="([\d.]+)" cy="[\d.]+" r="([\d.]+)"', svg)
    assert circles and min(float(cx) - float(r) for cx, r in circles) >= LEFT


def test_a_chart_of_lines_that_are_not_agents_has_a_legend():
    series = [Series(v, c, [(1000.0 * (i + 1), 1.0, "q")]) for i, (v, c) in
              enumerate([("multi-hop", "#a00"), ("temporal", "#0a0"), ("open-domain", "#00a")])]
    plain = score_panel("a line per category", series)
    legend = score_panel("a line per category", series, legend=True)
    named = re.findall(r'text-anchor="start"[^>]*>([^<]+)</text>', legend)
    assert named == ["multi-hop", "temporal", "open-domain"] and not re.findall(r'text-anchor="start"', plain)
    # the plot keeps its height: the legend adds to the chart's
    assert int(re.search(r'height="(\d+)"', legend).group(1)) > int(re.search(r'height="(\d+)"', plain).group(1))


def test_a_long_title_is_cut_at_a_word_to_fit_and_kept_whole_as_the_label():
    title = "mem0-published-results · locomo-mem0-published-results · locomo: score against memory distance, a line per category"
    svg = score_panel(title, [Series("a", "#111", [(100.0, 1.0, "q")])], width=520, height=240)
    shown = re.search(r'font-weight="600">([^<]+)</text>', svg).group(1)
    assert shown.endswith("...") and len(shown) * 6.6 <= 520 and title.startswith(shown[:-3])
    assert f'aria-label="{title}"' in svg
