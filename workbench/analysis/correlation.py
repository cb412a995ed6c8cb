"""Spearman's rank correlation with its p-value and a bootstrap interval.

- ``rho`` and ``p_value``: scipy ``spearmanr`` (ties get average ranks; two-sided p-value from the t
  distribution with n - 2 degrees of freedom, scipy's default).
- The interval (``resamples`` > 0): a seeded percentile bootstrap over pairs (scipy ``bootstrap``,
  ``paired=True``): the (x, y) pairs are drawn with replacement, rho is computed for each draw, and
  the interval is the middle ``confidence`` of those values. A draw in which x or y is constant has
  no rho and is left out (``undefined_draws`` counts them; with more than half left out there is no
  interval). See ``workbench.analysis.intervals``.

Fewer than three pairs, or a constant x or y, give no rho (NaN), and no interval.

``spearman_difference(x1, y1, x2, y2)``: rho of the first group minus rho of the second (two independent
groups of pairs), with a seeded percentile bootstrap interval: each group's pairs are drawn with
replacement on their own (scipy ``bootstrap`` over the pairs' positions, ``paired=False``), the
difference computed for each draw; draws where either rho is undefined are left out as above.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from workbench.analysis.intervals import BOOTSTRAP_RESAMPLES, CONFIDENCE, percentile_bootstrap

MIN_PAIRS = 3


@dataclass(frozen=True)
class Correlation:
    rho: float
    p_value: float
    n: int  # pairs used
    ci_low: float = math.nan
    ci_high: float = math.nan
    undefined_draws: int = 0  # bootstrap draws without a rho, left out of the interval


def spearman(x: Sequence[float], y: Sequence[float], *, confidence: float = CONFIDENCE,
             resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> Correlation:
    """Spearman's rho between paired ``x`` and ``y`` with its p-value and (``resamples`` > 0) its interval."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("x and y must be two sequences of the same length")
    n = x.size
    if n < MIN_PAIRS or np.all(x == x[0]) or np.all(y == y[0]):
        return Correlation(math.nan, math.nan, n)
    from scipy.stats import spearmanr

    result = spearmanr(x, y)
    rho, p_value = float(result.statistic), float(result.pvalue)
    if resamples <= 0:
        return Correlation(rho, p_value, n)
    low, high, undefined = percentile_bootstrap((x, y), spearman_rho, paired=True, confidence=confidence,
                                                resamples=resamples, seed=seed)
    return Correlation(rho, p_value, n, low, high, undefined)


def spearman_rho(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """Spearman's rho along ``axis`` (the Pearson correlation of average ranks), for many samples at
    once; NaN where x or y is constant."""
    from scipy.stats import rankdata

    rx, ry = rankdata(x, axis=axis), rankdata(y, axis=axis)
    rx = rx - rx.mean(axis=axis, keepdims=True)
    ry = ry - ry.mean(axis=axis, keepdims=True)
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return (rx * ry).sum(axis=axis) / np.sqrt((rx * rx).sum(axis=axis) * (ry * ry).sum(axis=axis))


@dataclass(frozen=True)
class CorrelationDifference:
    difference: float  # rho of the first group - rho of the second
    ci_low: float = math.nan
    ci_high: float = math.nan
    undefined_draws: int = 0


def spearman_difference(x1: Sequence[float], y1: Sequence[float], x2: Sequence[float], y2: Sequence[float], *,
                        confidence: float = CONFIDENCE, resamples: int = BOOTSTRAP_RESAMPLES,
                        seed: int = 0) -> CorrelationDifference:
    """rho(x1, y1) - rho(x2, y2) for two independent groups, with its bootstrap interval (NaN without a rho)."""
    pairs = []
    for x, y in ((x1, y1), (x2, y2)):
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        if x.shape != y.shape or x.ndim != 1:
            raise ValueError("x and y must be two sequences of the same length")
        pairs.append((x, y))
    first, second = (spearman(x, y, resamples=0) for x, y in pairs)
    difference = first.rho - second.rho
    if math.isnan(difference) or resamples <= 0:
        return CorrelationDifference(difference)
    (ax, ay), (bx, by) = pairs

    def statistic(i: np.ndarray, j: np.ndarray, axis: int = -1) -> np.ndarray:
        return spearman_rho(ax[i], ay[i], axis=axis) - spearman_rho(bx[j], by[j], axis=axis)

    low, high, undefined = percentile_bootstrap((np.arange(ax.size), np.arange(bx.size)), statistic,
                                                confidence=confidence, resamples=resamples, seed=seed)
    return CorrelationDifference(difference, low, high, undefined)
