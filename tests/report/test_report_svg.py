"""The SVG charts: scales, ticks, escaping, and what is drawn when there is little or a lot."""

from __future__ import annotations

import re

from ltm_harness._report.svg import (Bar, Series, _log_bounds, _log_ticks, bar_chart, cost_chart, gap_chart, money,
                                    nice_ticks)
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
    svgs = [bar_chart(nasty, [Bar(nasty, "#111", 0.5)]), gap_chart(nasty, [Series(nasty, "#111", [(1000, 1.0, nasty)])]),
            cost_chart(nasty, [(nasty, "#111", 0.5, 0.5)])]
    for svg in svgs:
        assert "<script>" not in svg and "&lt;script&gt;" in svg and "&amp;" in svg


def test_gap_chart_draws_points_and_means_or_only_means():
    points = [(1000.0, 1.0, "t1"), (1200.0, 0.0, "t2"), (40_000.0, 0.5, "t3")]
    svg = gap_chart("g", [Series("a", "#111", points)])
    assert svg.count('r="3"') == 3 and svg.count('r="4.5"') == 2 and "<polyline" in svg
    assert "mean score 0.50 over 2 test(s)" in svg
    means_only = gap_chart("g", [Series("a", "#111", points)], draw_points=False)
    assert means_only.count('r="3"') == 0 and means_only.count('r="4.5"') == 2
    assert "no information gaps were measured" in gap_chart("g", [Series("a", "#111", [])])


def test_cost_chart_says_when_no_cost_was_reported_and_keeps_labels_apart():
    svg = cost_chart("c", [("first", "#111", 0.0, 0.0), ("second", "#222", 0.0, 0.0)])
    assert "no agent reported a cost" in svg
    ys = [float(y) for y in re.findall(r'<text x="[\d.]+" y="([\d.]+)" text-anchor="start"', svg)]
    assert len(ys) == 2 and abs(ys[0] - ys[1]) >= 12
    priced = cost_chart("c", [("a", "#111", 0.02, 0.5), ("b", "#222", 0.08, 1.0)])
    assert "no agent reported a cost" not in priced and "$0.08" in priced
