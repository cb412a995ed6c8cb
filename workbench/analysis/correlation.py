"""Spearman's rank correlation with its p-value and a bootstrap interval.

- ``rho`` and ``p_value``: scipy ``spearmanr`` (ties get average ranks; two-sided p-value from the t
  distribution with n - 2 degrees of freedom, scipy's default).
- The interval (``resamples`` > 0): a seeded percentile bootstrap over pairs (scipy ``bootstrap``,
  ``paired=True``): the (x, y) pairs are drawn with replacement, rho is computed for each draw, and
  the interval is the middle ``confidence`` of those values. A draw in which x or y is constant has
  no rho and is left out (``undefined_draws`` counts them; with more than half left out there is no
  interval). See ``workbench.analysis.intervals``.

Fewer than three pairs, or a constant x or y, give no rho (NaN), and no interval.
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
