"""Scoring a continuation against the book's, token by token (pure functions), and the statistics per book.

For an answer ``a`` (the model's tokens, cut to the length of the true continuation) and the truth ``t``:

- ``exact_prefix``: how many tokens from the start agree (the answer is *extractable* when this is at least
  ``m`` tokens; with m = N, the whole continuation word for word, as Carlini et al. 2023 count it);
- ``longest_common``: the longest run of tokens found in both, where in each (difflib's matcher, no junk
  heuristic);
- ``edit_similarity``: 1 - Levenshtein distance / the longer length (insertions, deletions and substitutions
  of whole tokens each cost 1; 1 means identical, 0 nothing in place).
"""

from __future__ import annotations

import difflib
from typing import Sequence

import numpy as np


def exact_prefix(answer: Sequence, truth: Sequence) -> int:
    """How many leading tokens of ``answer`` equal those of ``truth``."""
    count = 0
    for a, t in zip(answer, truth):
        if a != t:
            break
        count += 1
    return count


def longest_common(answer: Sequence, truth: Sequence) -> tuple[int, int, int]:
    """(length, start in answer, start in truth) of the longest run of tokens both share."""
    a, t = list(answer), list(truth)
    if not a or not t:
        return 0, 0, 0
    match = difflib.SequenceMatcher(None, a, t, autojunk=False).find_longest_match(0, len(a), 0, len(t))
    return int(match.size), int(match.a), int(match.b)


def edit_distance(answer: Sequence, truth: Sequence) -> int:
    """Levenshtein distance between two token sequences (rapidfuzz, on the tokens as items)."""
    from rapidfuzz.distance import Levenshtein

    return int(Levenshtein.distance(list(answer), list(truth)))


def edit_similarity(answer: Sequence, truth: Sequence) -> float:
    longer = max(len(answer), len(truth))
    return 1.0 if longer == 0 else 1.0 - edit_distance(answer, truth) / longer


def passage_scores(answer: Sequence, truth: Sequence) -> dict[str, float]:
    """Every score of one answer (cut to the truth's length first)."""
    answer = list(answer)[: len(truth)]
    length, at_answer, at_truth = longest_common(answer, truth)
    return {"answer_tokens": len(answer), "exact_prefix": exact_prefix(answer, truth), "longest_common": length,
            "common_at_answer": at_answer, "common_at_truth": at_truth,
            "edit_similarity": edit_similarity(answer, truth)}


# ---------------------------------------------------------------------------------------------- statistics
ALPHA = 0.05


def above_baseline(extractable: int, passages: int, base_extractable: int, base_passages: int) -> float:
    """One-sided p-value of Fisher's exact test that the book's extractable share exceeds the baseline's (the
    passage as the unit; NaN without passages on either side)."""
    from scipy.stats import fisher_exact

    if passages <= 0 or base_passages <= 0:
        return float("nan")
    table = [[extractable, passages - extractable], [base_extractable, base_passages - base_extractable]]
    return float(fisher_exact(table, alternative="greater").pvalue)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's adjustment of the books' p-values (statsmodels ``multipletests``); NaN stays NaN."""
    from statsmodels.stats.multitest import multipletests

    values = np.asarray(p_values, dtype=float)
    out = np.full(values.shape, np.nan)
    known = ~np.isnan(values)
    if known.any():
        out[known] = multipletests(values[known], method="holm")[1]
    return out.tolist()
