"""Statistics that several probes share: each names its library and its convention in its docstring.

- ``intervals``: Wilson intervals for proportions; seeded percentile bootstrap intervals of a statistic
  and of a difference between two groups.
- ``correlation``: Spearman's rho with its p-value and a bootstrap interval.
- ``permutation``: a seeded permutation test for a difference between two groups.

scipy and statsmodels are imported inside the functions, so importing these modules stays cheap.
"""
