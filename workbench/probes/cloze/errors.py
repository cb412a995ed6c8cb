"""Error analysis (*Speak, Memory*, section 6.1): when a model gets a name wrong, does it offer a name from a
book it has memorized?

The books are split by the name-cloze accuracy of a grouping model (``by``; by default the analysed model):
the top decile M (memorized), the bottom decile U-books (not memorized) and the rest H (held out), as
``analysis.decile_sets`` cuts them (flagged books are left out of the ranking, and so are in H).

**Name sets.** Over every passage the analysed model answered, the association of a gold name n with a
book b is the pointwise mutual information PMI(n, b) = log(c(n, b) N / (c(n) c(b))), with c counting
passages (names compared without case). A name's score for a side is its largest PMI with a book of that
side; the names with a positive score for M are the candidates for S (seen), those for the bottom books
the candidates for U (unseen). A name that is a candidate for both is dropped from both, so that S and U
are disjoint. Each side is ranked by score (then by its passages on that side, then alphabetically) and
S and U are the first ``set_size`` of each (default: as many as both sides have).

**The statistic.** On the held-out books, the errors are the answered passages scored wrong (an empty
answer or a refusal is an error, but names no one, so it counts in neither set).
o = log(P(answer in S | error) / P(answer in U | error)) = log(in_seen / in_unseen).

**The randomization test.** The 2k names of S and U are pooled and dealt again into two sets of k at random
(``permutations`` deals from ``numpy.random.default_rng(seed)``, see ``deal_counts``); o is computed for
each deal. The p-value is one-sided, as the question is: (1 + deals with o at least the observed one) /
(1 + deals). The deals are drawn and counted in arrays, a block of deals at a time, and only for the
names some error offered, which is what makes 10,000 deals on a hundred thousand answers take a fraction
of a second; ``plain_python`` is the same test written as an ordinary loop (the benchmark and the tests
compare the two).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

import numpy as np
import pandas as pd

from workbench.corpus.book_sets import group_fraction, tie_note
from workbench.errors import UserError
from workbench.progress import TaskState

if TYPE_CHECKING:
    from workbench.project import Project

DEFAULT_PERMUTATIONS = 10_000
BLOCK = 2_000  # deals drawn at once
SEEN, UNSEEN = "seen", "unseen"
SUMMARY_COLUMNS = ["model", "by", "set_size", "errors", "in_seen", "in_unseen", "log_odds", "p_value", "permutations",
                   "seed", "groups", "seen_books", "unseen_books", "held_out_books", "note"]
NAME_COLUMNS = ["set", "rank", "name", "pmi", "book_id", "book", "passages", "predicted_in_errors"]


@dataclass
class ErrorAnalysis:
    set_size: int
    errors: int
    in_seen: int
    in_unseen: int
    log_odds: float
    p_value: float
    permutations: int
    seed: int
    names: pd.DataFrame  # NAME_COLUMNS: both sets, ranked
    null: np.ndarray  # o for each deal (inf where no answer fell in the new U)
    books: dict[str, int] = field(default_factory=dict)  # seen, unseen, held_out: how many books each
    note: str = ""


def normalised(names: pd.Series) -> pd.Series:
    return names.fillna("").astype(str).str.strip().str.casefold()


# ---------------------------------------------------------------------------------------------- name sets
def name_sets(results: pd.DataFrame, top: Iterable[int], bottom: Iterable[int],
              set_size: int | None = None) -> pd.DataFrame:
    """The ranked names of S and U (``NAME_COLUMNS``) from the gold names of ``results`` (one row per passage:
    ``book_id``, ``book``, ``gold``)."""
    top, bottom = set(top), set(bottom)
    golds = pd.DataFrame({"book_id": results["book_id"].to_numpy(), "name": normalised(results["gold"]).to_numpy(),
                          "shown": results["gold"].astype(str).str.strip().to_numpy()})
    golds = golds[golds["name"] != ""]
    total = len(golds)
    pair = golds.groupby(["name", "book_id"]).size().rename("passages").reset_index()
    pair["pmi"] = np.log(pair["passages"] * total / (pair["name"].map(golds["name"].value_counts())
                                                     * pair["book_id"].map(golds["book_id"].value_counts())))
    sides = []
    for side, books in ((SEEN, top), (UNSEEN, bottom)):
        part = pair[pair["book_id"].isin(books)]
        on_side = part.groupby("name")["passages"].sum()
        best = part.sort_values(["pmi", "passages", "book_id"], ascending=[False, False, True]).drop_duplicates("name")
        best = best[best["pmi"] > 0].assign(set=side, side_passages=lambda f: f["name"].map(on_side))
        sides.append(best)
    both = set(sides[0]["name"]) & set(sides[1]["name"])
    sides = [s[~s["name"].isin(both)].sort_values(["pmi", "side_passages", "name"], ascending=[False, False, True])
             for s in sides]
    available = min(len(sides[0]), len(sides[1]))
    k = available if set_size is None else min(int(set_size), available)
    forms = golds.groupby(["name", "shown"]).size().rename("n").reset_index()
    shown = forms.sort_values(["n", "shown"], ascending=[False, True]).drop_duplicates("name").set_index("name")["shown"]
    titles = results.drop_duplicates("book_id").set_index("book_id")["book"] if "book" in results else pd.Series(dtype=str)
    frame = pd.concat([s.head(k).assign(rank=np.arange(1, k + 1)) for s in sides], ignore_index=True)
    frame["book"] = frame["book_id"].map(titles)
    frame["display"] = frame["name"].map(shown)
    frame = frame.drop(columns="name").rename(columns={"display": "name", "side_passages": "side"})
    frame["predicted_in_errors"] = 0
    return frame[NAME_COLUMNS]


# ---------------------------------------------------------------------------------------------- the test
def _log_odds(in_seen: float | np.ndarray, in_unseen: float | np.ndarray):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(np.asarray(in_seen, dtype=float)) - np.log(np.asarray(in_unseen, dtype=float))


def deal_counts(counts: np.ndarray, k: int, deals: int, seed: int, state: TaskState | None = None) -> np.ndarray:
    """For each of ``deals`` random deals of the pooled names into two sets of ``k``: the errors whose answer
    falls in the first set (``counts``: errors per pooled name).

    A deal is drawn name by name, but only for the names some error offered (the others add nothing):
    the j-th of them (j from 0) joins the first set with probability (k - places taken) / (pooled - j),
    which is the chance it has in a uniform shuffle, given where the names before it went. Each step is
    one array operation over a block of deals (``BLOCK``), with one uniform number per deal and name."""
    rng = np.random.default_rng(seed)
    pooled = len(counts)
    named = np.flatnonzero(counts)
    weights = counts[named].astype(np.int64)
    out = np.empty(deals, dtype=np.int64)
    for start in range(0, deals, BLOCK):
        if state is not None:
            state.check()
            state.progress(start, deals, "Shuffling names between the sets")
        rows = min(BLOCK, deals - start)
        uniform = rng.random((rows, len(named)))
        taken = np.zeros(rows, dtype=np.int64)
        total = np.zeros(rows, dtype=np.int64)
        for j, weight in enumerate(weights):
            joins = uniform[:, j] * (pooled - j) < (k - taken)
            taken += joins
            total += joins * weight
        out[start : start + rows] = total
    if state is not None:
        state.progress(deals, deals, "Shuffled", force=True)
    return out


def p_at_least(null_seen: np.ndarray, total: int, in_seen: int, in_unseen: int) -> float:
    """One-sided p: deals whose log-odds is at least the observed one (compared as whole numbers:
    seen' / unseen' >= seen / unseen), the observed deal counted as one of them."""
    if in_seen == 0 and in_unseen == 0:
        return math.nan
    null_unseen = total - null_seen
    extreme = null_seen * in_unseen >= in_seen * null_unseen
    return float((1 + extreme.sum()) / (1 + len(null_seen)))


def error_statistics(results: pd.DataFrame, top: Iterable[int], bottom: Iterable[int], *, set_size: int | None = None,
                     permutations: int = DEFAULT_PERMUTATIONS, seed: int = 0,
                     state: TaskState | None = None) -> ErrorAnalysis:
    """The analysis on a table of answers (one row per passage: ``book_id``, ``book``, ``gold``, ``parsed``,
    ``correct``, ``status``) and the ids of the top and bottom books."""
    top, bottom = set(top), set(bottom)
    if permutations < 1:
        raise UserError("The randomization test needs at least one permutation.")
    names = name_sets(results, top, bottom, set_size)
    k = int((names["set"] == SEEN).sum())
    held = results[~results["book_id"].isin(top | bottom)]
    wrong = held[(held["status"] == "ok") & ~held["correct"].astype(bool)]
    predicted = normalised(wrong["parsed"])
    counted = predicted[predicted != ""].value_counts()
    key = normalised(names["name"])
    names["predicted_in_errors"] = key.map(counted).fillna(0).astype(int).to_numpy()
    books = {"seen": len(top), "unseen": len(bottom), "held_out": int(held["book_id"].nunique())}
    if k == 0:
        return ErrorAnalysis(0, len(wrong), 0, 0, math.nan, math.nan, 0, seed, names, np.array([]), books,
                             "no name is associated with one side only, so there are no sets to compare")
    counts = names["predicted_in_errors"].to_numpy(dtype=np.int64)
    in_seen, in_unseen = int(counts[:k].sum()), int(counts[k:].sum())
    null_seen = deal_counts(counts, k, permutations, seed, state)
    total = in_seen + in_unseen
    note = "" if total else "no error on the held-out books names anyone in S or U"
    return ErrorAnalysis(k, len(wrong), in_seen, in_unseen, float(_log_odds(in_seen, in_unseen)),
                         p_at_least(null_seen, total, in_seen, in_unseen), permutations, seed, names,
                         _log_odds(null_seen, total - null_seen), books, note)


def plain_python(errors: list[str], seen: list[str], unseen: list[str], permutations: int, seed: int) -> tuple[float, float]:
    """The same statistic and test as an ordinary loop, one deal and one error at a time: (o, p)."""

    def log_odds(s: set[str], u: set[str]) -> float:
        a = sum(1 for e in errors if e in s)
        b = sum(1 for e in errors if e in u)
        if a == 0 or b == 0:
            return math.inf if b == 0 and a else (-math.inf if a == 0 and b else math.nan)
        return math.log(a) - math.log(b)

    observed = log_odds(set(seen), set(unseen))
    pooled, k = seen + unseen, len(seen)
    rng = random.Random(seed)
    extreme = 0
    for _ in range(permutations):
        rng.shuffle(pooled)
        if log_odds(set(pooled[:k]), set(pooled[k:])) >= observed:
            extreme += 1
    return observed, (1 + extreme) / (1 + permutations)


# ---------------------------------------------------------------------------------------------- on a project
def model_answers(project: "Project", model: str) -> pd.DataFrame:
    """``model``'s name-cloze answers (the prompted kind when it has several), one row per passage."""
    from workbench.probes.cloze.analysis import passage_results

    results = passage_results(project, model)
    kinds = sorted(results["kind"].unique())
    if len(kinds) > 1:
        results = results[results["kind"] == ("cloze" if "cloze" in kinds else kinds[0])]
    if results.empty:
        raise UserError(f"'{model}' has no name-cloze answers yet: run the probe or import its results.")
    return results


def error_analysis(project: "Project", model: str, by: str | None = None, *, groups: str = "decile",
                   set_size: int | None = None, permutations: int = DEFAULT_PERMUTATIONS, seed: int = 0,
                   state: TaskState | None = None) -> ErrorAnalysis:
    """The error analysis of ``model``'s answers, books grouped by ``by``'s accuracy (default: ``model``'s)."""
    from workbench.probes.cloze.analysis import decile_sets

    if set_size is not None and set_size < 1:
        raise UserError("The set size must be at least 1 (or leave it out for as many names as both sides allow).")
    results = model_answers(project, model)
    sets = decile_sets(project, by or model, fraction=group_fraction(groups), save=False)
    top_rows, bottom_rows = (sets[sets["set"].str.startswith(f"cloze {side}")] for side in ("top", "bottom"))
    result = error_statistics(results, top_rows["book_id"], bottom_rows["book_id"], set_size=set_size,
                              permutations=permutations, seed=seed, state=state)
    tied = tie_note((side, int(rows["tied_at_cut"].sum()), len(rows))
                    for side, rows in (("top", top_rows), ("bottom", bottom_rows)))
    if tied:
        tied += ", and the names of S or U, so o, can change with that choice"
        result.note = "; ".join(filter(None, [result.note, tied]))
    return result


def summary_frame(result: ErrorAnalysis, model: str, by: str | None, groups: str = "decile") -> pd.DataFrame:
    return pd.DataFrame([{
        "model": model, "by": by or model, "set_size": result.set_size, "errors": result.errors,
        "in_seen": result.in_seen, "in_unseen": result.in_unseen, "log_odds": result.log_odds,
        "p_value": result.p_value, "permutations": result.permutations, "seed": result.seed, "groups": groups,
        "seen_books": result.books.get("seen"), "unseen_books": result.books.get("unseen"),
        "held_out_books": result.books.get("held_out"), "note": result.note,
    }], columns=SUMMARY_COLUMNS)


def error_table(project: "Project", model: str, by: str | None = None, **options) -> pd.DataFrame:
    """``palimpsest cloze errors``: one row with o, p and the counts behind them."""
    groups = options.pop("groups", "decile")
    return summary_frame(error_analysis(project, model, by, groups=groups, **options), model, by, groups)
