"""The statistics this probe reports, each through a library (scipy) with its convention stated.

- ``spearman``: Spearman's rho (scipy ``spearmanr``: average ranks for ties, two-sided p from the t
  distribution) with a seeded percentile bootstrap interval over pairs (scipy ``bootstrap``, paired);
- ``roc_auc``: the area under the ROC curve of a score that is higher for members, computed as the
  Mann-Whitney U of members against non-members divided by their product (ties count one half), with a
  seeded percentile bootstrap interval that redraws members and non-members each on their own;
- ``binomial``: a two-sided exact binomial test against a chance rate (scipy ``binomtest``) and the
  Wilson interval of the rate (statsmodels).

TODO: when ``workbench.analysis`` lands on main, ``spearman`` becomes ``analysis.correlation.spearman``,
the AUC interval ``analysis.intervals.percentile_bootstrap`` and the Wilson interval
``analysis.intervals.wilson_interval``; only the calls below change.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np

CONFIDENCE = 0.95
RESAMPLES = 2000
SEED = 0


@dataclass(frozen=True)
class Correlation:
    rho: float
    p_value: float
    n: int
    ci_low: float = math.nan
    ci_high: float = math.nan


def _percentile_bootstrap(samples: tuple[np.ndarray, ...], statistic, *, paired: bool, seed: int) -> tuple[float, float]:
    from scipy.stats import bootstrap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        cells = int(np.prod([len(s) for s in samples])) if not paired else len(samples[0])
        result = bootstrap(samples, statistic, paired=paired, vectorized=True, confidence_level=CONFIDENCE,
                           n_resamples=RESAMPLES, batch=max(1, 2_000_000 // max(cells, 1)), method="percentile",
                           random_state=np.random.default_rng(seed))
    draws = np.asarray(result.bootstrap_distribution, dtype=float)
    draws = draws[np.isfinite(draws)]
    if draws.size < RESAMPLES / 2:
        return math.nan, math.nan
    tail = 100 * (1 - CONFIDENCE) / 2
    low, high = np.percentile(draws, [tail, 100 - tail])
    return float(low), float(high)


def _rho(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    from scipy.stats import rankdata

    rx, ry = rankdata(x, axis=axis), rankdata(y, axis=axis)
    rx = rx - rx.mean(axis=axis, keepdims=True)
    ry = ry - ry.mean(axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rx * ry).sum(axis=axis) / np.sqrt((rx * rx).sum(axis=axis) * (ry * ry).sum(axis=axis))


def spearman(x: Sequence[float], y: Sequence[float], *, seed: int = SEED) -> Correlation:
    """Spearman's rho, p and bootstrap interval (NaN for fewer than three pairs or a constant side)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if x.size < 3 or np.all(x == x[0]) or np.all(y == y[0]):
        return Correlation(math.nan, math.nan, int(x.size))
    from scipy.stats import spearmanr

    result = spearmanr(x, y)
    low, high = _percentile_bootstrap((x, y), _rho, paired=True, seed=seed)
    return Correlation(float(result.statistic), float(result.pvalue), int(x.size), low, high)


@dataclass(frozen=True)
class Auc:
    auc: float
    members: int
    non_members: int
    ci_low: float = math.nan
    ci_high: float = math.nan


def _auc(members: np.ndarray, others: np.ndarray, axis: int = -1) -> np.ndarray:
    """P(member score > non-member score) + half P(equal), along ``axis`` (vectorised over draws)."""
    a = np.expand_dims(members, -1)
    b = np.expand_dims(others, -2)
    greater = (a > b).sum(axis=(-1, -2))
    equal = (a == b).sum(axis=(-1, -2))
    return (greater + 0.5 * equal) / (members.shape[-1] * others.shape[-1])


def roc_auc(members: Sequence[float], non_members: Sequence[float], *, seed: int = SEED) -> Auc:
    a = np.asarray([v for v in members if np.isfinite(v)], dtype=float)
    b = np.asarray([v for v in non_members if np.isfinite(v)], dtype=float)
    if a.size == 0 or b.size == 0:
        return Auc(math.nan, int(a.size), int(b.size))
    from scipy.stats import mannwhitneyu

    value = float(mannwhitneyu(a, b).statistic) / (a.size * b.size)
    low, high = (math.nan, math.nan)
    if a.size >= 2 and b.size >= 2:
        low, high = _percentile_bootstrap((a, b), _auc, paired=False, seed=seed)
    return Auc(value, int(a.size), int(b.size), low, high)


@dataclass(frozen=True)
class Binomial:
    successes: int
    n: int
    rate: float
    ci_low: float
    ci_high: float
    p_value: float


def binomial(successes: int, n: int, chance: float) -> Binomial:
    if n <= 0:
        return Binomial(successes, n, math.nan, math.nan, math.nan, math.nan)
    from scipy.stats import binomtest
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(successes, n, alpha=1 - CONFIDENCE, method="wilson")
    low = 0.0 if successes == 0 else float(low)
    high = 1.0 if successes == n else float(high)
    return Binomial(successes, n, successes / n, low, high, float(binomtest(successes, n, chance).pvalue))
