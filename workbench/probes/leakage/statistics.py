"""The statistics this probe reports, through the shared ones (``workbench.analysis``) and scipy.

- ``spearman``: Spearman's rho, its p-value and a seeded percentile bootstrap interval over pairs
  (``analysis.correlation.spearman``); a side with a missing value leaves that pair out;
- ``roc_auc``: the area under the ROC curve of a score that is higher for members: the Mann-Whitney U of
  members against non-members (scipy ``mannwhitneyu``) divided by their product, ties counting one
  half, with a seeded percentile bootstrap interval that redraws members and non-members each on their
  own (``analysis.intervals.percentile_bootstrap``);
- ``binomial``: a two-sided exact binomial test against a chance rate (scipy ``binomtest``) and the
  Wilson interval of the rate (``analysis.intervals.wilson_interval``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from workbench.analysis.correlation import Correlation
from workbench.analysis.correlation import spearman as shared_spearman
from workbench.analysis.intervals import BOOTSTRAP_RESAMPLES, CONFIDENCE, percentile_bootstrap, wilson_interval

RESAMPLES = BOOTSTRAP_RESAMPLES
SEED = 0
__all__ = ["CONFIDENCE", "RESAMPLES", "Correlation", "spearman", "roc_auc", "binomial"]


def spearman(x: Sequence[float], y: Sequence[float], *, seed: int = SEED) -> Correlation:
    """Spearman's rho over the pairs where both values are known (NaN for fewer than three pairs)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    return shared_spearman(x[keep], y[keep], seed=seed)


@dataclass(frozen=True)
class Auc:
    auc: float
    members: int
    non_members: int
    ci_low: float = math.nan
    ci_high: float = math.nan


def _auc(members: np.ndarray, others: np.ndarray, axis: int = -1) -> np.ndarray:
    """P(member score > non-member score) + half P(equal), for many draws at once (the last axis)."""
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
        low, high, _ = percentile_bootstrap((a, b), _auc, seed=seed)
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

    low, high = wilson_interval(successes, n)
    return Binomial(successes, n, successes / n, low, high, float(binomtest(successes, n, chance).pvalue))
