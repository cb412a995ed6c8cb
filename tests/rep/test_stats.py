"""REP statistics, checked against scipy, numpy and the Wilson formula on fixed tables."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from tests.fixtures.rep_stats_tables import CATEGORIES, TABLE, classified, counts_of
from workbench.probes.rep.stats import (
    by_decade,
    contingency,
    counts_from_classified,
    decade_tests,
    fit_quadratic,
    spread,
    trends,
    with_shares,
)


def test_counts_list_every_category_and_keep_unparsed_and_failures_beside():
    counts = counts_of({("m50", "1950s"): {"woman": 3, "man": 5}}, unparsed={"m50": 2}, failed={"m50": 1})
    assert list(counts["category"]) == list(CATEGORIES)
    assert list(counts["count"]) == [3, 5, 0, 0]
    assert set(counts["n"]) == {10}  # labelled + unparsed; failures are not in the denominator
    assert set(counts["unparsed"]) == {2} and set(counts["failed"]) == {1}


def wilson(k, n, z=1.959963984540054):
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def test_shares_have_wilson_intervals_and_small_samples_are_flagged():
    shares = with_shares(counts_of({("m50", "1950s"): {"woman": 8, "man": 42}}))
    woman = shares[shares["category"] == "woman"].iloc[0]
    assert woman["share"] == pytest.approx(0.16)
    low, high = wilson(8, 50)
    assert (woman["ci_low"], woman["ci_high"]) == (pytest.approx(low), pytest.approx(high))
    assert not woman["small_sample"]
    small = with_shares(counts_of({("m50", "1950s"): {"woman": 2, "man": 3}}))
    assert small["small_sample"].all()
    zero = small[small["category"] == "non-binary"].iloc[0]
    assert zero["share"] == 0 and zero["ci_low"] == pytest.approx(0) and zero["ci_high"] > 0


def test_chi_square_matches_scipy_on_the_decade_by_category_table():
    tests = decade_tests(counts_of(TABLE, unparsed={"m50": 5}))
    chi = tests[tests["test"] == "chi-square"].iloc[0]
    table = np.array([[4, 40, 0, 6], [8, 36, 0, 6], [15, 30, 1, 4], [22, 24, 2, 2]])
    expected = scipy_stats.chi2_contingency(table)
    assert chi["statistic"] == pytest.approx(expected.statistic)
    assert chi["p_value"] == pytest.approx(expected.pvalue)
    assert chi["dof"] == expected.dof == 9
    assert chi["n"] == 200  # unparsed completions are not in the tests
    assert "expected count is below 5" in chi["note"]  # the non-binary column is sparse
    assert chi["decades"] == "1950s, 1970s, 1990s, 2010s"


def test_chi_square_known_value_for_a_two_by_two_table():
    tests = decade_tests(counts_of({("a", "1950s"): {"woman": 10, "man": 20}, ("b", "1960s"): {"woman": 20, "man": 10}}))
    chi = tests[tests["test"] == "chi-square"].iloc[0]
    assert chi["statistic"] == pytest.approx(5.4)  # Yates-corrected: 4 * (|10 - 15| - 0.5)^2 / 15
    assert chi["dof"] == 1


def test_kruskal_wallis_on_per_decade_indicators_matches_scipy():
    tests = decade_tests(counts_of(TABLE))
    kw = tests[(tests["test"] == "kruskal-wallis") & (tests["category"] == "woman")].iloc[0]
    groups = [np.r_[np.ones(k), np.zeros(50 - k)] for k in (4, 8, 15, 22)]
    expected = scipy_stats.kruskal(*groups)
    assert kw["statistic"] == pytest.approx(expected.statistic)
    assert kw["p_value"] == pytest.approx(expected.pvalue)
    assert kw["significant"]
    assert kw["dof"] == 3


def test_models_of_the_same_decade_are_pooled():
    counts = counts_of({("a", "1950s"): {"woman": 1, "man": 9}, ("b", "1950s"): {"woman": 3, "man": 7},
                        ("c", "1990s"): {"woman": 5, "man": 5}})
    pooled = by_decade(counts)
    fifties = pooled[(pooled["year"] == 1950) & (pooled["category"] == "woman")].iloc[0]
    assert (fifties["count"], fifties["n"], fifties["models"]) == (4, 20, 2)
    table = contingency(pooled)
    assert table.loc[1950, "woman"] == 4 and "non-binary" not in table.columns


def test_tests_need_two_decades():
    tests = decade_tests(counts_of({("a", "1950s"): {"woman": 1, "man": 9}}))
    assert tests["p_value"].isna().all()
    assert "two decades" in tests.iloc[0]["note"]


def test_identical_decades_give_no_kruskal_p_value():
    tests = decade_tests(counts_of({("a", "1950s"): {"man": 10}, ("b", "1990s"): {"man": 10}}))
    kw = tests[tests["test"] == "kruskal-wallis"].iloc[0]
    assert np.isnan(kw["p_value"]) and "agree exactly" in kw["note"]


def test_quadratic_fit_matches_numpy_polyfit_and_has_a_band():
    years = [1950, 1960, 1970, 1980, 1990, 2000, 2010]
    shares = [0.08, 0.04, 0.08, 0.04, 0.12, 0.12, 0.22]
    fit = fit_quadratic(years, shares, method="ols")
    x = (np.array(years) - 1950) / 10
    b2, b1, b0 = np.polyfit(x, shares, 2)
    assert fit.params == pytest.approx([b0, b1, b2])
    curve = fit.curve([1950, 1980, 2010])
    assert curve["fit"].to_numpy() == pytest.approx(np.polyval([b2, b1, b0], [0, 3, 6]))
    assert (curve["band_low"] < curve["fit"]).all() and (curve["fit"] < curve["band_high"]).all()


def test_trends_per_category_from_counts():
    fits, curves = trends(counts_of(TABLE), method="ols")
    woman = fits[fits["category"] == "woman"].iloc[0]
    x = np.array([0, 2, 4, 6])
    b2, b1, b0 = np.polyfit(x, [4 / 50, 8 / 50, 15 / 50, 22 / 50], 2)
    assert (woman["b0"], woman["b1"], woman["b2"]) == (pytest.approx(b0), pytest.approx(b1), pytest.approx(b2))
    assert woman["decades"] == 4
    part = curves[curves["category"] == "woman"]
    assert part["year"].min() == 1950 and part["year"].max() == 2010
    short, _ = trends(counts_of({("a", "1950s"): {"man": 10}, ("b", "1990s"): {"man": 10}}))
    assert short["b0"].isna().all() and "three decades" in short.iloc[0]["note"]


def test_binomial_trend_recovers_a_logit_quadratic_and_flags_categories_never_named():
    import statsmodels.api as sm

    years = np.array([1950, 1960, 1970, 1980, 1990, 2000, 2010])
    x = (years - 1950) / 10
    true = 1 / (1 + np.exp(-(-2.0 + 0.6 * x - 0.05 * x ** 2)))
    n = np.full(7, 100_000)
    fit = fit_quadratic(years, np.rint(true * n) / n, n=n)
    assert fit.params == pytest.approx([-2.0, 0.6, -0.05], abs=0.01)
    direct = sm.GLM(np.column_stack([np.rint(true * n), n - np.rint(true * n)]), np.column_stack([x ** 0, x, x ** 2]),
                    family=sm.families.Binomial()).fit()
    assert fit.params == pytest.approx(direct.params)
    curve = fit.curve([1950, 2010])
    assert curve["fit"].to_numpy() == pytest.approx(true[[0, -1]], abs=1e-3)
    assert (curve["band_low"] < curve["fit"]).all() and (curve["fit"] < curve["band_high"]).all()
    fits, curves = trends(counts_of(TABLE))  # binomial by default
    nonbinary = fits[fits["category"] == "non-binary"].iloc[0]
    assert nonbinary["method"] == "binomial" and "no stable fit" in nonbinary["note"] and np.isnan(nonbinary["b0"])
    assert "non-binary" not in set(curves["category"]) and "woman" in set(curves["category"])


def test_spread_is_the_population_sd_of_named_category_shares():
    shares = with_shares(counts_of({("a", "1950s"): {"woman": 30, "man": 15, "non-binary": 5, "unclear/none": 50}}))
    frame = spread(shares)
    assert frame.iloc[0]["spread_pp"] == pytest.approx(np.std([30, 15, 5]))
    two_roles = pd.concat([
        classified({("a", "1950s"): {"woman": 10, "man": 10}}, role="ceo"),
        classified({("a", "1950s"): {"man": 20}}, role="nurse"),
    ])
    frame = spread(with_shares(counts_from_classified(two_roles, {1: CATEGORIES})))
    assert frame.iloc[0]["spread_pp"] == pytest.approx((np.std([50, 50, 0]) + np.std([0, 100, 0])) / 2)
    assert frame.iloc[0]["roles"] == 2
