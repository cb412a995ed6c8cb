"""The permutation test is every deal counted by hand when that is possible, and otherwise the same
seeded random deals made one at a time."""

import itertools
import math

import numpy as np
import pytest

from workbench.analysis.permutation import permutation_test

A = np.array([0.61, 0.72, 0.55, 0.8, 0.68])
B = np.array([0.42, 0.58, 0.5, 0.47])


def p_values(null, observed, extra=0):
    """scipy's convention: less/greater with a relative tolerance; two-sided is twice the smaller."""
    tol = abs(observed) * 100 * np.finfo(float).eps
    less = (np.count_nonzero(null <= observed + tol) + extra) / (len(null) + extra)
    greater = (np.count_nonzero(null >= observed - tol) + extra) / (len(null) + extra)
    return {"less": less, "greater": greater, "two-sided": min(1.0, 2 * min(less, greater))}


def test_small_groups_get_every_deal_counted_by_hand():
    pooled = np.r_[A, B]
    null = []
    for chosen in itertools.combinations(range(len(pooled)), len(A)):
        mask = np.zeros(len(pooled), bool)
        mask[list(chosen)] = True
        null.append(pooled[mask].mean() - pooled[~mask].mean())
    expected = p_values(np.array(null), A.mean() - B.mean())
    for alternative in ("two-sided", "greater", "less"):
        result = permutation_test(A, B, alternative=alternative)
        assert result.exact and result.deals == math.comb(9, 4) == len(null)
        assert result.difference == pytest.approx(A.mean() - B.mean())
        assert result.p_value == pytest.approx(expected[alternative], abs=1e-12)


def test_larger_groups_get_seeded_random_deals_that_count_the_observed_one():
    rng = np.random.default_rng(1)
    a, b = rng.normal(0.3, 1, size=14), rng.normal(0, 1, size=11)
    result = permutation_test(a, b, np.median, resamples=999, seed=4)
    pooled = np.r_[a, b]
    deals = np.random.default_rng(4)
    null = []
    for _ in range(999):
        order = deals.permutation(len(pooled))
        null.append(np.median(pooled[order[:14]]) - np.median(pooled[order[14:]]))
    assert not result.exact and result.deals == 999
    assert result.p_value == pytest.approx(p_values(np.array(null), result.difference, extra=1)["two-sided"])
    assert result == permutation_test(a, b, np.median, resamples=999, seed=4)


def test_an_empty_group_has_no_test():
    assert math.isnan(permutation_test([], B).p_value)


def test_a_group_of_one_has_its_difference_but_no_test():
    result = permutation_test([2.0], B)
    assert math.isnan(result.p_value) and result.difference == pytest.approx(2.0 - np.mean(B))
