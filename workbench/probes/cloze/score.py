"""Scoring name-cloze answers: pure functions, re-applied whenever results are read.

The rule is the one behind the published gpt4-books results:

- ``parse_answer``: remove every ``<name>`` and ``</name>`` tag (any case) and the whitespace around
  what is left. So ``"<name> Elizabeth </name>"`` -> ``"Elizabeth"``; untagged ``"Elizabeth"`` ->
  ``"Elizabeth"`` too; an answer with several tags keeps all its text (``"<name>Jane</name> or
  <name>Lydia</name>"`` -> ``"Jane or Lydia"``), so hedging between names is never correct;
  empty output -> ``""``; no output at all (a failed call) -> ``None``.
- ``is_correct``: the parsed answer equals the gold name, ignoring case (and whitespace around gold).
  An empty answer is wrong; a failed call is not scored.

Accuracy per book = correct / passages scored. Failed calls are counted apart, never in the
denominator. Every proportion comes with a 95% confidence interval: Wilson (statsmodels) by default,
or a percentile bootstrap (scipy; 2,000 resamples, seed 0), both from ``workbench.analysis.intervals``.
With every outcome alike, the bootstrap interval has no width (a known weakness at 0% and 100%; the
chart note says so, and the Wilson interval, the default, does not share it).
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np
import pandas as pd

from workbench.analysis.intervals import bootstrap_interval, wilson_interval

TAG = re.compile(r"</?\s*name\s*>", re.IGNORECASE)
CI_METHODS = ("wilson", "bootstrap")
ALPHA = 0.05  # 95% intervals


def parse_answer(raw: str | None) -> str | None:
    """The model's answer without tags and surrounding whitespace; None when there was no output."""
    if raw is None:
        return None
    return TAG.sub("", raw).strip()


def is_correct(parsed: str | None, gold: str) -> bool:
    """True iff the parsed answer is the gold name, ignoring case."""
    if parsed is None:
        return False
    return parsed.casefold() == gold.strip().casefold()


def score_raw(raw: str | None, gold: str) -> bool:
    return is_correct(parse_answer(raw), gold)


def scored(frame: pd.DataFrame) -> pd.DataFrame:
    """Add ``parsed`` and ``correct`` to a frame with ``raw``, ``gold`` and ``status`` columns.

    Failed rows get ``parsed`` None and ``correct`` <NA> (they are not scored). Each distinct answer
    and each distinct gold name is parsed and case-folded once (answers repeat: a hundred thousand
    answers hold a few thousand names), by ``parse_answer`` and ``is_correct``'s rule.
    """
    out = frame.copy()
    ok = (out["status"] == "ok").to_numpy()
    raw_codes, raws = pd.factorize(out["raw"])  # no output (None) -> -1
    gold_codes, golds = pd.factorize(out["gold"])
    parsed_values = [parse_answer(r) for r in raws]
    parsed = np.array(parsed_values + [None], dtype=object)[raw_codes]  # -1 takes the trailing None
    parsed[~ok] = None
    folded = np.array([p.casefold() for p in parsed_values] + [""], dtype=object)[raw_codes]
    folded_gold = np.array([g.strip().casefold() for g in golds] + [""], dtype=object)[gold_codes]
    correct = (raw_codes >= 0) & (gold_codes >= 0) & (folded == folded_gold).astype(bool)
    out["parsed"] = parsed
    out["correct"] = pd.arrays.BooleanArray(correct & ok, ~ok)
    return out


def accuracy_interval(outcomes: Sequence[bool], method: str = "wilson", alpha: float = ALPHA) -> tuple[float, float]:
    """The CI for the share of True in ``outcomes`` by ``method`` ('wilson' or 'bootstrap')."""
    if method == "wilson":
        values = list(outcomes)
        return wilson_interval(int(sum(bool(v) for v in values)), len(values), 1 - alpha)
    if method == "bootstrap":
        return bootstrap_interval(outcomes, confidence=1 - alpha)
    from workbench.errors import UserError

    raise UserError(f"'{method}' is not a confidence-interval method here; choose wilson or bootstrap.")
