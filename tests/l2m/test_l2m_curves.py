"""The numeric building blocks, on values worked out by hand."""

from __future__ import annotations

import pytest

from ltm_harness._protocols.l2m import curves


def test_normalise_maps_the_range_to_1_101() -> None:
    assert curves.normalise(0, 0, 4) == 1
    assert curves.normalise(1, 0, 4) == 26
    assert curves.normalise(4, 0, 4) == 101
    assert curves.normalise(7, 7, 7) == 1  # no range: no information


def test_smoothing_window_is_a_fifth_capped_at_100() -> None:
    assert [curves.smoothing_window(n) for n in (4, 9, 10, 14, 15, 499, 500, 5000)] == [0, 1, 2, 2, 3, 99, 100, 100]


def test_smooth_is_a_centred_average_shrunk_at_the_ends() -> None:
    x = [1.0, 41.0, 81.0, 101.0, 61.0]
    assert curves.smooth(x, 1) == x
    assert curves.smooth(x, 2) == [21, 61, 91, 81, 61]  # mean(x_i, x_i+1); the last alone
    assert curves.smooth(x, 3) == [21, 41, 223 / 3, 81, 81]  # mean(x_i-1, x_i, x_i+1)
    assert curves.smooth(x) == x  # n = 5: window 1, no smoothing
    ten = [0.0, 10, 20, 30, 40, 50, 60, 70, 80, 90]
    assert curves.smooth(ten) == [5, 15, 25, 35, 45, 55, 65, 75, 85, 90]  # n = 10: window 2


def test_saturation_terminal_and_first_reaching() -> None:
    curve = [21.0, 61, 91, 81, 61, 61, 61, 61, 61, 61, 91]
    assert curves.saturation(curve) == (91, 3)  # the first time the maximum is reached, counted from 1
    assert curves.terminal(curve) == 76  # last ceil(0.1 * 11) = 2 values
    assert curves.terminal([5.0, 7.0]) == 7
    assert curves.first_reaching(curve, 81) == 3
    assert curves.first_reaching(curve, 92) is None


def test_theil_sen_is_the_median_pairwise_slope() -> None:
    assert curves.theil_sen_slope([6, 2, 1]) == -2.5  # slopes -4, -2.5, -1
    assert curves.theil_sen_slope([1, 3]) == 2
    assert curves.theil_sen_slope([5, 5, 5, 5, 100]) == 0  # six of the ten slopes are 0: robust to one outlier
    with pytest.raises(ValueError):
        curves.theil_sen_slope([1])


def test_transfer_ratio_and_contrast() -> None:
    assert curves.ratio(21, 41) == 41 / 21
    assert curves.contrast(21, 41) == 20 / 62
    assert curves.contrast(50, 50) == 0
