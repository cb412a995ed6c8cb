"""Confidence intervals that several probes share.

- ``wilson_interval(count, n)``: the Wilson score interval for a proportion (statsmodels
  ``proportion_confint``, method ``"wilson"``), for one count or for arrays of them at once. NaN where
  ``n`` is 0; a bound that is exactly 0 or 1 (no successes, or all) is returned as exactly 0 or 1.
- ``bootstrap_interval(values, statistic)``: the percentile bootstrap interval of a statistic of one
  sample (scipy ``bootstrap``, ``method="percentile"``): the sample is drawn with replacement
  ``resamples`` times, the statistic computed on each draw, and the interval is the
  ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of the draws (linear interpolation).
- ``draw_spread(values)``: the 5th and 95th percentiles (inverted CDF, NaNs left out) of a statistic over
  draws of an arbitrary choice (ties broken at random): the spread reported beside the median draw.
- ``bootstrap_difference(a, b, statistic)``: the same for ``statistic(a) - statistic(b)`` of two
  independent groups; each group is drawn with replacement on its own (scipy ``paired=False``).

Every bootstrap takes a ``seed`` (a ``numpy.random.default_rng(seed)`` generator is handed to scipy),
so the same data give the same interval every time. ``statistic`` must be vectorised: called as
``statistic(sample, axis=-1)`` on an array of draws, it returns one value per draw (``np.mean``,
``np.median`` and other numpy reductions do). A draw where the statistic is undefined (NaN) is left
out; when that happens to more than half the draws there is no interval (NaN, NaN).

scipy and statsmodels are imported inside the functions: the window must open without loading them.
"""

from __future__ import annotations

import math
import warnings
from typing import Callable, Sequence

import numpy as np

CONFIDENCE = 0.95
BOOTSTRAP_RESAMPLES = 2000
# fewer defined draws than this share of all draws: no interval
MIN_DEFINED_SHARE = 0.5
# values held in memory per batch of draws (with one sample, or paired samples, the draws do not depend on
# it; two independent groups are drawn batch by batch, each batch first from one group, then the other)
BATCH_VALUES = 2_000_000

Statistic = Callable[..., np.ndarray]
NO_INTERVAL = (math.nan, math.nan)
#: the percentiles of a statistic over the draws of an arbitrary choice, reported as its spread
SPREAD_PERCENTILES = (5, 95)


def draw_spread(values) -> tuple[float, float]:
    """``SPREAD_PERCENTILES`` of ``values`` (NaNs left out; NaN, NaN when none is left)."""
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if not len(values):
        return NO_INTERVAL
    low, high = np.percentile(values, SPREAD_PERCENTILES, method="inverted_cdf")
    return float(low), float(high)


def wilson_interval(count, n, confidence: float = CONFIDENCE):
    """Wilson score interval for ``count`` successes of ``n``: floats for numbers, arrays for arrays."""
    from statsmodels.stats.proportion import proportion_confint  # imported when used: it takes a second to load

    if np.ndim(count) == 0 and np.ndim(n) == 0:
        if n <= 0:
            return NO_INTERVAL
        low, high = proportion_confint(count, n, alpha=1 - confidence, method="wilson")
        # exact at the edges (floating point leaves 1e-17 where the bound is 0)
        return (0.0 if count == 0 else float(low)), (1.0 if count == n else float(high))
    count = np.asarray(count, dtype=float)
    n = np.asarray(n, dtype=float)
    known = n > 0
    low, high = proportion_confint(np.where(known, count, 0.0), np.where(known, n, 1.0), alpha=1 - confidence,
                                   method="wilson")
    low = np.where(known, np.where(count == 0, 0.0, low), np.nan)
    high = np.where(known, np.where(count == n, 1.0, high), np.nan)
    return low, high


def bootstrap_interval(values: Sequence[float], statistic: Statistic = np.mean, *, confidence: float = CONFIDENCE,
                       resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(values)`` (NaN, NaN when there are no values).

    When every value is the same, so is every draw: the interval is that statistic, with no width
    (the percentile bootstrap's known weakness, e.g. at 0% and 100%; the Wilson interval does not
    share it)."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return NO_INTERVAL
    if np.all(values == values[0]):
        point = float(statistic(values, axis=-1))
        return point, point
    low, high, _ = percentile_bootstrap((values,), statistic, confidence=confidence, resamples=resamples, seed=seed)
    return low, high


def bootstrap_difference(a: Sequence[float], b: Sequence[float], statistic: Statistic = np.mean, *,
                         confidence: float = CONFIDENCE, resamples: int = BOOTSTRAP_RESAMPLES,
                         seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(a) - statistic(b)``, the groups drawn independently.

    Each group needs at least two values (NaN, NaN otherwise)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size < 2 or b.size < 2:
        return NO_INTERVAL

    def difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return statistic(x, axis=axis) - statistic(y, axis=axis)

    low, high, _ = percentile_bootstrap((a, b), difference, confidence=confidence, resamples=resamples, seed=seed)
    return low, high


def percentile_bootstrap(samples: tuple[np.ndarray, ...], statistic: Statistic, *, paired: bool = False,
                         confidence: float = CONFIDENCE, resamples: int = BOOTSTRAP_RESAMPLES,
                         seed: int = 0) -> tuple[float, float, int]:
    """(low, high, undefined draws): scipy's seeded percentile bootstrap of ``statistic(*samples)``.

    ``paired``: the samples are columns of one table and their rows are drawn together. Draws where
    the statistic is NaN are left out (and counted); with more than half of them undefined there is no
    interval."""
    from scipy.stats import bootstrap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy warns of NaN draws: they are handled below
        result = bootstrap(samples, statistic, paired=paired, vectorized=True, confidence_level=confidence,
                           n_resamples=resamples, batch=max(1, BATCH_VALUES // max(len(s) for s in samples)),
                           method="percentile", random_state=np.random.default_rng(seed))
    draws = np.asarray(result.bootstrap_distribution, dtype=float)
    defined = np.isfinite(draws)
    undefined = int(draws.size - defined.sum())
    if undefined == 0:
        return float(result.confidence_interval.low), float(result.confidence_interval.high), 0
    if defined.sum() < MIN_DEFINED_SHARE * draws.size:
        return math.nan, math.nan, undefined
    tail = (1 - confidence) / 2
    low, high = np.percentile(draws[defined], [100 * tail, 100 * (1 - tail)])
    return float(low), float(high), undefined
