"""The SVG charts: scales, ticks, escaping, and what is drawn when there is little or a lot."""

from __future__ import annotations

import re

from html import unescape

from ltm_harness._report.svg import Bar, bar_chart, money, nice_ticks
from ltm_harness._report.svg_cost import _label_box, _overlaps, cost_chart
from ltm_harness._report.svg_score import Series, _log_bounds, _log_ticks, score_panel
from ltm_harness._tokens import short_count


def test_ticks_and_labels():
    assert nice_ticks(0.37) == [0.0, 0.1, 0.2, 0.3, 0.4]
    assert nice_ticks(0.0) == [0.0, 1.0]
    assert nice_ticks(12.0) == [0.0, 5.0, 10.0, 15.0]
    assert _log_bounds(590, 3600) == (500, 5000)
    assert _log_bounds(1000, 1000) == (1000, 2000)
    assert _log_ticks(500, 500_000, 1000) == [500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000]
    assert _log_ticks(500, 500_000, 200) == [1000, 10_000, 100_000]  # thinned to fit
    assert [short_count(n) for n in (950, 1500, 500_000, 2_000_000)] == ["950", "1.5k", "500k", "2M"]
    assert [money(x) for x in (0, 0.0042, 0.25, 3.5, 1234)] == ["$0", "$0.0042", "$0.25", "$3.50", "$1,234"]


def test_bars_scale_to_the_score_and_keep_a_sliver_for_zero():
    svg = bar_chart("colours", [Bar("a", "#111", 1.0), Bar("b", "#222", 0.5, 0.25), Bar("c", "#333", 0.0),
                                Bar("d", "#444", None)])
    heights = [float(h) for h in re.findall(r'<rect [^>]*height="([\d.]+)"', svg)]
    assert heights == [110.0, 55.0, 1.5]  # no rect for the agent without a result
    assert "d: no result" in svg and "b: 0.50 ± 0.25" in svg
    assert svg.count("<line") >= 3 + 2  # grid lines, axis, and the std whisker of b


def test_every_text_in_a_chart_is_escaped():
    nasty = '<script>alert("x")</script>&'
    svgs = [bar_chart(nasty, [Bar(nasty, "#111", 0.5)]), score_panel(nasty, [Series(nasty, "#111", [(1000, 1.0, nasty)])]),
            cost_chart(nasty, [(nasty, "#111", 0.5, 0.5)])]
    for svg in svgs:
        assert "<script>" not in svg and "&lt;script&gt;" in svg and "&amp;" in svg


def _circles(svg: str) -> list[tuple[float, float, float, int]]:
    return [(float(x), float(y), float(r), int(n)) for x, y, r, n in
            re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)" r="([\d.]+)"[^>]*data-count="(\d+)"', svg)]


def test_a_bin_gets_a_mean_and_a_line_only_with_enough_tests():
    dense = [(1100.0 + 100 * i, float(i % 2), f"a/{i}") for i in range(5)]  # 5 tests in [1024, 2048)
    dense += [(3000.0 + 100 * i, 1.0, f"b/{i}") for i in range(4)]  # 4 tests in [2048, 4096)
    sparse = [(40_000.0, 0.5, "c/0"), (41_000.0, 0.0, "c/1"), (42_000.0, 1.0, "c/2")]  # 3 tests in [32768, 65536)
    svg = score_panel("g", [Series("a", "#111", dense + sparse)])
    assert svg.count('class="mean"') == 2 and svg.count("<polyline") == 1  # the two dense bins, joined
    assert "mean score 0.40 over 5 tests" in svg and "mean score 1.00 over 4 tests" in svg
    assert sum(n for *_, n in _circles(svg)) == 12  # every test is a point
    # Without every point (big runs): the dense bins keep their means, the sparse one its three points.
    big = score_panel("g", [Series("a", "#111", dense + sparse)], draw_points=False)
    assert big.count('class="mean"') == 2 and sum(n for *_, n in _circles(big)) == 3
    # Two or three tests are no trend: no line, only their points.
    few = score_panel("g", [Series("a", "#111", [(1000.0, 0.0, "x"), (1200.0, 1.0, "y"), (40_000.0, 0.0, "z")])])
    assert "<polyline" not in few and 'class="mean"' not in few and len(_circles(few)) == 3
    assert "no information gaps were measured" in score_panel("g", [Series("a", "#111", [])])
    assert "no memory distances" in score_panel("g", [Series("a", "#111", [])], empty="no memory distances")


def test_points_on_one_spot_stay_visible():
    same = [(5000.0, 1.0, f"t/{i}") for i in range(4)]
    svg = score_panel("g", [Series("a", "#111", same), Series("b", "#222", same[:1]), Series("c", "#333", [])],
                      min_bin=10)
    circles = _circles(svg)
    assert [n for *_, n in circles] == [4, 1]  # agent a's four tests are one dot, sized by their count ...
    assert circles[0][2] > circles[1][2]
    assert abs(circles[0][0] - circles[1][0]) >= 6 and circles[0][1] == circles[1][1]  # ... beside agent b's
    assert "a: 4 tests here: t/0 (1.00 at 5,000)" in svg
    assert svg == score_panel("g", [Series("a", "#111", same), Series("b", "#222", same[:1]), Series("c", "#333", [])],
                              min_bin=10)  # deterministic


def test_the_x_axis_is_a_parameter():
    svg = score_panel("d", [Series("a", "#111", [(900.0, 1.0, "x")])], "memory distance (tokens, log scale)")
    assert "memory distance (tokens, log scale)" in svg and "information gap" not in svg


def _label_boxes(svg: str) -> list[tuple[float, float, float, float]]:
    found = re.findall(r'<text x="([\d.-]+)" y="([\d.-]+)" text-anchor="(\w+)" fill="[^"]+" class="label">([^<]*)</text>',
                       svg)
    return [_label_box(float(x), float(y), unescape(text), anchor) for x, y, anchor, text in found]


def test_cost_labels_never_overlap():
    svg = cost_chart("c", [("first", "#111", 0.0, 0.0), ("second", "#222", 0.0, 0.0)])
    assert "no agent reported a cost" in svg and len(_label_boxes(svg)) == 2
    priced = cost_chart("c", [("a", "#111", 0.02, 0.5), ("b", "#222", 0.08, 1.0)])
    assert "no agent reported a cost" not in priced and "$0.08" in priced
    crowd = [(f"openai:gpt-4o-mini@{n}k", "#111", 0.010 + 0.0002 * n, 0.5 + 0.01 * (n % 3)) for n in range(8)]
    boxes = _label_boxes(cost_chart("c", crowd))
    assert len(boxes) >= 6  # most are labelled; any other keeps its tooltip
    for i, a in enumerate(boxes):
        assert 0 <= a[0] and a[2] <= 640
        for b in boxes[i + 1:]:
            assert not _overlaps(a, b), (a, b)
