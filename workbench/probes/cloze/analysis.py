"""The tables behind every name-cloze chart and export (each function returns a pandas DataFrame).

Which responses count. For each model and run kind (``cloze``: prompted runs and imported results;
``cloze-mlm``: the masked-LM baseline; ``cloze-logprob``): only the runs with the *settings* (prompt
template version and generation parameters) of the model's newest run of that kind that holds answers,
so one table never mixes prompt templates or temperatures. Among those runs, each passage's answer is
the one from the newest run that asked it (sample 0; name-cloze runs ask once). Runs with other settings
are left out (pass ``run_ids`` to analyse them instead); ``book_accuracy`` lists the runs behind each
row (``runs``). Scoring is re-applied on every read (``score``), so changing the scorer never calls a
model. Reading is one query of the answers and one of the passages, scored once per distinct answer and
counted with arrays (``_answers``, ``_book_table``): at the papers' scale (114,000 answers) that is about
twice a plain pandas read of the same rows, so nothing is cached and a table is always the answers as
stored now, whatever changed them (a run continued or retried, an import, passages or books deleted).

- ``passage_results``  one row per (model, passage): raw, parsed, correct, status, error;
- ``book_accuracy``    per model x book: n, correct, accuracy with a 95% CI (Wilson, or bootstrap),
                       failed (not in n), candidates/flagged from the extraction, mean log-probability;
- ``category_means``   mean per-book accuracy by a book tag (or ``decade`` from the year, ``source``),
                       with a 95% t interval over books (clipped to 0..1); no interval for a group of
                       one book, or whose books all have the same accuracy (``note`` says which);
- ``compare_models``   the paired per-book table of two models; ``compare_models_tests`` the Wilcoxon
                       signed-rank test on per-book accuracies (books with equal accuracy left out, as
                       Wilcoxon's method does; exact, exact-permutation or normal-approximation p, named
                       in the note) and McNemar's exact test on shared passages;
- ``year_correlation`` Spearman's rho between per-book accuracy and year of publication (books without
                       a year left out and counted);
- ``decile_sets``      the top and bottom tenth of books by accuracy, saved as book sets (books tied at
                       a cut all go in, or are drawn at random: ``book_sets.TIE_RULES``).

Every analysis takes ``exclude_flagged``: leave out books whose extraction found fewer passages than
asked for (the paper drops them).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Sequence

import numpy as np
import pandas as pd

from workbench.analysis.correlation import spearman
from workbench.corpus.book_sets import (
    ALL_TIED,
    DRAW_TIES,
    draw_rng,
    memorization_set_names,
    ranked_ends,
    save_book_set,
)
from workbench.errors import UserError
from workbench.probes.cloze.kinds import ANSWER_KINDS, CLOZE_KIND, LOGPROB_KIND
from workbench.probes.cloze.score import ALPHA, CI_METHODS, accuracy_interval, scored, wilson_interval
from workbench.runs import runs as stored_runs

if TYPE_CHECKING:
    from workbench.project import Project

BOOK_COLUMNS = [
    "model", "kind", "book_id", "book", "year", "n", "correct", "accuracy", "ci_low", "ci_high", "ci_method",
    "failed", "candidates", "sampled", "flagged", "mean_logprob", "logprob_n", "runs",
]


def ranked(books: pd.DataFrame, *, by_model: bool = False) -> pd.DataFrame:
    """Books best first, the one order every table, chart and decile set uses: accuracy, then the lower
    end of the interval (more evidence first), then the title, then the id."""
    keys = ["accuracy", "ci_low", "book", "book_id"]
    ascending = [False, False, True, True]
    if by_model:
        keys, ascending = ["model", *keys], [True, *ascending]
    return books.sort_values(keys, ascending=ascending, kind="stable")


def _models_filter(models: str | Sequence[str] | None) -> list[str] | None:
    if models is None:
        return None
    return [models] if isinstance(models, str) else list(models)


def _counted_runs(
    project: "Project", kinds: Sequence[str], models: list[str] | None, run_ids: Sequence[int] | None = None
) -> pd.DataFrame:
    """The runs whose answers count (run_id, model, kind): per model and kind, those with the settings
    (template version and generation parameters) of the newest run that holds answers (among ``run_ids``
    when given)."""
    found = stored_runs(project, kinds, model_label=models or None, with_responses=True,
                        run_ids=[int(r) for r in run_ids] if run_ids is not None else None)
    frame = pd.DataFrame([(run.id, run.model_id, run.model, run.kind,
                           "" if run.template_id is None else str(run.template_id), run.params_text)
                          for run in found if run.model is not None],
                         columns=["run_id", "model_id", "model", "kind", "template", "params"])
    if frame.empty:
        return frame[["run_id", "model_id", "model", "kind"]]
    newest = frame.sort_values("run_id").groupby(["model_id", "kind"], sort=False).tail(1)
    kept = frame.merge(newest[["model_id", "kind", "template", "params"]], on=["model_id", "kind", "template", "params"])
    return kept.sort_values("run_id").reset_index(drop=True)[["run_id", "model_id", "model", "kind"]]


def _answers(
    project: "Project",
    kinds: Sequence[str],
    models: list[str] | None,
    run_ids: Sequence[int] | None = None,
    *,
    details: bool = False,
    logprob: bool = False,
    score: bool = True,
    book_ids: Sequence[int] | None = None,
) -> pd.DataFrame:
    """Per model, kind and passage: the answer of the newest counted run (``_counted_runs``) that has one
    (its sample 0), with the passage's book and gold name, scored (``score.scored``).

    Columns: model, kind, run_id, passage_id, book_id, gold, status, raw (+ parsed, correct when
    scored); with ``details`` also error, logprob, passage and book (the name shown); with ``logprob``
    the log-probability; of ``book_ids``' passages only, when given (read only those). One read of the
    answers and one of the passages, worked out with arrays: this is what every table and chart reads.
    """
    runs = _counted_runs(project, kinds, models, run_ids)
    extra = ", x.error, x.logprob" if details else ", x.logprob" if logprob else ""
    sql = (f"SELECT x.run_id, x.item_id AS passage_id, x.sample, x.status, x.raw{extra} FROM responses x"
           " WHERE x.run_id IN (SELECT value FROM json_each(?))")
    params = [json.dumps([int(r) for r in runs["run_id"]])]
    if book_ids is not None:
        sql += " AND x.item_id IN (SELECT id FROM cloze_passages WHERE book_id IN (SELECT value FROM json_each(?)))"
        params.append(json.dumps([int(b) for b in book_ids]))
    answers = pd.read_sql_query(sql, project.db.conn, params=params)
    # the runs of one model and kind form one series; in it, each passage's answer is the newest run's
    series = runs.groupby(["model_id", "kind"], sort=False).ngroup().to_numpy()
    position = pd.Index(runs["run_id"]).get_indexer(answers["run_id"])
    answers["series"] = series[position] if len(runs) else np.zeros(0, dtype=int)
    if answers.duplicated(["series", "passage_id"]).any():
        answers = answers.sort_values(["run_id", "sample"], ascending=[False, True], kind="stable")
        answers = answers.drop_duplicates(["series", "passage_id"]).sort_index()
        position = pd.Index(runs["run_id"]).get_indexer(answers["run_id"])
    answers.insert(0, "kind", runs["kind"].to_numpy()[position] if len(runs) else [])
    answers.insert(0, "model", runs["model"].to_numpy()[position] if len(runs) else [])
    passages = _passages(project, details, everyone=len(answers) > 0, book_ids=book_ids)
    found = passages.index.get_indexer(answers["passage_id"])
    if (found < 0).any():  # answers to passages deleted since are not counted
        answers, found = answers[found >= 0].reset_index(drop=True), found[found >= 0]
    for column in passages.columns:
        answers[column] = passages[column].to_numpy()[found]
    answers = answers.drop(columns=["series", "sample"]).reset_index(drop=True)
    return scored(answers) if score else answers


def _passages(project: "Project", details: bool = False, everyone: bool = True,
              book_ids: Sequence[int] | None = None) -> pd.DataFrame:
    """Every passage's book and gold name (and with ``details`` its text and the book's name), by id (of
    ``book_ids``' books only, when given); none (the same columns) unless ``everyone``."""
    where, params = ("", []) if everyone else (" WHERE 0", [])
    if everyone and book_ids is not None:
        where, params = " WHERE p.book_id IN (SELECT value FROM json_each(?))", [json.dumps([int(b) for b in book_ids])]
    if not details:
        return pd.read_sql_query(f"SELECT id, book_id, gold FROM cloze_passages p{where}", project.db.conn,
                                 index_col="id", params=params)
    return pd.read_sql_query(
        "SELECT p.id, p.book_id, p.gold, p.passage, p.origin,"
        f" {BOOK_NAME} AS book FROM cloze_passages p JOIN books b ON b.id = p.book_id{where}",
        project.db.conn, index_col="id", params=params,
    )


# The name a table shows for a book: its title, else the id it was imported under, else its number.
BOOK_NAME = "COALESCE(NULLIF(b.title, ''), b.external_id, 'Book ' || b.id)"


def _books(project: "Project") -> pd.DataFrame:
    return pd.read_sql_query(f"SELECT b.id AS book_id, {BOOK_NAME} AS book, b.year FROM books b", project.db.conn)


def _check_models(project: "Project", models: list[str] | None) -> None:
    for label in models or []:
        if project.db.execute("SELECT 1 FROM models WHERE label = ?", [label]).fetchone() is None:
            raise UserError(f"There is no model called '{label}' in this project.")


PASSAGE_COLUMNS = [
    "model", "kind", "run_id", "book_id", "book", "passage_id", "passage", "gold", "raw", "parsed", "correct",
    "status", "error",
]


def passage_results(
    project: "Project",
    models: str | Sequence[str] | None = None,
    *,
    kinds: Sequence[str] = ANSWER_KINDS,
    run_ids: Sequence[int] | None = None,
    book_ids: Sequence[int] | None = None,
) -> pd.DataFrame:
    """One row per (model, passage) with the raw answer, the parsed answer and whether it is correct.

    ``run_ids`` restricts the answers to those runs (e.g. to compare two prompt templates); ``book_ids`` to
    those books' passages (only they are read: a page showing one book reads one book).
    """
    chosen = _models_filter(models)
    _check_models(project, chosen)
    frame = _answers(project, kinds, chosen, run_ids, details=True, book_ids=book_ids)
    return frame.sort_values(["model", "book_id", "passage_id"]).reset_index(drop=True)[PASSAGE_COLUMNS]


def answers_summary(frame: pd.DataFrame) -> str:
    """'gpt4: 31 of 40 right, 2 failed; chatgpt: …' for rows of ``passage_results``, model by model."""
    parts = []
    for model, rows in frame.groupby("model", sort=False):
        answered = rows[rows["status"] == "ok"]
        right = int(answered["correct"].fillna(False).astype(bool).sum())
        failed = len(rows) - len(answered)
        parts.append(f"{model}: {right} of {len(answered)} right" + (f", {failed} failed" if failed else ""))
    return "; ".join(parts)


def _extractions(project: "Project") -> pd.DataFrame:
    frame = pd.read_sql_query(
        "SELECT book_id, candidates, sampled, sampled < per_book AS flagged FROM cloze_extractions", project.db.conn
    )
    frame["flagged"] = frame["flagged"].astype(bool)
    return frame


def _logprob_means(project: "Project", models: list[str] | None) -> pd.DataFrame:
    frame = _answers(project, [LOGPROB_KIND], models, logprob=True, score=False)
    frame = frame[frame["status"] == "ok"]
    return (
        frame.groupby(["model", "book_id"])["logprob"].agg(mean_logprob="mean", logprob_n="count").reset_index()
    )


def book_accuracy(
    project: "Project",
    models: str | Sequence[str] | None = None,
    *,
    ci: str = "wilson",
    exclude_flagged: bool = False,
    kinds: Sequence[str] = ANSWER_KINDS,
    run_ids: Sequence[int] | None = None,
) -> pd.DataFrame:
    """Per model x book: accuracy = correct / n scored (failures apart), its 95% CI, extraction counts,
    and the mean log-probability of the gold answer where a ``cloze-logprob`` run exists.

    ``ci`` is 'wilson' or 'bootstrap' (percentile, 2,000 resamples, seed 0); ``run_ids`` restricts the
    answers to those runs. ``runs``: the run ids the book's answers come from (one settings each model).
    """
    chosen = _models_filter(models)
    _check_models(project, chosen)
    return _book_table(project, _answers(project, kinds, chosen, run_ids), chosen, ci=ci,
                       exclude_flagged=exclude_flagged)


GROUP_KEYS = ["model", "kind", "book_id"]


def _book_table(project: "Project", answers: pd.DataFrame, models: list[str] | None, *, ci: str = "wilson",
                exclude_flagged: bool = False) -> pd.DataFrame:
    """``book_accuracy`` from the scored answers (``_answers``): counted with arrays, one Wilson call for
    every book at once (a bootstrap interval is drawn book by book)."""
    if ci not in CI_METHODS:
        accuracy_interval([], ci)  # the plain message for an unknown method
    answers = answers.sort_values(GROUP_KEYS + ["passage_id"])  # a bootstrap draws from each book's answers in order
    groups = answers.groupby(GROUP_KEYS, sort=True)
    codes = groups.ngroup().to_numpy()
    frame = groups.size().reset_index()[GROUP_KEYS]
    ok = (answers["status"] == "ok").to_numpy()
    hits = answers["correct"].fillna(False).to_numpy(dtype=bool) & ok
    size = len(frame)
    n = np.bincount(codes, weights=ok, minlength=size).astype(int)
    correct = np.bincount(codes, weights=hits, minlength=size).astype(int)
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = np.where(n > 0, correct / np.maximum(n, 1), math.nan)
    if ci == "wilson":
        low, high = wilson_interval(correct, n, 1 - ALPHA) if size else (np.zeros(0), np.zeros(0))
    else:
        low, high = np.full(size, math.nan), np.full(size, math.nan)
        outcomes = answers.loc[ok, "correct"].astype(bool).groupby(codes[ok], sort=True)
        for code, values in outcomes:
            low[code], high[code] = accuracy_interval(values.tolist(), ci)
    run_lists: list[list[str]] = [[] for _ in range(size)]
    runs = pd.DataFrame({"code": codes, "run_id": answers["run_id"].to_numpy()}).drop_duplicates()
    for code, run_id in runs.sort_values(["code", "run_id"]).itertuples(index=False, name=None):
        run_lists[code].append(str(run_id))
    frame = frame.assign(n=n, correct=correct, accuracy=accuracy, ci_low=low, ci_high=high, ci_method=ci,
                         failed=np.bincount(codes, weights=~ok, minlength=size).astype(int),
                         runs=[", ".join(ids) for ids in run_lists])
    frame = frame.merge(_books(project), on="book_id", how="left")
    frame = frame.merge(_extractions(project), on="book_id", how="left")
    frame = frame.merge(_logprob_means(project, models), on=["model", "book_id"], how="left")
    frame["year"] = frame["year"].astype("Int64")
    frame["candidates"] = frame["candidates"].astype("Int64")
    frame["sampled"] = frame["sampled"].astype("Int64")
    frame["flagged"] = frame["flagged"].astype("boolean")
    frame["logprob_n"] = frame["logprob_n"].fillna(0).astype(int)
    if exclude_flagged:
        frame = frame[~frame["flagged"].fillna(False)]  # imported books (no extraction, NA) stay
    return ranked(frame, by_model=True).reset_index(drop=True)[BOOK_COLUMNS]


def model_labels(project: "Project", kinds: Sequence[str] = ANSWER_KINDS) -> list[str]:
    """Models with name-cloze answers, in label order."""
    return sorted({run.model for run in stored_runs(project, list(kinds), with_responses=True) if run.model is not None})


def book_groups(project: "Project", key: str) -> pd.DataFrame:
    """book_id -> value of ``key``: a tag, or 'decade' (from the year when no such tag) or 'source'."""
    tags = pd.read_sql_query("SELECT book_id, value FROM book_tags WHERE key = ?", project.db.conn, params=[key])
    if not tags.empty:
        return tags
    books = pd.read_sql_query("SELECT id AS book_id, year, source_kind FROM books", project.db.conn)
    if key == "decade":
        books = books.dropna(subset=["year"])
        return pd.DataFrame({"book_id": books["book_id"], "value": [f"{int(y) // 10 * 10}s" for y in books["year"]]})
    if key == "source":
        return books.rename(columns={"source_kind": "value"})[["book_id", "value"]]
    raise UserError(f"No book has a tag called '{key}'. Tag books first (e.g. genre=gothic), or use decade or source.")


CATEGORY_COLUMNS = ["model", "kind", "tag", "value", "books", "passages", "mean_accuracy", "ci_low", "ci_high", "ci_method",
                    "note"]
CATEGORY_CI = "t interval over books (clipped to 0-1)"


def category_means(
    project: "Project", tag: str, models: str | Sequence[str] | None = None, *, exclude_flagged: bool = False
) -> pd.DataFrame:
    """Mean per-book accuracy for each value of a book tag, with a 95% t interval over the books.

    Each book counts once, whatever its number of passages (``passages`` says how many lie behind the
    mean). No interval for a group of one book, nor for a group whose books all have the same accuracy
    (the t interval would have no width, which claims a certainty a handful of books cannot give); the
    ``note`` says so.
    """
    from statsmodels.stats.weightstats import DescrStatsW

    books = book_accuracy(project, models, exclude_flagged=exclude_flagged)
    books = books[books["n"] > 0].merge(book_groups(project, tag), on="book_id")
    rows = []
    for (model, kind, value), group in books.groupby(["model", "kind", "value"], sort=True):
        values = group["accuracy"].astype(float).to_numpy()
        low, high = (math.nan, math.nan)
        note = ""
        if len(values) < 2:
            note = "one book: no interval"
        elif np.ptp(values) == 0:
            note = "every book has the same accuracy: no interval"
        else:
            # a t interval can reach past 0 or 1; accuracy cannot
            low, high = (float(np.clip(v, 0.0, 1.0)) for v in DescrStatsW(values).tconfint_mean())
            if len(values) < 5:
                note = f"only {len(values)} books: a wide, rough interval"
        rows.append({
            "model": model, "kind": kind, "tag": tag, "value": value, "books": len(values),
            "passages": int(group["n"].sum()), "mean_accuracy": float(values.mean()),
            "ci_low": low, "ci_high": high, "ci_method": CATEGORY_CI, "note": note,
        })
    return pd.DataFrame(rows, columns=CATEGORY_COLUMNS)


def _one_kind(books: pd.DataFrame) -> pd.DataFrame:
    """One model's books of a single run kind: the prompted one ('cloze') if it has answers of both kinds,
    so no book is paired twice."""
    kinds = set(books["kind"].unique())
    if len(kinds) < 2:
        return books
    return books[books["kind"] == (CLOZE_KIND if CLOZE_KIND in kinds else sorted(kinds)[0])]


PAIR_COLUMNS = ["book_id", "book", "n_a", "accuracy_a", "n_b", "accuracy_b", "difference"]


def compare_models(project: "Project", model_a: str, model_b: str, *, exclude_flagged: bool = False) -> pd.DataFrame:
    """Books both models answered: per-book n and accuracy of each, and the difference (a - b)."""
    books = book_accuracy(project, [model_a, model_b], exclude_flagged=exclude_flagged)
    return _paired(books, model_a, model_b)


def _paired(books: pd.DataFrame, model_a: str, model_b: str) -> pd.DataFrame:
    books = books[books["n"] > 0]
    a = _one_kind(books[books["model"] == model_a])[["book_id", "book", "n", "accuracy"]]
    b = _one_kind(books[books["model"] == model_b])[["book_id", "n", "accuracy"]]
    paired = a.merge(b, on="book_id", suffixes=("_a", "_b"))
    paired["difference"] = paired["accuracy_a"] - paired["accuracy_b"]
    return paired.sort_values("book").reset_index(drop=True)[PAIR_COLUMNS]


TEST_COLUMNS = ["test", "model_a", "model_b", "n", "statistic", "p_value", "note"]


def compare_models_tests(project: "Project", model_a: str, model_b: str, *, exclude_flagged: bool = False) -> pd.DataFrame:
    """Two tests of 'model a and model b remember these books equally well':

    - Wilcoxon signed-rank test (scipy) on the paired per-book accuracies (n = books answered by both;
      see ``_wilcoxon_row`` for zero differences and which p);
    - McNemar's exact test (statsmodels; binomial test on the passages only one model got right) on
      passages both models answered (n = such passages); it needs the same passages, so it is empty
      for imported results on other passages.
    """
    return model_comparison(project, model_a, model_b, exclude_flagged=exclude_flagged)[1]


def model_comparison(
    project: "Project", model_a: str, model_b: str, *, exclude_flagged: bool = False
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``compare_models`` and ``compare_models_tests`` together, from one read of the answers."""
    from statsmodels.stats.contingency_tables import mcnemar

    _check_models(project, [model_a, model_b])
    answers = _answers(project, ANSWER_KINDS, [model_a, model_b])
    paired = _paired(_book_table(project, answers, [model_a, model_b], exclude_flagged=exclude_flagged),
                     model_a, model_b)
    rows = [_wilcoxon_row(paired, model_a, model_b)]
    results = [_one_kind(answers[answers["model"] == m]) for m in (model_a, model_b)]
    results = [r[r["status"] == "ok"] for r in results]
    if exclude_flagged:
        results = [r[r["book_id"].isin(paired["book_id"])] for r in results]
    shared = results[0][["passage_id", "correct"]].merge(results[1][["passage_id", "correct"]], on="passage_id")
    if len(shared):
        a, b = shared["correct_x"].astype(bool), shared["correct_y"].astype(bool)
        table = [[int((a & b).sum()), int((a & ~b).sum())], [int((~a & b).sum()), int((~a & ~b).sum())]]
        result = mcnemar(table, exact=True)
        rows.append(_test_row("McNemar exact (shared passages)", model_a, model_b, len(shared),
                              statistic=float(result.statistic), p_value=float(result.pvalue),
                              note=f"only {model_a} right: {table[0][1]}, only {model_b} right: {table[1][0]}"))
    else:
        rows.append(_test_row("McNemar exact (shared passages)", model_a, model_b, 0, note="no passages answered by both"))
    return paired, pd.DataFrame(rows, columns=TEST_COLUMNS)


WILCOXON = "Wilcoxon signed-rank (per-book accuracy)"
# Per-book accuracies are fractions (7/10, 14/20): their differences are rounded to this many decimals
# so that equal differences are equal numbers (0.7 - 0.6 and 0.4 - 0.3 differ in floating point, which
# would otherwise rank tied differences apart and pick the wrong null distribution).
DIFFERENCE_DECIMALS = 12


def _wilcoxon_row(paired: pd.DataFrame, model_a: str, model_b: str) -> dict:
    """Wilcoxon signed-rank test (scipy) on the paired per-book accuracies.

    Books with equal accuracy for both models (zero differences) are left out, as in Wilcoxon's
    original method (scipy's ``zero_method='wilcox'``). The p-value is exact when there are no ties
    and no zero differences (up to 50 books), from an exact permutation distribution with ties or
    zeros up to 13 books, and otherwise from the normal approximation with the tie correction (no
    continuity correction); the note names which.
    """
    from scipy.stats import PermutationMethod, wilcoxon

    differences = np.round(paired["difference"].to_numpy(dtype=float), DIFFERENCE_DECIMALS)
    n = len(differences)
    if n == 0:
        return _test_row(WILCOXON, model_a, model_b, 0, note="no books in common")
    nonzero = differences[differences != 0]
    zeros = n - len(nonzero)
    if len(nonzero) == 0:
        return _test_row(WILCOXON, model_a, model_b, n, statistic=0.0, p_value=1.0,
                         note="every book has the same accuracy for both")
    ties = len(np.unique(np.abs(nonzero))) < len(nonzero)
    if not ties and zeros == 0 and n <= 50:
        method, how = "exact", "exact p"
    elif n <= 13:
        method, how = PermutationMethod(), "exact permutation p (ties or zero differences)"
    else:
        method, how = "asymptotic", "normal approximation with tie correction"
    result = wilcoxon(differences, zero_method="wilcox", method=method)
    note = f"{len(nonzero)} of {n} books differ; {how}"
    if zeros:
        note += f"; {zeros} book(s) with equal accuracy left out"
    return _test_row(WILCOXON, model_a, model_b, n, statistic=float(result.statistic), p_value=float(result.pvalue),
                     note=note)


def _test_row(test, a, b, n, *, statistic=math.nan, p_value=math.nan, note=""):
    return {"test": test, "model_a": a, "model_b": b, "n": n, "statistic": statistic, "p_value": p_value, "note": note}


YEAR_COLUMNS = ["model", "kind", "test", "books", "without_year", "rho", "p_value", "note"]


def year_correlation(
    project: "Project", models: str | Sequence[str] | None = None, *, exclude_flagged: bool = False
) -> pd.DataFrame:
    """Per model: Spearman's rho (scipy) between per-book accuracy and year of publication, with p.

    ``books``: books with answers and a year (the ones correlated); ``without_year``: books with
    answers but no year, left out. The p-value is scipy's (t approximation), through
    ``workbench.analysis.correlation.spearman``."""
    answered = book_accuracy(project, models, exclude_flagged=exclude_flagged)
    answered = answered[answered["n"] > 0]
    rows = []
    for (model, kind), group in answered.groupby(["model", "kind"], sort=True):
        without_year = int(group["year"].isna().sum())
        group = group[group["year"].notna()]
        rho = p = math.nan
        note = ""
        if len(group) < 3:
            note = "fewer than 3 books with a year"
        elif group["accuracy"].nunique() < 2 or group["year"].nunique() < 2:
            note = "accuracy or year is the same for every book"
        else:
            result = spearman(group["year"].astype(float), group["accuracy"].astype(float), resamples=0)
            rho, p = result.rho, result.p_value
        if without_year:
            note = "; ".join(filter(None, [note, f"{without_year} book(s) without a year left out"]))
        rows.append({"model": model, "kind": kind, "test": "Spearman rank correlation", "books": len(group),
                     "without_year": without_year, "rho": rho, "p_value": p, "note": note})
    return pd.DataFrame(rows, columns=YEAR_COLUMNS)


DECILE_COLUMNS = ["set", "book_id", "book", "accuracy", "n", "tied_at_cut"]


def ranked_books(project: "Project", model: str, *, exclude_flagged: bool = True) -> pd.DataFrame:
    """``model``'s books with answers, best first (tied books by id), one run kind (the prompted one when it
    has both): the ranking every top and bottom group is cut from."""
    books = book_accuracy(project, model, exclude_flagged=exclude_flagged)
    books = books[books["n"] > 0]
    if books.empty:
        every = book_accuracy(project, model) if exclude_flagged else books
        flagged = int((every["n"] > 0).sum())
        if flagged:
            raise UserError(
                f"All {flagged} books with results for '{model}' are flagged (they have fewer passages than were asked "
                "for at extraction), and flagged books are left out of the ranking, as the paper leaves them out. "
                "Include them (--include-flagged), or extract more passages per book.")
        raise UserError(f"'{model}' has no name-cloze results yet, so there are no deciles to form.")
    kinds = sorted(books["kind"].unique())
    if len(kinds) > 1:  # a model answers one way; two run kinds would rank each book twice
        books = books[books["kind"] == (CLOZE_KIND if CLOZE_KIND in kinds else kinds[0])]
    if len(books) < 2:
        raise UserError(f"'{model}' has results for only one book: top and bottom sets need at least two books.")
    # best first; within a tie by id, so that a draw of tied books never depends on their titles
    return books.sort_values(["accuracy", "book_id"], ascending=[False, True], kind="stable").reset_index(drop=True)


def decile_sets(
    project: "Project", model: str, *, fraction: float = 0.1, save: bool = True, exclude_flagged: bool = True,
    ties: str = ALL_TIED, seed: int = 0,
) -> pd.DataFrame:
    """The top and bottom ``fraction`` of books by ``model``'s accuracy: a share of ceil(fraction x books) each,
    at least one, and never more than half the books (the rule is ``workbench.corpus.book_sets.ranked_ends``).

    Books that share the accuracy at a cut with books beyond it are treated by ``ties``: ``all`` (the default)
    puts every one of them in, so a set may hold more books than its share; ``draw`` fills the share with tied
    books drawn at random (draw 0 of ``seed``, as the analyses' first draw). ``tied_at_cut`` marks the books of a
    set that come from such a tie. With ``save`` the sets are stored as book sets ``cloze top decile: MODEL`` and
    ``cloze bottom decile: MODEL`` (``quintile`` for a fraction of 0.2; ``memorization_set_names``), replacing
    earlier ones, for later analyses; their description says how ties were treated. Flagged books are left out
    by default.
    """
    if not 0 < fraction <= 0.5:
        raise UserError(f"The decile fraction must be above 0 and at most 0.5 (got {fraction}).")
    order = ranked_books(project, model, exclude_flagged=exclude_flagged)
    ends = ranked_ends(order["accuracy"], fraction, ties, draw_rng(seed, 0) if ties == DRAW_TIES else None)
    top = order.iloc[ends.top].assign(tied_at_cut=ends.top_tied)
    bottom = order.iloc[ends.bottom].assign(tied_at_cut=ends.bottom_tied)
    names = memorization_set_names(model, fraction)
    frame = pd.concat([top.assign(set=names[0]), bottom.assign(set=names[1])])[DECILE_COLUMNS].reset_index(drop=True)
    if save:
        notes = ends.notes()
        with project.db.transaction():  # both sets are replaced, or neither
            for name, members, end in zip(names, (top, bottom), ("top", "bottom")):
                description = f"{len(members)} of {len(order)} books, ranked by name-cloze accuracy of {model}"
                if notes[end]:
                    description += f"; {notes[end]}" + (f" (one random draw, seed {seed})" if ties == DRAW_TIES else "")
                save_book_set(project, name, members["book_id"], description)
    return frame


#: the short per-book table of ``palimpsest cloze accuracy`` (``views.accuracy_frame`` without ``all_columns``;
#: a title is no key: two books can share one, so the id comes with it)
ACCURACY_TABLE_COLUMNS = ["book", "book_id", "model", "n", "correct", "accuracy", "ci_low", "ci_high"]
