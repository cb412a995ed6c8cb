"""The year analysis: is a model's guess at a book's year of first publication better for books it knows?

Per book (``year_books``): the grouping model's name-cloze accuracy and group, the true year (given with
an imported passage, else the book's), the model's answer, the year it commits to, and the absolute error
|predicted - true|. With several passages per book, the book's error is the mean over its passages with
a prediction, and the book is *missing* when none of them has one. Books whose call failed are not
counted as missing (they have no answer yet); books without a true year cannot be scored and are left
out (both are counted in the note).

Per group (``year_table``), for ``top``, ``bottom`` and ``all`` books:

- ``books``: books with an answer; ``missing`` / ``missing_share``: of those, the books without a year
  (a 95% Wilson interval on the share);
- ``mae``: the mean absolute error over books with a prediction, with a 95% percentile bootstrap interval
  (``workbench.analysis.intervals``, seeded);
- on the ``all`` row, Spearman's rho (and p) between the grouping model's accuracy and the absolute error,
  over every book with a prediction and an accuracy;
- the ``difference`` row: top minus bottom, for the missing share (Fisher's exact test) and the MAE (a
  bootstrap interval drawing each group on its own, and a seeded permutation test, two-sided).

Each group's row also says how many of its answers the parser read (``answers``, ``parsed``,
``parse_rate`` with a 95% interval, ``approximate``, ``declined``; the difference row: top minus bottom,
``parse_p_value``), and every row names the parser's rule for spans of years (``spans``): see
``workbench.probes.validity.parse_rate`` and ``parsers``.

Groups with fewer than ``SMALL_GROUP`` books with a prediction are flagged in ``note``. Books tied at a cut
are treated by the tie rule ``ties`` (``groups``), as in the error analysis: all of them in (the default; the
top and bottom row's note says how many and how large the group became), or drawn at random over ``draws``
seeded draws, when the table is the median draw's (by the top - bottom MAE difference) and ``mae_p5`` /
``mae_p95`` give the 5th and 95th percentile of each row's MAE over the draws (under ``all`` they equal
``mae``). ``tied_at_cut`` per book marks the books from such a tie.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from workbench.analysis.correlation import spearman
from workbench.analysis.intervals import BOOTSTRAP_RESAMPLES, bootstrap_difference, bootstrap_interval, wilson_interval
from workbench.analysis.permutation import PERMUTATION_RESAMPLES, permutation_test
from workbench.errors import UserError
from workbench.probes.validity import YEAR
from workbench.probes.validity.answers import task_answers
from workbench.probes.validity.groups import (
    ALL,
    ALL_TIED,
    BOTTOM,
    DEFAULT_DRAWS,
    DIFFERENCE,
    MIDDLE,
    SMALL_GROUP,
    TOP,
    group_cuts,
    memorization_groups,
    over_draws,
    spread_note,
    tie_notes,
    with_groups,
)
from workbench.probes.validity.parse_rate import PARSE_COLUMNS, book_counts, parse_difference, parse_row
from workbench.probes.validity.parsers import DEFAULT_SPANS, YEAR_RANGE

if TYPE_CHECKING:
    from workbench.project import Project

BOOK_COLUMNS = ["book_id", "book", "group", "accuracy", "year", "answer", "predicted", "abs_error", "passages",
                "missing", "reason", "tied_at_cut", "flag", "parsed", "approximate", "declined"]
TABLE_COLUMNS = ["group", "books", "missing", "missing_share", "mae", "mae_ci_low", "mae_ci_high", "p_value",
                 "spearman_rho", "spearman_p", "missing_ci_low", "missing_ci_high", "missing_p_value", "predicted",
                 "model", "by", "groups", "note", *PARSE_COLUMNS, "parse_p_value", "spans", "tie_rule", "draws",
                 "mae_p5", "mae_p95"]


def year_books(project: "Project", model: str, by: str, *, groups: str = "decile",
               year_range: tuple[int, int] = YEAR_RANGE, save_groups: bool = False,
               spans: str = DEFAULT_SPANS, ties: str = ALL_TIED, seed: int = 0) -> pd.DataFrame:
    """One row per book with an answer (see the module docstring); ``group`` is '' for books the grouping
    model has no accuracy for. ``flag`` says how a value was made from a span; ``parsed``, ``approximate``
    and ``declined`` count the book's answers with a value, with a flagged value, and declined
    (``workbench.probes.validity.parse_rate``); ``spans``: the parser's rule for spans of years."""
    answers = task_answers(project, YEAR, model, year_range=year_range, spans=spans)
    answers = answers[answers["status"] == "ok"]
    if answers.empty:
        raise UserError(f"'{model}' has no answers to the year task yet: run it, or import its answers.")
    grouping = memorization_groups(project, by, groups, save=save_groups, ties=ties, seed=seed)
    rows = []
    for book_id, part in answers.groupby("book_id", sort=False):
        truth = part["truth_year"].to_numpy(dtype=float)
        values = part["value"].to_numpy(dtype=float)
        scored = ~np.isnan(values) & ~np.isnan(truth)
        predicted = ~np.isnan(values)
        rows.append({
            "book_id": int(book_id), "book": part["book"].iloc[0],
            "year": truth[0] if not np.isnan(truth).all() else math.nan,
            "answer": " | ".join(str(r) for r in part["raw"]),
            "predicted": float(values[predicted].mean()) if predicted.any() else math.nan,
            "abs_error": float(np.abs(values[scored] - truth[scored]).mean()) if scored.any() else math.nan,
            "passages": len(part), "missing": not predicted.any(),
            "reason": "; ".join(dict.fromkeys(r for r in part["reason"] if r)),
            "flag": "; ".join(dict.fromkeys(f for f in part["flag"] if f)),
        })
    counts = book_counts(answers).drop(columns="answers")
    frame = pd.DataFrame(rows, columns=[c for c in BOOK_COLUMNS if c not in ("group", "accuracy", "tied_at_cut",
                                                                             *counts.columns[1:])])
    frame = with_groups(frame.merge(counts, on="book_id", how="left"), grouping)
    frame["year"] = frame["year"].astype("Int64")
    return _ordered(frame)


def _ordered(frame: pd.DataFrame) -> pd.DataFrame:
    order = {TOP: 0, MIDDLE: 1, "": 2, BOTTOM: 3}
    frame = frame.assign(_order=frame["group"].map(order)).sort_values(
        ["_order", "accuracy", "book"], ascending=[True, False, True], kind="stable")
    return frame.drop(columns="_order").reset_index(drop=True)[BOOK_COLUMNS]


def _group_row(name: str, books: pd.DataFrame, seed: int, resamples: int) -> dict:
    answered = len(books)
    missing = int(books["missing"].sum())
    errors = books["abs_error"].dropna().to_numpy(dtype=float)
    low, high = wilson_interval(missing, answered) if answered else (math.nan, math.nan)
    mae_low, mae_high = bootstrap_interval(errors, seed=seed, resamples=resamples) if len(errors) else (math.nan,) * 2
    note = ""
    if len(errors) < SMALL_GROUP:
        note = ("no book with a prediction: no error to average" if not len(errors) else
                f"only {len(errors)} book{'s' if len(errors) != 1 else ''} with a prediction: a rough interval")
    return {"group": name, "books": answered, "missing": missing,
            "missing_share": missing / answered if answered else math.nan, "missing_ci_low": low,
            "missing_ci_high": high, "predicted": len(errors), "mae": errors.mean() if len(errors) else math.nan,
            "mae_ci_low": mae_low, "mae_ci_high": mae_high, "note": note}


def _mae_by_group(books: pd.DataFrame) -> dict[str, float]:
    """The MAE of the top and bottom books with a prediction and their difference (what a tie draw moves)."""
    values = {}
    for group in (TOP, BOTTOM):
        errors = books.loc[books["group"] == group, "abs_error"].dropna().to_numpy(dtype=float)
        values[group] = float(errors.mean()) if len(errors) else math.nan
    values[DIFFERENCE] = values[TOP] - values[BOTTOM]
    return values


def year_table(project: "Project", model: str, by: str, *, groups: str = "decile",
               year_range: tuple[int, int] = YEAR_RANGE, seed: int = 0, resamples: int = BOOTSTRAP_RESAMPLES,
               permutations: int = PERMUTATION_RESAMPLES, save_groups: bool = False,
               books: pd.DataFrame | None = None, spans: str = DEFAULT_SPANS, ties: str = ALL_TIED,
               draws: int = DEFAULT_DRAWS) -> pd.DataFrame:
    """The year analysis per group (top, bottom, all, difference; see the module docstring), with the parse
    rate of each (``workbench.probes.validity.parse_rate``) and the rule for spans of years in ``spans``.
    ``books``: the per-book table when the caller has it already (``year_books`` with the same choices)."""
    return year_results(project, model, by, groups=groups, year_range=year_range, seed=seed, resamples=resamples,
                        permutations=permutations, save_groups=save_groups, books=books, spans=spans, ties=ties,
                        draws=draws)[1]


def year_results(project: "Project", model: str, by: str, *, groups: str = "decile",
                 year_range: tuple[int, int] = YEAR_RANGE, seed: int = 0, resamples: int = BOOTSTRAP_RESAMPLES,
                 permutations: int = PERMUTATION_RESAMPLES, save_groups: bool = False,
                 books: pd.DataFrame | None = None, spans: str = DEFAULT_SPANS, ties: str = ALL_TIED,
                 draws: int = DEFAULT_DRAWS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The per-book table grouped as the table reports it (under ``draw``: the median draw) and the table."""
    from scipy.stats import fisher_exact

    cuts = group_cuts(project, by, groups, ties, seed=seed, draws=draws)
    if books is None:
        books = year_books(project, model, by, groups=groups, year_range=year_range, save_groups=save_groups,
                           spans=spans, ties=ties, seed=seed)
    books, spread = over_draws(books, cuts, _mae_by_group)
    books = _ordered(books)
    every_book = books
    no_year = int(books["year"].isna().sum())
    books = books[books["year"].notna()]
    top, bottom = books[books["group"] == TOP], books[books["group"] == BOTTOM]
    rows = [_group_row(TOP, top, seed, resamples), _group_row(BOTTOM, bottom, seed, resamples),
            _group_row(ALL, books, seed, resamples)]
    for row, tied in zip(rows, tie_notes(cuts).values()):
        row["note"] = "; ".join(filter(None, [row["note"], tied]))
    correlated = books.dropna(subset=["abs_error", "accuracy"])
    result = spearman(correlated["accuracy"].astype(float), correlated["abs_error"].astype(float), resamples=0)
    rows[2].update(spearman_rho=result.rho, spearman_p=result.p_value)
    notes = [rows[2]["note"]] if rows[2]["note"] else []
    if no_year:
        notes.append(f"{no_year} book(s) without a year of publication left out")
    rows[2]["note"] = "; ".join(notes + [f"rho over {result.n} books with a prediction and an accuracy"])
    a, b = top["abs_error"].dropna().to_numpy(dtype=float), bottom["abs_error"].dropna().to_numpy(dtype=float)
    difference = {"group": DIFFERENCE, "books": math.nan, "missing": math.nan, "predicted": math.nan}
    difference["missing_share"] = rows[0]["missing_share"] - rows[1]["missing_share"]
    if rows[0]["books"] and rows[1]["books"]:
        table = [[rows[0]["missing"], rows[0]["books"] - rows[0]["missing"]],
                 [rows[1]["missing"], rows[1]["books"] - rows[1]["missing"]]]
        difference["missing_p_value"] = float(fisher_exact(table).pvalue)
    difference["mae"] = a.mean() - b.mean() if len(a) and len(b) else math.nan
    difference["mae_ci_low"], difference["mae_ci_high"] = bootstrap_difference(a, b, seed=seed, resamples=resamples)
    test = permutation_test(a, b, resamples=permutations, seed=seed)
    difference["p_value"] = test.p_value
    tested = (f"permutation test ({'every one of ' if test.exact else ''}{test.deals:,} deals)" if test.deals else
              "no permutation test (each group needs two books with a prediction)")
    difference["note"] = f"top minus bottom; MAE: bootstrap interval and {tested}; missing share: Fisher's exact test"
    for row, part in zip(rows, (top, bottom, books)):
        row.update(parse_row(part.assign(answers=part["passages"]), seed=seed, resamples=resamples))
    parsing, tested = parse_difference(top.assign(answers=top["passages"]), bottom.assign(answers=bottom["passages"]))
    difference.update(parsing)
    difference["note"] += f"; {tested}" if tested else ""
    rows.append(difference)
    frame = pd.DataFrame(rows).reindex(columns=TABLE_COLUMNS)
    for column in ("books", "missing", "predicted", "answers", "parsed", "approximate", "declined"):
        frame[column] = frame[column].astype("Int64")
    frame["model"], frame["by"], frame["groups"], frame["spans"] = model, by, groups, spans
    frame["tie_rule"], frame["draws"] = ties, spread.draws if spread else 0
    frame["mae_p5"], frame["mae_p95"] = frame["mae"], frame["mae"]
    if spread is not None:
        for group in (TOP, BOTTOM, DIFFERENCE):
            frame.loc[frame["group"] == group, ["mae_p5", "mae_p95"]] = spread.low[group], spread.high[group]
        frame.loc[frame["group"] == DIFFERENCE, "note"] += "; " + spread_note(spread, "MAE")
    frame["note"] = frame["note"].fillna("")
    return every_book, frame


SPREAD_COLUMNS = ["spans", "books", "parsed", "approximate", "missing_share", "missing_share_top", "missing_share_bottom",
                  "mae", "mae_top", "mae_bottom", "spearman_rho", "model", "by", "groups"]


def year_span_spread(project: "Project", model: str, by: str, *, groups: str = "decile",
                     year_range: tuple[int, int] = YEAR_RANGE) -> pd.DataFrame:
    """The year analysis's headline numbers under each rule for spans of years (``parsers.SPAN_RULES``), one
    row per rule: how far the choice of rule moves the missing share, the MAE and Spearman's rho (point
    estimates; the intervals are the table's, under the rule chosen)."""
    from workbench.probes.validity.parsers import SPAN_RULES

    rows = []
    for spans in SPAN_RULES:
        books = year_books(project, model, by, groups=groups, year_range=year_range, spans=spans)
        books = books[books["year"].notna()]
        row = {"spans": spans, "books": len(books), "parsed": int(books["parsed"].sum()),
               "approximate": int(books["approximate"].sum())}
        for suffix, part in (("", books), ("_top", books[books["group"] == TOP]),
                             ("_bottom", books[books["group"] == BOTTOM])):
            row[f"missing_share{suffix}"] = part["missing"].mean() if len(part) else math.nan
            errors = part["abs_error"].dropna()
            row[f"mae{suffix}"] = errors.mean() if len(errors) else math.nan
        scored = books.dropna(subset=["abs_error", "accuracy"])
        row["spearman_rho"] = spearman(scored["accuracy"].astype(float), scored["abs_error"].astype(float),
                                       resamples=0).rho
        rows.append(row)
    frame = pd.DataFrame(rows).reindex(columns=SPREAD_COLUMNS)
    frame["model"], frame["by"], frame["groups"] = model, by, groups
    return frame
