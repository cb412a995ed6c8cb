"""One plain sentence under each name-cloze chart: what is plotted and the test that goes with it.

``chart_note(project, name, frame, **options)`` takes the frame the chart draws (from the export
registry) and the same options; the statistics come from ``workbench.probes.cloze.analysis`` (Spearman
for accuracy against year, Wilcoxon and McNemar for model against model), so the interactive chart, the
CSV and the published figure tell the same story.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pandas as pd

from workbench.probes.cloze import analysis

if TYPE_CHECKING:
    from workbench.project import Project


CI_NAMES = {"wilson": "Wilson score", "bootstrap": "percentile bootstrap"}


def _flag(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def format_p(p: float) -> str:
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "p not available"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def _left_out(options: dict) -> str:
    return " Flagged books (fewer passages than asked for) are left out." if _flag(options.get("exclude_flagged")) else ""


def _books(n: int) -> str:
    return f"{n} book{'' if n == 1 else 's'}"


def accuracy_note(frame: pd.DataFrame, options: dict) -> str:
    if frame.empty:
        return ""
    method = CI_NAMES.get(frame["ci_method"].iloc[0], frame["ci_method"].iloc[0])
    passages = int(frame["n"].sum())
    failed = int(frame["failed"].sum()) if "failed" in frame else 0
    left_apart = f" {failed:,} failed call(s) are not in the denominators." if failed else ""
    if frame["ci_method"].iloc[0] == "bootstrap":
        alike = int(((frame["accuracy"] == 0) | (frame["accuracy"] == 1)).sum())
        if alike:
            left_apart += (f" {_books(alike)} with every answer alike (all right or all wrong) have a zero-width "
                           "bootstrap interval, which understates the uncertainty; Wilson intervals do not.")
    return (f"{_books(len(frame))} ranked by name-cloze accuracy of {frame['model'].iloc[0]} "
            f"({passages:,} answered passages; accuracy = correct / answered).{left_apart} "
            f"Whiskers: 95% {method} intervals.{_left_out(options)}")


def categories_note(frame: pd.DataFrame, options: dict) -> str:
    if frame.empty:
        return ""
    note = (f"Mean per-book accuracy by {frame['tag'].iloc[0]} over {_books(int(frame.groupby('value')['books'].max().sum()))}"
            " (each book counts once). Whiskers: 95% t intervals over the books of each group, clipped to 0-1.")
    single = int((frame["books"] < 2).sum())
    if single:
        note += f" {single} group(s) with one book have no interval."
    same = int(((frame["books"] >= 2) & frame["ci_low"].isna()).sum())
    if same:
        note += f" {same} group(s) whose books all have the same accuracy have no interval."
    return note + _left_out(options)


def models_note(project: "Project", frame: pd.DataFrame, options: dict) -> str:
    if frame.empty:
        return ""
    a, b = frame["model_a"].iloc[0], frame["model_b"].iloc[0]
    tests = analysis.compare_models_tests(project, a, b, exclude_flagged=_flag(options.get("exclude_flagged")))
    parts = [f"{_books(len(frame))} answered by both {a} and {b}; points above the diagonal are books {a} "
             "remembers better."]
    for row in tests.itertuples():
        if row.n and not math.isnan(row.p_value):
            unit = "books" if "Wilcoxon" in row.test else "shared passages"
            detail = f"; {row.note}" if row.note else ""
            parts.append(f"{row.test}: {format_p(row.p_value)} ({row.n} {unit}{detail}).")
        elif row.note:
            parts.append(f"{row.test}: {row.note}.")
    return " ".join(parts) + _left_out(options)


def year_note(project: "Project", frame: pd.DataFrame, options: dict) -> str:
    if frame.empty:
        return ""
    model = frame["model"].iloc[0]
    table = analysis.year_correlation(project, model, exclude_flagged=_flag(options.get("exclude_flagged")))
    table = table[table["kind"] == frame["kind"].iloc[0]] if "kind" in frame else table
    if table.empty:
        return ""
    row = table.iloc[0]
    without = int(row["without_year"]) if "without_year" in row else 0
    missing = f" {_books(without)} without a year {'is' if without == 1 else 'are'} left out." if without else ""
    if math.isnan(row["rho"]):
        reason = str(row["note"]).split(";")[0]
        return (f"{_books(int(row['books']))} with a year: {reason}, so no correlation is given."
                f"{missing}{_left_out(options)}")
    return (f"Spearman rank correlation of accuracy with year: \u03c1 = {row['rho']:.2f}, {format_p(row['p_value'])} "
            f"({_books(int(row['books']))}).{missing} Whiskers: 95% Wilson intervals.{_left_out(options)}")


def chart_note(project: "Project", name: str, frame: pd.DataFrame, **options: Any) -> str:
    """The sentence shown with the chart ``name`` (empty for charts without one)."""
    if name == "cloze-accuracy":
        return accuracy_note(frame, options)
    if name == "cloze-categories":
        return categories_note(frame, options)
    if name == "cloze-models":
        return models_note(project, frame, options)
    if name == "cloze-year":
        return year_note(project, frame, options)
    return ""


YEAR_HOW = ("Add years on the Library page (select a book, then Edit), or import a metadata table with a 'year' "
            "column (palimpsest import PROJECT --metadata books.csv).")


def empty_note(project: "Project", name: str, **options: Any) -> str:
    """Why the chart ``name`` has nothing to draw with these options, and what to do: a missing year or tag is
    said as such, not as books without results."""
    model = options.get("model") or ""
    answered = analysis.book_accuracy(project, model or None, exclude_flagged=_flag(options.get("exclude_flagged")))
    answered = answered[answered["n"] > 0]
    if answered.empty:
        if _flag(options.get("exclude_flagged")) and not analysis.book_accuracy(project, model or None).empty:
            return ("Every book with results has fewer passages than were asked for, and such books are left out. "
                    "Untick 'Leave out flagged books' to show them.")
        return f"No book has name-cloze results{' for ' + model if model else ''} yet. Run the probe on the Name cloze page."
    ids = set(answered["book_id"])
    years = dict(project.db.execute("SELECT id, year FROM books WHERE year IS NOT NULL").fetchall())
    by_year = name == "cloze-year" or (name == "cloze-categories" and (options.get("tag") or "decade") == "decade")
    if by_year and not ids & set(years):
        return f"None of the {len(ids):,} books with results has a year of publication. {YEAR_HOW}"
    if name == "cloze-categories":
        tag = options.get("tag") or "decade"
        tagged = {b for b, in project.db.execute("SELECT book_id FROM book_tags WHERE key = ?", [tag])}
        if tag not in ("decade", "source") and not ids & tagged:
            return (f"None of the {len(ids):,} books with results has a '{tag}' tag. Tag them on the Library page, or "
                    f"import a metadata table with a '{tag}' column.")
    if name == "cloze-models":
        return ("The comparison needs two models with answers on the same books: choose two such models as a and b.")
    return "Nothing to show for these choices."
