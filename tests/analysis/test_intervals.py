"""The shared intervals agree with statsmodels, with scipy, and with a draw-by-draw bootstrap written out
by hand (the same seeded draws, one statistic at a time)."""

import math

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from tests.fixtures.by_hand import wilson_by_hand
from workbench.analysis.intervals import bootstrap_difference, bootstrap_interval, wilson_interval

VALUES = np.array([0.12, 0.5, 0.33, 0.9, 0.41, 0.05, 0.77, 0.62, 0.28, 0.55, 0.19, 0.84, 0.47])
OTHER = np.array([0.3, 0.1, 0.25, 0.05, 0.4, 0.22, 0.18, 0.35])


def percentiles(draws, confidence=0.95):
    tail = (1 - confidence) / 2
    return tuple(np.percentile(draws, [100 * tail, 100 * (1 - tail)]))


def test_wilson_for_one_count_is_statsmodels_and_the_formula():
    low, high = wilson_interval(8, 10)
    assert isinstance(low, float) and isinstance(high, float)
    assert (low, high) == pytest.approx(proportion_confint(8, 10, alpha=0.05, method="wilson"))
    assert (low, high) == pytest.approx(wilson_by_hand(8, 10))
    assert wilson_interval(8, 10, confidence=0.9) == pytest.approx(proportion_confint(8, 10, alpha=0.1, method="wilson"))


def test_wilson_for_arrays_is_exact_at_the_edges_and_missing_without_a_denominator():
    low, high = wilson_interval(np.array([0, 3, 7, 0]), np.array([7, 10, 7, 0]))
    assert low[0] == 0.0 and high[2] == 1.0  # statsmodels leaves 2.8e-17 and 0.9999999999999999 here
    assert (low[1], high[1]) == pytest.approx(wilson_by_hand(3, 10))
    assert (low[0], high[0]) == pytest.approx(wilson_by_hand(0, 7), abs=1e-12)
    assert math.isnan(low[3]) and math.isnan(high[3])
    assert all(math.isnan(v) for v in wilson_interval(0, 0))


def test_bootstrap_of_a_mean_is_scipys_and_the_draw_by_draw_reference():
    from scipy.stats import bootstrap

    interval = bootstrap_interval(VALUES, seed=7)
    scipy_ci = bootstrap((VALUES,), np.mean, n_resamples=2000, method="percentile",
                         random_state=np.random.default_rng(7)).confidence_interval
    assert interval == (scipy_ci.low, scipy_ci.high)
    rng = np.random.default_rng(7)
    picks = rng.integers(0, len(VALUES), size=(2000, len(VALUES)))
    reference = [np.mean(VALUES[row]) for row in picks]
    assert interval == pytest.approx(percentiles(reference), rel=1e-12)
    assert interval == bootstrap_interval(VALUES, seed=7)
    assert interval != bootstrap_interval(VALUES, seed=8)


def test_bootstrap_of_another_statistic_and_confidence_follows_the_same_draws():
    interval = bootstrap_interval(VALUES, np.median, confidence=0.9, resamples=500, seed=3)
    picks = np.random.default_rng(3).integers(0, len(VALUES), size=(500, len(VALUES)))
    assert interval == pytest.approx(percentiles([np.median(VALUES[row]) for row in picks], 0.9), rel=1e-12)


def test_bootstrap_draws_in_batches_are_the_draws_of_one_batch():
    # a large sample is drawn in several batches (memory); the draws are the same as in one
    values = np.random.default_rng(0).normal(size=1_001)
    interval = bootstrap_interval(values, seed=2)
    picks = np.random.default_rng(2).integers(0, len(values), size=(2000, len(values)))
    assert interval == pytest.approx(percentiles(values[picks].mean(axis=1)), rel=1e-12)


def test_bootstrap_without_spread_or_values():
    assert bootstrap_interval([1.0, 1.0, 1.0]) == (1.0, 1.0)
    assert all(math.isnan(v) for v in bootstrap_interval([]))


def test_bootstrap_of_a_difference_draws_each_group_on_its_own():
    interval = bootstrap_difference(VALUES, OTHER, seed=11)
    rng = np.random.default_rng(11)
    first = rng.integers(0, len(VALUES), size=(2000, len(VALUES)))
    second = rng.integers(0, len(OTHER), size=(2000, len(OTHER)))
    reference = [np.mean(VALUES[a]) - np.mean(OTHER[b]) for a, b in zip(first, second)]
    assert interval == pytest.approx(percentiles(reference), rel=1e-12)
    low, high = interval
    assert low < VALUES.mean() - OTHER.mean() < high
    assert all(math.isnan(v) for v in bootstrap_difference(VALUES, [0.5]))
