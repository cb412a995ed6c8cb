"""A seeded permutation test for the difference of a statistic between two independent groups.

``permutation_test(a, b, statistic)`` asks whether ``statistic(a) - statistic(b)`` is larger (in size)
than it would be if the group labels meant nothing (scipy ``permutation_test``,
``permutation_type="independent"``): the pooled values are dealt out again into groups of the same
sizes, and the difference is computed for each deal.

- When there are no more distinct deals than ``resamples``, every deal is made once (``exact``) and
  the p-value is the share of deals at least as extreme as the observed one.
- Otherwise ``resamples`` random deals are drawn from ``numpy.random.default_rng(seed)`` (the same
  p-value every time) and the p-value is ``(k + 1) / (resamples + 1)``, ``k`` the deals at least as
  extreme: the observed deal counts as one of them, so the p-value is never 0.
- Two-sided (the default): twice the smaller one-sided p-value, at most 1. ``"greater"``: is
  ``statistic(a) - statistic(b)`` larger than chance; ``"less"``: smaller.

Each group needs at least two values (scipy's rule); otherwise there is no test (NaN).

``statistic`` is vectorised like the bootstrap's (``statistic(sample, axis=-1)``; ``np.mean`` and
``np.median`` are). scipy is imported inside the function.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from workbench.analysis.intervals import BATCH_VALUES, Statistic

PERMUTATION_RESAMPLES = 9999


@dataclass(frozen=True)
class PermutationTest:
    difference: float  # statistic(a) - statistic(b)
    p_value: float
    exact: bool  # every distinct deal was made
    deals: int  # deals the p-value rests on


def permutation_test(a: Sequence[float], b: Sequence[float], statistic: Statistic = np.mean, *,
                     alternative: str = "two-sided", resamples: int = PERMUTATION_RESAMPLES,
                     seed: int = 0) -> PermutationTest:
    """Permutation p-value for ``statistic(a) - statistic(b)`` (NaN when a group has fewer than two values)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size < 2 or b.size < 2:
        difference = float(statistic(a) - statistic(b)) if a.size and b.size else math.nan
        return PermutationTest(difference, math.nan, False, 0)
    from scipy.stats import permutation_test as scipy_permutation_test

    def difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return statistic(x, axis=axis) - statistic(y, axis=axis)

    total = math.comb(a.size + b.size, a.size)
    exact = total <= resamples
    result = scipy_permutation_test(
        (a, b), difference, permutation_type="independent", vectorized=True, alternative=alternative,
        n_resamples=resamples, batch=max(1, BATCH_VALUES // (a.size + b.size)),  # the deals do not depend on it
        random_state=np.random.default_rng(seed),
    )
    return PermutationTest(float(result.statistic), float(result.pvalue), exact, total if exact else resamples)
