"""DE-COP scores and inference, as pure functions of the answers (``decop.answers_frame``).

The unit is the **passage**. The answers to one passage in its several option orders are not independent
trials (the same four texts, the same model): a model that settles on one text of the four answers the same
in every order, right or wrong. So a passage's answers are first reduced to one number, and only then is
anything tested or estimated across passages.

- **Passage score**: the share of the passage's answered orders in which the model picked the verbatim text
  (an answer naming no letter A-D is *unanswered* and left out; a passage with no answered order has no
  score). Beside it, the share of orders in which it picked each of the four texts (``picks``).
- **Book score**: the mean of its passages' scores. When every order of every passage is answered this is
  DE-COP's book-level accuracy (correct answers over passages x orders).
- **Interval**: the Wilson score interval with the passage as the trial: the sum of the passage scores out
  of the number of passages (``analysis.intervals.wilson_interval``). A score in [0, 1] with mean m has a
  variance of at most m(1 - m), so this is at least as wide as a normal-theory interval for the mean of the
  scores, and, unlike a percentile bootstrap, it keeps a width when every passage scores 1 (which DE-COP
  reports for well-known books). With 0/1 scores it is the Wilson interval of the passages recognised.
- **Test against chance** (``chance_test``): a one-sided exact randomisation test with the passage as the
  unit. If the model cannot tell the published text from the paraphrases, its answers to a passage would be
  the same whichever of the four texts had been published; so, holding its picks fixed, each of the four
  texts is equally likely to be the verbatim one, and the passage's score is one of its four pick shares
  with probability 1/4 each, independently across passages. The p-value is the chance, under that
  relabelling, of a sum of passage scores at least as large as the one observed (computed exactly by
  convolution; by seeded Monte Carlo draws when the passages' answered counts make the grid too fine).
  A constant preference for a letter is absorbed: with balanced orders it spreads the picks evenly, and the
  passage's score is 1/4 under every relabelling. When every passage is answered the same in all its
  orders (a score of 1 or 0), the test is the exact binomial test of the passages recognised against 1/4
  (scipy ``binomtest``, one-sided). The test asks whether the model tells the published text from the
  paraphrases better than chance, for whatever reason (memory, or a style the paraphrases lack); whether
  that is evidence of *training on the book* is what the comparison with clean books decides.
- **Decision** (``decision``): DE-COP's: the ROC AUC of the book scores, suspect books against clean books
  (``statistics.roc_auc``: Mann-Whitney U over the product of the group sizes, seeded percentile bootstrap
  interval drawn within each group). Clean books are tagged ``member=no``, or were published after the
  model's training cutoff (a year the user gives: models carry no cutoff in Palimpsest); every other book
  tested is suspect (``member=yes`` wins over a late year).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

CHANCE = 0.25
OPTIONS = 4
#: the exact null distribution is computed on a grid of at most this many points; beyond, Monte Carlo draws
MAX_GRID = 2_000_000
MONTE_CARLO_DRAWS = 100_000
SEED = 0

SUSPECT, CLEAN = "suspect", "clean"
FEW_BOOKS = 5  # fewer books than this in a group: the AUC's bootstrap interval is not to be trusted


# ---------------------------------------------------------------------------------------------- passages
def passage_scores(answers: pd.DataFrame) -> pd.DataFrame:
    """One row per passage (of each model, paraphraser, orders and seed) from ``decop.answers_frame``: questions,
    answered, correct, score (correct / answered; NaN with none answered) and ``picks``, the counts of answered
    orders in which each of the four texts was picked (0: the verbatim text, 1-3: the paraphrases)."""
    keys = ["model", "paraphraser", "orders", "seed", "book", "book_id", "passage_id", "item_id"]
    columns = [*keys, "questions", "answered", "unanswered", "correct", "score", "picks"]
    asked = answers[answers["status"] == "ok"] if not answers.empty else answers
    if asked.empty:
        return pd.DataFrame(columns=columns)
    # counted by pandas' grouped sums, not a Python loop over 14,000 passages' groups
    picked = pd.to_numeric(asked["picked"], errors="coerce")
    tally = asked[keys].assign(_questions=1, _answered=picked.notna().astype(np.int64),
                               **{f"_p{option}": (picked == option).astype(np.int64) for option in range(OPTIONS)})
    summed = tally.groupby(keys, dropna=False, sort=True).sum().reset_index()
    answered = summed["_answered"].to_numpy()
    out = summed[keys].copy()
    out["questions"] = summed["_questions"].to_numpy()
    out["answered"] = answered
    out["unanswered"] = summed["_questions"].to_numpy() - answered
    out["correct"] = summed["_p0"].to_numpy()
    with np.errstate(all="ignore"):
        out["score"] = np.where(answered > 0, summed["_p0"].to_numpy() / np.maximum(answered, 1), math.nan)
    out["picks"] = np.column_stack([summed[f"_p{option}"].to_numpy(np.int64) for option in range(OPTIONS)]).tolist()
    return out[columns]


# ---------------------------------------------------------------------------------------------- the test
@dataclass(frozen=True)
class ChanceTest:
    passages: int
    score: float  # the mean passage score
    p_value: float
    method: str  # "exact" or "monte carlo"


def chance_test(picks: Sequence[Sequence[int]], *, max_grid: int = MAX_GRID, draws: int = MONTE_CARLO_DRAWS,
                seed: int = SEED) -> ChanceTest:
    """The one-sided randomisation test of the mean passage score against chance (see the module's text).

    ``picks``: per passage, how many answered orders picked text 0 (verbatim), 1, 2 and 3. Passages with no
    answered order are left out."""
    counts = [[int(c) for c in p] for p in picks if sum(p) > 0]
    if not counts:
        return ChanceTest(0, math.nan, math.nan, "exact")
    answered = [sum(c) for c in counts]
    score = float(np.mean([c[0] / a for c, a in zip(counts, answered)]))
    grid = math.lcm(*answered)
    if len(counts) * grid + 1 <= max_grid:
        return ChanceTest(len(counts), score, _exact_p(counts, answered, grid), "exact")
    return ChanceTest(len(counts), score, _monte_carlo_p(counts, answered, draws, seed), "monte carlo")


def _exact_p(counts: list[list[int]], answered: list[int], grid: int) -> float:
    """P(sum of relabelled scores >= observed), the scores as whole multiples of 1 / ``grid``."""
    values = [[c * (grid // a) for c in passage] for passage, a in zip(counts, answered)]
    distribution = np.ones(1)
    for passage in values:
        wider = np.zeros(distribution.size + max(passage))
        quarter = distribution / OPTIONS
        for value in passage:
            wider[value:value + distribution.size] += quarter
        distribution = wider
    observed = sum(passage[0] for passage in values)
    return float(min(1.0, distribution[observed:].sum()))


def _monte_carlo_p(counts: list[list[int]], answered: list[int], draws: int, seed: int) -> float:
    shares = np.asarray(counts, dtype=float) / np.asarray(answered, dtype=float)[:, None]
    observed = shares[:, 0].sum()
    rng = np.random.default_rng(seed)
    rows = np.arange(len(shares))
    at_least, done = 0, 0
    while done < draws:
        size = min(max(1, 2_000_000 // len(shares)), draws - done)
        labels = rng.integers(0, OPTIONS, size=(size, len(shares)))
        at_least += int((shares[rows, labels].sum(axis=1) >= observed - 1e-9).sum())
        done += size
    return (1 + at_least) / (1 + draws)


# ---------------------------------------------------------------------------------------------- books
BOOK_KEYS = ["model", "paraphraser", "orders", "seed", "book_id"]
BOOK_COLUMNS = ["book", "book_id", "group", "why", "model", "paraphraser", "orders", "seed", "passages",
                "questions", "answered", "unanswered", "correct", "score", "ci_low", "ci_high", "p_value"]


def book_scores(passages: pd.DataFrame, groups: dict[int, tuple[str, str]] | None = None) -> pd.DataFrame:
    """Per book (of each model, paraphraser, orders and seed): passages scored, their questions, the book score
    (mean passage score) with its Wilson interval over passages, and the test against chance. ``groups``: book
    id -> (suspect or clean, why), from ``book_groups``."""
    from workbench.analysis.intervals import wilson_interval

    scored = passages.dropna(subset=["score"]) if not passages.empty else passages
    if scored.empty:
        return pd.DataFrame(columns=BOOK_COLUMNS)
    groups = groups or {}
    rows = []
    grouped = passages.groupby(BOOK_KEYS, dropna=False, sort=True)
    # each book's rows by their group number (in the groups' sorted order), not a frame sliced per book
    members = np.argsort(grouped.ngroup().to_numpy(), kind="stable")
    ends = np.cumsum(grouped.size().to_numpy())
    score, picks, book = passages["score"].to_numpy(float), passages["picks"].tolist(), passages["book"].tolist()
    tallies = {name: passages[name].to_numpy() for name in ("questions", "answered", "unanswered", "correct")}
    totals: list[float] = []
    scored_count: list[int] = []
    for key, end, start in zip(grouped.size().index, ends, np.concatenate([[0], ends[:-1]])):
        rows_of = members[start:end]
        known = rows_of[~np.isnan(score[rows_of])]
        test = chance_test([picks[i] for i in known])
        totals.append(float(pd.Series(score[known]).sum()))  # summed as pandas sums a column
        scored_count.append(len(known))
        book_id = key[-1]
        side, why = groups.get(int(book_id), (SUSPECT, "")) if pd.notna(book_id) else (SUSPECT, "")
        rows.append({**dict(zip(BOOK_KEYS, key)), "book": book[rows_of[0]], "group": side, "why": why,
                     "passages": len(known), **{name: int(values[rows_of].sum()) for name, values in tallies.items()},
                     "score": test.score, "p_value": test.p_value})
    frame = pd.DataFrame(rows, columns=BOOK_COLUMNS)
    # every book's Wilson interval in one call (statsmodels works on arrays; the same numbers as one at a time)
    frame["ci_low"], frame["ci_high"] = (np.asarray(bound, dtype=float) for bound in wilson_interval(totals, scored_count))
    frame["book_id"] = frame["book_id"].astype("Int64")
    return frame


def book_groups(books: pd.DataFrame, members: dict[int, bool], cutoff_year: int | None) -> dict[int, tuple[str, str]]:
    """Book id -> (``clean`` or ``suspect``, why), for the books of ``books`` (columns ``id``, ``year``): clean
    when tagged a non-member, or published after ``cutoff_year``; a member tag wins over the year."""
    out = {}
    for book_id, year in zip(books["id"].astype(int), books["year"]):
        if book_id in members:
            out[book_id] = (SUSPECT, "tagged a member") if members[book_id] else (CLEAN, "tagged not a member")
        elif cutoff_year is not None and pd.notna(year) and int(year) > cutoff_year:
            out[book_id] = (CLEAN, f"published {int(year)}, after the cutoff {cutoff_year}")
        else:
            out[book_id] = (SUSPECT, "")
    return out


# ---------------------------------------------------------------------------------------------- the decision
DECISION_COLUMNS = ["model", "paraphraser", "orders", "seed", "suspect_books", "clean_books", "suspect_score",
                    "clean_score", "auc", "ci_low", "ci_high", "cutoff_year", "note"]
NO_CLEAN = ("No clean books, so no decision: DE-COP compares the books it suspects with books the model cannot "
            "have seen. Tag such books member=no (Library page), or give the model's training cutoff year "
            "(--cutoff-year; the DE-COP tab's 'Training cutoff') so that books published after it count as clean, "
            "and ask the model about their passages too.")
NO_SUSPECT = "No suspect books: every book tested is clean. Add the books you suspect to the test."


def decision(books: pd.DataFrame, cutoff_year: int | None = None, *, seed: int = SEED) -> pd.DataFrame:
    """Per model, paraphraser, orders and seed: the ROC AUC of the book scores, suspect against clean books, with
    its bootstrap interval; a note saying plainly when one group is missing."""
    from workbench.probes.leakage.statistics import roc_auc

    rows = []
    scored = books.dropna(subset=["score"]) if not books.empty else books
    for key, group in (scored.groupby(BOOK_KEYS[:-1], dropna=False, sort=True) if not scored.empty else []):
        suspect = group.loc[group["group"] == SUSPECT, "score"].astype(float)
        clean = group.loc[group["group"] == CLEAN, "score"].astype(float)
        result = roc_auc(suspect, clean, seed=seed)
        note = NO_CLEAN if clean.empty else NO_SUSPECT if suspect.empty else ""
        if not note and (len(suspect) < 2 or len(clean) < 2):
            note = "No interval: each group needs at least two books."
        elif not note and min(len(suspect), len(clean)) < FEW_BOOKS:
            note = (f"Few books: with fewer than {FEW_BOOKS} books in a group the bootstrap interval is unreliable "
                    "(often too narrow); test more books.")
        rows.append({**dict(zip(BOOK_KEYS[:-1], key)), "suspect_books": len(suspect), "clean_books": len(clean),
                     "suspect_score": float(suspect.mean()) if len(suspect) else math.nan,
                     "clean_score": float(clean.mean()) if len(clean) else math.nan, "auc": result.auc,
                     "ci_low": result.ci_low, "ci_high": result.ci_high, "cutoff_year": cutoff_year, "note": note})
    return pd.DataFrame(rows, columns=DECISION_COLUMNS)


def describe_decision(row) -> str:
    """One plain sentence for a row of ``decision``."""
    which = f"{row['model']} (paraphrases by {row['paraphraser']}, {int(row['orders'])} orders per passage)"
    if row["note"] and row["auc"] != row["auc"]:
        return f"{which}: {row['note']}"
    interval = f" [95% CI {row['ci_low']:.2f}-{row['ci_high']:.2f}]" if row["ci_low"] == row["ci_low"] else ""
    said = (f"{which}: suspect books against clean books, ROC AUC {row['auc']:.2f}{interval} "
            f"({int(row['suspect_books'])} suspect, mean score {row['suspect_score']:.0%}; {int(row['clean_books'])} "
            f"clean, mean score {row['clean_score']:.0%}). 0.5: no difference; 1: every suspect book scores above "
            "every clean one.")
    return said + (f" {row['note']}" if row["note"] else "")
