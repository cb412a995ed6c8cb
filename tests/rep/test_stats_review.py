"""The statistics review of REP results: which runs count, empty decades, what the tests leave out,
and the trend band checked against its formula."""

import numpy as np
import pytest
from scipy import stats as scipy_stats

from tests.fixtures.rep_data import external_model, store_judge_run, store_rep_run
from tests.fixtures.rep_stats_tables import TABLE, counts_of
from workbench.models.base import GenerationParams
from workbench.probes.rep import stats
from workbench.probes.rep.classify import classified_responses
from workbench.probes.rep.run import KIND as REP_KIND
from workbench.probes.rep.run import run_config
from workbench.probes.rep.sets import get_set


# ---------------------------------------------------------------------------------------------- which runs count
def test_a_model_asked_again_with_other_settings_is_counted_once(project):
    """Run 1: 4 samples per role at temperature 1.0, all 'a woman'. Run 2 (newer): 2 samples at 0.7, all
    'a man'. Pooling them would count 6 completions per role and mix two temperatures."""
    from tests.fixtures.rep_data import store_run

    gender = get_set(project, "gender")
    external_model(project, "m1950s", decade="1950s")
    first = store_rep_run(project, "m1950s", gender,
                          {(role.key, s): " a woman" for role in gender.parsed.roles for s in range(4)}, samples=4)
    texts = {(gender.prompt_ids[role.key], s): " a man" for role in gender.parsed.roles for s in range(2)}
    second = store_run(project, REP_KIND, "m1950s", GenerationParams(temperature=0.7, max_tokens=100, seed=0),
                       run_config([gender], 2), texts)
    assert second > first
    counts = stats.rep_counts(project)
    assert set(counts["n"]) == {2}
    assert set(counts["runs"]) == {str(second)}
    shares = stats.with_shares(counts)
    assert set(shares.loc[shares["category"] == "man", "share"]) == {1.0}
    assert set(shares.loc[shares["category"] == "woman", "share"]) == {0.0}
    # the look-up table still lists every run's completions (e.g. for human validation by response id)
    assert set(classified_responses(project)["run_id"]) == {first, second}


def test_runs_of_other_demographics_of_the_same_model_both_count(project):
    gender, race = get_set(project, "gender"), get_set(project, "race")
    external_model(project, "m1950s", decade="1950s")
    g = store_rep_run(project, "m1950s", gender, {(r.key, 0): " a woman" for r in gender.parsed.roles})
    r = store_rep_run(project, "m1950s", race, {("surgeon", 0): " White."})
    counts = stats.rep_counts(project)
    assert set(counts.loc[counts["demographic"] == "gender", "runs"]) == {str(g)}
    assert set(counts.loc[counts["demographic"] == "race", "runs"]) == {str(r)}


# ---------------------------------------------------------------------------------------------- empty decades
@pytest.mark.parametrize("method", ["binomial", "ols"])
def test_a_decade_with_no_counted_completions_is_left_out_of_the_trend(method):
    """A 2000s model whose completions all failed (or are not judged yet) has n = 0: no share to fit."""
    table = dict(TABLE)
    table[("m00", "2000s")] = {}
    fits, curves = stats.trends(counts_of(table, failed={"m00": 5}), method=method)
    woman = fits[fits["category"] == "woman"].iloc[0]
    assert woman["decades"] == 4 and "2000s" in woman["note"] and "left out" in woman["note"]
    clean, _ = stats.trends(counts_of(TABLE), method=method)
    expected = clean[clean["category"] == "woman"].iloc[0]
    assert (woman["b0"], woman["b1"], woman["b2"]) == pytest.approx((expected["b0"], expected["b1"], expected["b2"]))
    if method == "ols":
        b2, b1, b0 = np.polyfit([0, 2, 4, 6], [4 / 50, 8 / 50, 15 / 50, 22 / 50], 2)
        assert (woman["b0"], woman["b1"], woman["b2"]) == pytest.approx((b0, b1, b2))
    assert woman["x"] == "decades since the 1950s"


def test_the_tests_name_only_decades_with_labelled_completions():
    table = dict(TABLE)
    table[("m00", "2000s")] = {}
    tests = stats.decade_tests(counts_of(table, failed={"m00": 5}))
    assert set(tests["decades"]) == {"1950s, 1970s, 1990s, 2010s"}


# ---------------------------------------------------------------------------------------------- what the tests say
def test_tests_say_that_unparsed_completions_are_left_out():
    tests = stats.decade_tests(counts_of(TABLE, unparsed={"m50": 5, "m90": 2}))
    assert tests["note"].str.contains("7 unparsed completion\\(s\\) left out").all()
    assert (tests["n"] == 200).all()


def test_a_two_by_two_chi_square_says_it_is_yates_corrected():
    tests = stats.decade_tests(counts_of({("a", "1950s"): {"woman": 10, "man": 20}, ("b", "1960s"): {"woman": 20, "man": 10}}))
    chi = tests[tests["test"] == "chi-square"].iloc[0]
    expected = scipy_stats.chi2_contingency(np.array([[10, 20], [20, 10]]))  # scipy corrects 2 x 2 by default
    assert chi["statistic"] == pytest.approx(expected.statistic) and "Yates" in chi["note"]
    bigger = stats.decade_tests(counts_of(TABLE))
    assert "Yates" not in bigger[bigger["test"] == "chi-square"].iloc[0]["note"]


def test_the_spread_table_names_its_standard_deviation():
    frame = stats.spread(stats.with_shares(counts_of({("a", "1950s"): {"woman": 30, "man": 15, "non-binary": 5}})))
    assert frame.iloc[0]["spread_pp"] == pytest.approx(np.std([60, 30, 10], ddof=0))
    assert "population SD (ddof=0)" in frame.iloc[0]["measure"]


# ---------------------------------------------------------------------------------------------- the trend band
def test_binomial_trend_band_is_the_wald_interval_on_the_logit_scale_transformed_back():
    years = np.array([1950, 1960, 1970, 1980, 1990, 2000, 2010])
    k, n = np.array([4, 2, 4, 2, 6, 6, 11]), np.full(7, 50)
    fit = stats.fit_quadratic(years, k / n, n=n)
    at = np.array([1950.0, 1985.0, 2010.0])
    x = (at - 1950) / 10
    design = np.column_stack([np.ones_like(x), x, x ** 2])
    eta = design @ fit.params
    se = np.sqrt(np.einsum("ij,jk,ik->i", design, np.asarray(fit.result.cov_params()), design))
    z = scipy_stats.norm.ppf(0.975)
    expit = lambda t: 1 / (1 + np.exp(-t))  # noqa: E731
    curve = fit.curve(at)
    assert curve["fit"].to_numpy() == pytest.approx(expit(eta))
    assert curve["band_low"].to_numpy() == pytest.approx(expit(eta - z * se))
    assert curve["band_high"].to_numpy() == pytest.approx(expit(eta + z * se))


def test_ols_trend_band_is_the_t_interval_for_the_mean():
    years = np.array([1950, 1960, 1970, 1980, 1990, 2000, 2010])
    shares = np.array([0.08, 0.04, 0.08, 0.04, 0.12, 0.12, 0.22])
    fit = stats.fit_quadratic(years, shares, method="ols")
    x = (years - 1950) / 10
    design = np.column_stack([np.ones_like(x), x, x ** 2])
    beta, *_ = np.linalg.lstsq(design, shares, rcond=None)
    residual = shares - design @ beta
    sigma2 = residual @ residual / (7 - 3)
    cov = sigma2 * np.linalg.inv(design.T @ design)
    at = np.array([0.0, 3.5, 6.0])
    point = np.column_stack([np.ones_like(at), at, at ** 2])
    se = np.sqrt(np.einsum("ij,jk,ik->i", point, cov, point))
    t = scipy_stats.t.ppf(0.975, 4)
    curve = fit.curve(1950 + 10 * at)
    assert curve["band_low"].to_numpy() == pytest.approx(point @ beta - t * se)
    assert curve["band_high"].to_numpy() == pytest.approx(point @ beta + t * se)


def test_judge_unparsed_answers_stay_in_the_share_denominator(project):
    """The paper reads shares as parts of every classified completion: unparsed ones are in n, shown apart."""
    gender = get_set(project, "gender")
    external_model(project, "m1950s", decade="1950s")
    external_model(project, "judge")
    store_rep_run(project, "m1950s", gender, {(r.key, s): " someone" for r in gender.parsed.roles for s in range(4)},
                  samples=4)
    frame = classified_responses(project, demographics=["gender"])
    answers = {rid: ("woman" if i % 4 == 0 else "man" if i % 4 == 1 else "I cannot tell, sorry")
               for i, rid in enumerate(sorted(frame["response_id"]))}
    store_judge_run(project, "judge", gender, answers)
    counts = stats.rep_counts(project, "judge:judge")
    one = counts[counts["role"] == counts["role"].iloc[0]]
    assert set(one["n"]) == {4} and set(one["unparsed"]) == {2}
    assert one["count"].sum() == 2


def test_tests_say_when_a_decade_pools_base_and_fine_tuned_models():
    from tests.fixtures.rep_stats_tables import classified
    from workbench.probes.rep.stats import counts_from_classified

    frame = classified({("tuned", "1950s"): {"woman": 2, "man": 8}, ("base", "1950s"): {"woman": 5, "man": 5},
                        ("late", "1990s"): {"woman": 6, "man": 4}})
    frame.loc[frame["model"] == "base", "stage"] = "base"
    tests = stats.decade_tests(counts_from_classified(frame, {1: ("woman", "man", "non-binary", "unclear/none")}))
    assert tests["note"].str.contains("base and fine-tuned models pooled in 1950s").all()
