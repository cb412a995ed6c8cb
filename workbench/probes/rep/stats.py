"""Statistics of REP results: shares with Wilson intervals, tests across decades, trends, spread.

All of it starts from a *counts* table: one row per (model, demographic, role, category) with the
number of completions in that category (``count``) and the share's denominator ``n`` (completions
labelled, "unclear/none" included, or unparsed; see ``classify``). Failed generations, unparsed,
unjudged and failed judge calls are carried beside as columns, so what was left out is always
visible. Only each model's newest run of a demographic counts (``runs`` names it): runs with other
settings are never pooled.

- Shares: ``count / n`` with a 95% Wilson interval (statsmodels ``proportion_confint``, through
  ``workbench.analysis.intervals.wilson_interval``).
- Across decades, for each role (models of the same decade pooled):
  chi-square test of independence on the decade x category table of labelled completions
  (``scipy.stats.chi2_contingency``; flagged when an expected count is below 5), and for each
  category a Kruskal-Wallis test on the per-decade 0/1 indicators "is in this category"
  (``scipy.stats.kruskal``). Unparsed completions are left out of both tests.
- Quadratic trend per category over x = decades since the first decade: by default a binomial GLM
  of the counts with logit(share) quadratic in x (its band reflects the sampling error of each
  decade's share, so it stays informative with few decades); or (``method="ols"``) ordinary least
  squares of the decade shares on x and x^2 (needs 3 decades, its band 4). Both from statsmodels,
  each with its fitted curve and 95% band for the mean.
- Spread: the population standard deviation of a role's category shares (in percentage points,
  "unclear/none" left out), averaged over the roles of a demographic: 0 when every category is
  named equally often, larger when a few dominate.

Small samples are flagged (``n < SMALL_N``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np
import pandas as pd

from workbench.analysis.intervals import wilson_interval
from workbench.errors import UserError
from workbench.probes.rep.classify import (
    COUNTED,
    FAILED,
    JUDGE_FAILED,
    LABELLED,
    LEXICAL,
    UNJUDGED,
    UNPARSED_OUTCOME,
    classified_responses,
)
from workbench.probes.rep.setfile import UNCLEAR
from workbench.probes.rep.sets import load_set

if TYPE_CHECKING:
    from workbench.project import Project

SMALL_N = 30
MIN_EXPECTED = 5.0
CONFIDENCE = 0.95
MODEL_KEYS = ["model", "decade", "year", "stage"]
ROLE_KEYS = ["demographic", "role"]
SIDE_COLUMNS = ["failed", "unparsed", "unjudged", "judge_failed"]
COUNT_COLUMNS = [*MODEL_KEYS, *ROLE_KEYS, "category", "count", "n", *SIDE_COLUMNS, "set_versions", "runs"]


# ---------------------------------------------------------------------------------------------- counts
def counts_from_classified(classified: pd.DataFrame, categories: dict[int, Sequence[str]]) -> pd.DataFrame:
    """The counts table from ``classify.classified_responses`` (every category listed, zeros included).

    ``categories`` maps a set id to its categories, in the set file's order.
    """
    if classified.empty:
        return pd.DataFrame(columns=COUNT_COLUMNS)
    rows = []
    for keys, group in classified.groupby(MODEL_KEYS + ROLE_KEYS, dropna=False, sort=False):
        outcome = group["outcome"].value_counts()
        ordered: dict[str, None] = {}
        for set_id in group["set_id"].unique():
            ordered.update(dict.fromkeys(categories[set_id]))
        found = group.loc[group["outcome"] == LABELLED, "category"].value_counts()
        n = int(sum(outcome.get(o, 0) for o in COUNTED))
        side = [int(outcome.get(o, 0)) for o in (FAILED, UNPARSED_OUTCOME, UNJUDGED, JUDGE_FAILED)]
        versions = ", ".join(str(v) for v in sorted(group["set_version"].unique()))
        runs = ", ".join(str(int(r)) for r in sorted(group["run_id"].unique()))
        for category in ordered:
            rows.append([*keys, category, int(found.get(category, 0)), n, *side, versions, runs])
    frame = pd.DataFrame(rows, columns=COUNT_COLUMNS)
    frame["year"] = frame["year"].astype("Int64")
    return frame


def counts_and_responses(project: "Project", classifier: str = LEXICAL, *, models: Sequence[str] | None = None,
                         demographics: Sequence[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(counts table, the classified responses behind it): what a view needs to trace numbers to texts."""
    classified = classified_responses(project, classifier, models=models, demographics=demographics, newest_runs=True)
    categories = {int(s): load_set(project, int(s)).parsed.categories for s in classified["set_id"].unique()}
    return counts_from_classified(classified, categories), classified


def rep_counts(project: "Project", classifier: str = LEXICAL, *, models: Sequence[str] | None = None,
               demographics: Sequence[str] | None = None) -> pd.DataFrame:
    return counts_and_responses(project, classifier, models=models, demographics=demographics)[0]


def why_empty(counts: pd.DataFrame, table: str, classifier: str = LEXICAL) -> str:
    """Why a ``table`` (shares, tests, trends, spread) made from ``counts`` has no rows, and what to do."""
    if counts.empty:
        judged = "" if classifier == LEXICAL else " and have the judge label it (palimpsest rep classify PROJECT --judge LABEL)"
        return (f"No REP completions to count yet with the classifier '{classifier}'. Sample a model first "
                f"(palimpsest rep run PROJECT --model LABEL){judged}.")
    if table in ("tests", "trends") and counts["year"].isna().all():
        return ("The tests and trends compare decades, and none of these models has a decade: tag each model with "
                "the decade of its training data (palimpsest model edit PROJECT LABEL --tag decade=1950s).")
    if table in ("tests", "trends"):
        return "The tests and trends compare decades: sample models of at least two different decades."
    return "Nothing to show for these models and demographics."


# ---------------------------------------------------------------------------------------------- shares
def with_shares(counts: pd.DataFrame, confidence: float = CONFIDENCE) -> pd.DataFrame:
    """The counts table plus share, ci_low, ci_high and a small-sample flag."""
    frame = counts.copy()
    n = frame["n"].astype(float)
    frame["share"] = np.where(n > 0, frame["count"] / n.where(n > 0, 1.0), np.nan)
    frame["ci_low"], frame["ci_high"] = wilson_interval(frame["count"], frame["n"], confidence)
    frame["small_sample"] = frame["n"] < SMALL_N
    first = [c for c in [*MODEL_KEYS, *ROLE_KEYS, "category", "count", "n", "share", "ci_low", "ci_high",
                         "small_sample"] if c in frame.columns]
    return frame[first + [c for c in frame.columns if c not in first]]


def share_table(project: "Project", classifier: str = LEXICAL, **filters) -> pd.DataFrame:
    return with_shares(rep_counts(project, classifier, **filters))


# ---------------------------------------------------------------------------------------------- decades
def by_decade(counts: pd.DataFrame) -> pd.DataFrame:
    """Counts of models with a decade, pooled per (demographic, role, decade, category)."""
    dated = counts[counts["year"].notna()]
    if dated.empty:
        return pd.DataFrame(columns=[*ROLE_KEYS, "year", "category", "count", "n", "models"])
    per_model = dated.drop_duplicates([*MODEL_KEYS, *ROLE_KEYS])[[*ROLE_KEYS, "year", "model", "n"]]
    n = per_model.groupby([*ROLE_KEYS, "year"], as_index=False).agg(n=("n", "sum"), models=("model", "nunique"))
    pooled = dated.groupby([*ROLE_KEYS, "year", "category"], as_index=False, sort=False)["count"].sum()
    pooled = pooled.merge(n, on=[*ROLE_KEYS, "year"])
    pooled["year"] = pooled["year"].astype(int)
    return pooled


def contingency(pooled_role: pd.DataFrame) -> pd.DataFrame:
    """Decade x category table of labelled counts for one role (rows and columns that are all zero dropped)."""
    table = pooled_role.pivot_table(index="year", columns="category", values="count", aggfunc="sum", fill_value=0,
                                    sort=False)
    table = table.loc[table.sum(axis=1) > 0, table.sum(axis=0) > 0]
    return table.sort_index()


def chi_square(table: pd.DataFrame) -> dict:
    if table.to_numpy().sum() == 0:
        return {"statistic": np.nan, "dof": np.nan, "p_value": np.nan, "min_expected": np.nan,
                "note": "no labelled completions to compare"}
    if table.shape[0] < 2 or table.shape[1] < 2:
        return {"statistic": np.nan, "dof": np.nan, "p_value": np.nan, "min_expected": np.nan,
                "note": "needs at least two decades and two categories with completions"}
    from scipy import stats as scipy_stats  # imported when used: it takes a second to load

    result = scipy_stats.chi2_contingency(table.to_numpy())  # Yates' correction when dof is 1 (scipy's default)
    min_expected = float(result.expected_freq.min())
    note = _join("Yates' continuity correction (2 x 2 table)" if int(result.dof) == 1 else "",
                 f"an expected count is below {MIN_EXPECTED:g}: read the p-value with care"
                 if min_expected < MIN_EXPECTED else "")
    return {"statistic": float(result.statistic), "dof": int(result.dof), "p_value": float(result.pvalue),
            "min_expected": min_expected, "note": note}


def kruskal_indicators(table: pd.DataFrame, category: str) -> dict:
    """Kruskal-Wallis across decades on 0/1 "is ``category``" indicators of labelled completions."""
    totals = table.sum(axis=1)
    hits = table[category] if category in table.columns else pd.Series(0, index=table.index)
    groups = [np.r_[np.ones(int(h)), np.zeros(int(t - h))] for h, t in zip(hits, totals) if t > 0]
    if not groups:
        return {"statistic": np.nan, "dof": np.nan, "p_value": np.nan, "note": "no labelled completions to compare"}
    if len(groups) < 2:
        return {"statistic": np.nan, "dof": np.nan, "p_value": np.nan, "note": "needs at least two decades"}
    from scipy import stats as scipy_stats

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            result = scipy_stats.kruskal(*groups)
    except ValueError:  # every value identical: nothing differs between decades
        return {"statistic": np.nan, "dof": len(groups) - 1, "p_value": np.nan,
                "note": "all decades agree exactly; no test possible"}
    note = "" if np.isfinite(result.pvalue) else "all decades agree exactly; no test possible"
    return {"statistic": float(result.statistic), "dof": len(groups) - 1, "p_value": float(result.pvalue), "note": note}


TEST_COLUMNS = [*ROLE_KEYS, "test", "category", "statistic", "dof", "p_value", "decades", "n", "min_expected",
                "significant", "note"]


def _unparsed_by_role(counts: pd.DataFrame) -> dict[tuple[str, str], int]:
    """(demographic, role) -> unparsed completions of dated models (left out of the tests)."""
    dated = counts[counts["year"].notna()]
    if dated.empty:
        return {}
    per_model = dated.drop_duplicates([*MODEL_KEYS, *ROLE_KEYS])
    return {key: int(v) for key, v in per_model.groupby(ROLE_KEYS)["unparsed"].sum().items()}


def _mixed_stages(counts: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(demographic, role) -> the decades where base and fine-tuned models are pooled (e.g. '1950s')."""
    dated = counts[counts["year"].notna()]
    if dated.empty:
        return {}
    stages = dated.groupby([*ROLE_KEYS, "year"])["stage"].nunique()
    mixed: dict[tuple[str, str], list[str]] = {}
    for (demographic, role, year), count in stages.items():
        if count > 1:
            mixed.setdefault((demographic, role), []).append(f"{int(year)}s")
    return {key: ", ".join(years) for key, years in mixed.items()}


def decade_tests(counts: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """For each role: chi-square on decade x category, and Kruskal-Wallis for each category.

    Both use the labelled completions only (``n``); unparsed ones are left out and counted in the note,
    as are Yates' correction (2 x 2 tables) and expected counts below 5. ``decades``: those tested."""
    pooled = by_decade(counts)
    unparsed = _unparsed_by_role(counts)
    mixed = _mixed_stages(counts)
    rows = []
    for (demographic, role), group in pooled.groupby(ROLE_KEYS, sort=False):
        table = contingency(group)
        decades = ", ".join(f"{y}s" for y in table.index)  # decades with labelled completions: the ones tested
        n = int(table.to_numpy().sum())
        left = int(unparsed.get((demographic, role), 0))
        left_out = f"{left} unparsed completion(s) left out" if left else ""
        if (demographic, role) in mixed:
            left_out = _join(left_out, f"base and fine-tuned models pooled in {mixed[demographic, role]}")
        chi = chi_square(table)
        rows.append({"demographic": demographic, "role": role, "test": "chi-square", "category": "",
                     "decades": decades, "n": n, **chi, "note": _join(chi["note"], left_out)})
        for category in group["category"].unique():
            kw = kruskal_indicators(table, category)
            rows.append({"demographic": demographic, "role": role, "test": "kruskal-wallis", "category": category,
                         "decades": decades, "n": n, "min_expected": np.nan, **kw,
                         "note": _join(kw["note"], left_out)})
    frame = pd.DataFrame(rows, columns=TEST_COLUMNS)
    frame["significant"] = frame["p_value"] < alpha
    return frame


# ---------------------------------------------------------------------------------------------- trends
TREND_METHODS = ("binomial", "ols")
MAX_LOGIT_SE = 10.0  # a standard error this large on the logit scale means the fit did not settle


@dataclass
class QuadraticFit:
    """A quadratic in x = decades since ``origin``: of the share itself (``ols``), or of its logit
    (``binomial``: a binomial GLM on the counts, whose band comes from the binomial sampling error
    and so stays informative with few decades)."""

    method: str
    origin: int
    params: np.ndarray
    pvalues: np.ndarray
    rsquared: float  # OLS only (NaN for the binomial GLM)
    df_resid: float
    result: object  # the statsmodels results, for prediction

    @property
    def stable(self) -> bool:
        """False when the binomial fit runs off to infinity (a category named in almost no decade)."""
        if self.method == "ols":
            return True
        bse = np.asarray(self.result.bse)
        return bool(self.result.converged and np.all(np.isfinite(bse)) and bse.max() < MAX_LOGIT_SE)

    @property
    def has_band(self) -> bool:
        return self.stable and (self.method == "binomial" or self.df_resid > 0)

    def curve(self, years: Sequence[float], confidence: float = CONFIDENCE) -> pd.DataFrame:
        years = np.asarray(years, dtype=float)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # no residual df (OLS exact fit): the band is simply missing
            prediction = self.result.get_prediction(_design(years, self.origin)).summary_frame(alpha=1 - confidence)
        return pd.DataFrame({
            "year": years,
            "fit": prediction["mean"].to_numpy(),
            "band_low": prediction["mean_ci_lower"].to_numpy() if self.has_band else np.nan,
            "band_high": prediction["mean_ci_upper"].to_numpy() if self.has_band else np.nan,
        })


def _design(years: np.ndarray, origin: int) -> np.ndarray:
    x = (years - origin) / 10.0
    return np.column_stack([np.ones_like(x), x, x ** 2])


def fit_quadratic(years: Sequence[float], shares: Sequence[float], *, method: str = "binomial",
                  n: Sequence[float] | None = None) -> QuadraticFit:
    """Fit share ~ x + x^2 (``ols``), or logit(share) ~ x + x^2 on ``n`` completions per decade (``binomial``)."""
    import statsmodels.api as sm

    if method not in TREND_METHODS:
        raise UserError(f"'{method}' is not a trend method; use one of: {', '.join(TREND_METHODS)}.")
    years = np.asarray(years, dtype=float)
    origin = int(years.min())
    design = _design(years, origin)
    shares = np.asarray(shares, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # exact fits and separation: statsmodels warns, the notes say it
        if method == "ols":
            result = sm.OLS(shares, design).fit()
            pvalues = np.asarray(result.pvalues) if result.df_resid > 0 else np.full(3, np.nan)
            rsquared = float(result.rsquared)
        else:
            trials = np.asarray(n, dtype=float)
            successes = np.rint(shares * trials)
            result = sm.GLM(np.column_stack([successes, trials - successes]), design, family=sm.families.Binomial()).fit()
            pvalues, rsquared = np.asarray(result.pvalues), float("nan")
    return QuadraticFit(method=method, origin=origin, params=np.asarray(result.params), pvalues=pvalues,
                        rsquared=rsquared, df_resid=float(result.df_resid), result=result)


def decade_shares(counts: pd.DataFrame) -> pd.DataFrame:
    """Pooled share of each category per decade (denominator: labelled + unparsed), with Wilson CIs."""
    return with_shares(by_decade(counts))


TREND_COLUMNS = [*ROLE_KEYS, "category", "method", "decades", "x", "b0", "b1", "b2", "p_b1", "p_b2", "r_squared",
                 "note"]


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def trends(counts: pd.DataFrame, *, method: str = "binomial", points: int = 41) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(fits, curves): one fit per (role, category) with at least three decades, and its curve.

    ``x`` says how decades are coded: x = decades since the first decade with completions, so ``b0`` is
    the fitted value (share, or its logit) at that decade and ``b1`` the slope there; ``b2`` (the
    curvature) and its p-value do not depend on the coding. Decades with no counted completions (all
    failed, or not judged yet) are left out of the fit and named in the note."""
    shares = decade_shares(counts)
    fits, curves = [], []
    for (demographic, role, category), group in shares.groupby([*ROLE_KEYS, "category"], sort=False):
        group = group.sort_values("year")
        empty = group[group["n"] <= 0]  # every completion failed or is still unjudged: no share to fit
        group = group[group["n"] > 0]
        years = group["year"].to_numpy(dtype=float)
        base = {"demographic": demographic, "role": role, "category": category, "method": method,
                "decades": len(years), "x": f"decades since the {int(years.min())}s" if len(years) else ""}
        left_out = (f"{len(empty)} decade(s) with no counted completions left out "
                    f"({', '.join(f'{int(y)}s' for y in empty['year'])})") if len(empty) else ""
        if len(years) < 3:
            fits.append({**base, "note": _join("a quadratic trend needs at least three decades", left_out)})
            continue
        fit = fit_quadratic(years, group["share"].to_numpy(dtype=float), method=method, n=group["n"].to_numpy())
        if not fit.stable:
            fits.append({**base, "note": _join("no stable fit: the category is named in (almost) no decade, or in all",
                                               left_out)})
            continue
        fits.append({**base, "b0": fit.params[0], "b1": fit.params[1], "b2": fit.params[2],
                     "p_b1": fit.pvalues[1], "p_b2": fit.pvalues[2], "r_squared": fit.rsquared,
                     "note": _join("" if fit.has_band else "exact fit through three decades: no band, no p-values",
                                   left_out)})
        curve = fit.curve(np.linspace(years.min(), years.max(), points))
        curve.insert(0, "category", category)
        curve.insert(0, "role", role)
        curve.insert(0, "demographic", demographic)
        curves.append(curve)
    curve_frame = pd.concat(curves, ignore_index=True) if curves else pd.DataFrame(
        columns=[*ROLE_KEYS, "category", "year", "fit", "band_low", "band_high"])
    return pd.DataFrame(fits, columns=TREND_COLUMNS), curve_frame


# ---------------------------------------------------------------------------------------------- spread
SPREAD_COLUMNS = [*MODEL_KEYS, "demographic", "spread_pp", "roles", "min_n", "small_sample", "measure"]
SPREAD_MEASURE = ("population SD (ddof=0) of a role's category shares in percentage points, "
                  "unclear/none left out; mean over roles")


def role_spread(shares: pd.DataFrame) -> pd.DataFrame:
    """Per model and role: the population standard deviation of category shares, in percentage points."""
    named = shares[(shares["category"] != UNCLEAR) & (shares["n"] > 0)]
    grouped = named.groupby([*MODEL_KEYS, *ROLE_KEYS], dropna=False, sort=False)
    return grouped.agg(spread_pp=("share", lambda s: float(np.std(s.to_numpy() * 100.0))), n=("n", "first")).reset_index()


def spread(shares: pd.DataFrame) -> pd.DataFrame:
    """Per model and demographic: the mean over roles of ``role_spread``."""
    per_role = role_spread(shares)
    if per_role.empty:
        return pd.DataFrame(columns=SPREAD_COLUMNS)
    frame = per_role.groupby([*MODEL_KEYS, "demographic"], dropna=False, sort=False).agg(
        spread_pp=("spread_pp", "mean"), roles=("role", "nunique"), min_n=("n", "min")).reset_index()
    frame["small_sample"] = frame["min_n"] < SMALL_N
    frame["measure"] = SPREAD_MEASURE
    return frame[SPREAD_COLUMNS]
