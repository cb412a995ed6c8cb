"""Spearman's rho and p are scipy's; its interval is the draw-by-draw bootstrap over pairs."""

import math

import numpy as np
import pytest
from scipy.stats import spearmanr

from workbench.analysis.correlation import spearman, spearman_rho

X = np.array([1850, 1862, 1871, 1880, 1891, 1903, 1910, 1922, 1930, 1945, 1951, 1960], dtype=float)
Y = np.array([0.2, 0.35, 0.3, 0.5, 0.45, 0.45, 0.6, 0.4, 0.7, 0.65, 0.8, 0.75])


def test_rho_and_p_are_scipys():
    result = spearman(X, Y, resamples=0)
    expected = spearmanr(X, Y)
    assert (result.rho, result.p_value, result.n) == (float(expected.statistic), float(expected.pvalue), 12)
    assert math.isnan(result.ci_low) and math.isnan(result.ci_high)


def test_the_vectorised_rho_is_scipys_on_every_row_with_ties():
    rows = np.random.default_rng(4).integers(0, 5, size=(50, 9)).astype(float)
    others = np.random.default_rng(5).integers(0, 5, size=(50, 9)).astype(float)
    for x, y, rho in zip(rows, others, spearman_rho(rows, others)):
        if len(set(x)) > 1 and len(set(y)) > 1:
            assert rho == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)
        else:
            assert math.isnan(rho)


def test_the_interval_is_the_bootstrap_over_pairs_drawn_by_hand():
    result = spearman(X, Y, seed=5)
    picks = np.random.default_rng(5).integers(0, len(X), size=(2000, len(X)))
    draws = np.array([spearmanr(X[row], Y[row]).statistic if len(set(X[row])) > 1 and len(set(Y[row])) > 1
                      else np.nan for row in picks])
    defined = draws[np.isfinite(draws)]
    assert result.undefined_draws == len(draws) - len(defined)
    assert (result.ci_low, result.ci_high) == pytest.approx(tuple(np.percentile(defined, [2.5, 97.5])), rel=1e-12)
    assert result.ci_low < result.rho < result.ci_high
    assert result == spearman(X, Y, seed=5)


def test_draws_without_a_rho_are_left_out_and_too_many_leave_no_interval():
    few = spearman([1, 2, 3, 4], [2, 1, 4, 3], seed=0)
    assert few.undefined_draws > 0 and not math.isnan(few.ci_low)
    three = spearman([1, 2, 3], [1, 3, 2], seed=0)
    assert three.undefined_draws > 0
    assert math.isnan(spearman([1, 2], [2, 1]).rho)
    assert math.isnan(spearman([1, 1, 1, 1], [1, 2, 3, 4]).rho)


def test_the_difference_of_two_groups_rhos_draws_each_group_on_its_own():
    from workbench.analysis.correlation import spearman_difference

    x2, y2 = X[:9] * -1.0, Y[:9]
    result = spearman_difference(X, Y, x2, y2, seed=3)
    assert result.difference == pytest.approx(spearmanr(X, Y).statistic - spearmanr(x2, y2).statistic)
    rng = np.random.default_rng(3)
    first = rng.integers(0, len(X), size=(2000, len(X)))
    second = rng.integers(0, len(x2), size=(2000, len(x2)))

    def rho(x, y):
        return spearmanr(x, y).statistic if len(set(x)) > 1 and len(set(y)) > 1 else np.nan

    draws = np.array([rho(X[a], Y[a]) - rho(x2[b], y2[b]) for a, b in zip(first, second)])
    defined = draws[np.isfinite(draws)]
    assert result.undefined_draws == len(draws) - len(defined)
    assert (result.ci_low, result.ci_high) == pytest.approx(tuple(np.percentile(defined, [2.5, 97.5])), rel=1e-12)
    assert math.isnan(spearman_difference(X, Y, [1, 2], [2, 1]).difference)
