"""The statistics this probe reports, through the shared ones (``workbench.analysis``) and scipy.

- ``spearman``: Spearman's rho, its p-value and a seeded percentile bootstrap interval over pairs
  (``analysis.correlation.spearman``); a side with a missing value leaves that pair out;
- ``roc_auc``: the area under the ROC curve of a score that is higher for members: the Mann-Whitney U of
  members against non-members (scipy ``mannwhitneyu``) divided by their product, ties counting one
  half, with a seeded percentile bootstrap interval that redraws members and non-members each on their
  own (``analysis.intervals.percentile_bootstrap``);
- ``clustered_roc_auc``: the same AUC over passages that come in books (each passage labelled by its
  book), with the interval of a cluster bootstrap: members' books and non-members' books are redrawn
  (each group on its own, a book with all its passages), as passages of one book are not independent;
- ``roc_curve``: the ROC curve's points (false and true positive rates at every threshold, members as
  positives), whose trapezoid area is the AUC above (ties counting one half);
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
__all__ = ["CONFIDENCE", "RESAMPLES", "Correlation", "spearman", "roc_auc", "clustered_roc_auc", "roc_curve",
           "binomial"]


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
class ClusteredAuc:
    auc: float
    members: int  # passages
    non_members: int
    member_groups: int  # books
    non_member_groups: int
    ci_low: float = math.nan
    ci_high: float = math.nan


def _finite_groups(groups: Sequence[Sequence[float]]) -> list[np.ndarray]:
    kept = [np.asarray(g, dtype=float) for g in groups]
    kept = [g[np.isfinite(g)] for g in kept]
    return [g for g in kept if g.size]


def _counts(draws: np.ndarray, size: int) -> np.ndarray:
    """How often each of ``size`` groups is drawn in each draw (the last axis of ``draws`` holds group numbers)."""
    draws = np.asarray(draws).astype(np.int64)
    flat = draws.reshape(-1, draws.shape[-1])
    offsets = (np.arange(flat.shape[0]) * size)[:, None]
    counted = np.bincount((flat + offsets).ravel(), minlength=flat.shape[0] * size).reshape(flat.shape[0], size)
    return counted.reshape(*draws.shape[:-1], size).astype(float)


def clustered_roc_auc(members: Sequence[Sequence[float]], non_members: Sequence[Sequence[float]], *,
                      seed: int = SEED) -> ClusteredAuc:
    """ROC AUC over the values of all groups (``members``: one sequence of values per member book), higher
    meaning member; the interval redraws whole groups (percentile bootstrap, each side on its own)."""
    a_groups, b_groups = _finite_groups(members), _finite_groups(non_members)
    a_size, b_size = sum(g.size for g in a_groups), sum(g.size for g in b_groups)
    if not a_groups or not b_groups:
        return ClusteredAuc(math.nan, a_size, b_size, len(a_groups), len(b_groups))
    from scipy.stats import mannwhitneyu

    value = float(mannwhitneyu(np.concatenate(a_groups), np.concatenate(b_groups)).statistic) / (a_size * b_size)
    # wins[i, j]: pairs (value of member group i, value of non-member group j) with the member's higher, ties half
    wins = np.array([[(x[:, None] > y[None, :]).sum() + 0.5 * (x[:, None] == y[None, :]).sum() for y in b_groups]
                     for x in a_groups], dtype=float)
    a_sizes = np.array([g.size for g in a_groups], dtype=float)
    b_sizes = np.array([g.size for g in b_groups], dtype=float)

    def statistic(a_draw: np.ndarray, b_draw: np.ndarray, axis: int = -1) -> np.ndarray:
        a_times, b_times = _counts(a_draw, len(a_groups)), _counts(b_draw, len(b_groups))
        pairs = np.einsum("...i,ij,...j->...", a_times, wins, b_times)
        return pairs / ((a_times @ a_sizes) * (b_times @ b_sizes))

    low, high = math.nan, math.nan
    if len(a_groups) >= 2 and len(b_groups) >= 2:
        low, high, _ = percentile_bootstrap((np.arange(len(a_groups), dtype=float),
                                             np.arange(len(b_groups), dtype=float)), statistic, seed=seed)
    return ClusteredAuc(value, a_size, b_size, len(a_groups), len(b_groups), low, high)


def roc_curve(members: Sequence[float], non_members: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """(false positive rates, true positive rates) from (0, 0) to (1, 1), one point per distinct value taken
    as the threshold (a value at or above it counts as member), highest first."""
    a = np.sort(np.asarray([v for v in members if np.isfinite(v)], dtype=float))
    b = np.sort(np.asarray([v for v in non_members if np.isfinite(v)], dtype=float))
    if a.size == 0 or b.size == 0:
        return np.zeros(0), np.zeros(0)
    thresholds = np.unique(np.concatenate([a, b]))[::-1]
    tpr = (a.size - np.searchsorted(a, thresholds, side="left")) / a.size
    fpr = (b.size - np.searchsorted(b, thresholds, side="left")) / b.size
    return np.concatenate([[0.0], fpr]), np.concatenate([[0.0], tpr])


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
