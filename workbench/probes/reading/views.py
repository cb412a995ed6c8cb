"""What the Reading page's results show, as queries of a Qt-free state: ``ReadingChoices`` holds every option of the
results (whose answers, which book or every book pooled, the bins, and the point of the curve whose questions are
listed), and the functions here return exactly the frames and sentences the page (and ``palimpsest reading curve``,
``reading slope``) shows for them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import pandas as pd

from workbench.probes.reading import results
from workbench.probes.reading.results import DEFAULT_BINS

if TYPE_CHECKING:
    from workbench.project import Project

#: the columns of the questions behind a point, as the page lists them
QUESTION_COLUMNS = ["question_id", "run_id", "key", "retention_words", "answer", "choice", "correct", "raw"]


@dataclass(frozen=True)
class ReadingChoices:
    """The results' choices: ``model`` (whose answers), ``book_id`` (one book's questions; None: every book the model
    answered, pooled), ``bins`` (lower edges in words), ``by_kind`` (one curve per kind of question), and the point
    of the curve whose questions are listed (``variant`` and ``bin_low``)."""
    model: str | None = None
    book_id: int | None = None
    bins: tuple[int, ...] = DEFAULT_BINS
    by_kind: bool = False
    variant: str | None = None
    bin_low: int | None = None


class ReadingResults(NamedTuple):
    answers: pd.DataFrame  # every answer of the choices (``reading_answers``)
    curve: pd.DataFrame  # the curve's table (``curve_table``)
    chart: pd.DataFrame  # what the chart draws: the curve with the model and each bin's label
    slopes: pd.DataFrame  # ``slope_table``
    books: list[str]  # the titles of the books pooled
    pooled: str  # which books the curve is made of, in words
    slope_text: str  # the slopes in words


def reading_books(project: "Project", model: str | None) -> list[tuple[str, int]]:
    """The books ``model`` answered questions of, as (title, id): the page's choice of book."""
    if not model:
        return []
    from workbench.corpus.library import books_frame

    answered = {int(b) for b in results.answer_runs(project, model)["book_id"].dropna()}
    books = books_frame(project)
    books = books[books["id"].isin(answered)].sort_values("title")
    return [(str(t), int(i)) for t, i in zip(books["title"], books["id"])]


def reading_answers(project: "Project", choices: ReadingChoices) -> pd.DataFrame:
    """Every answer of ``choices.model`` (one book's with ``book_id``): ``results.answers_frame``."""
    if not choices.model:
        return pd.DataFrame()
    answers = results.answers_frame(project, choices.model)
    if choices.book_id is not None and not answers.empty:
        answers = answers[answers["book_id"] == int(choices.book_id)].reset_index(drop=True)
    return answers


def curve_table(project: "Project", choices: ReadingChoices, answers: pd.DataFrame | None = None) -> pd.DataFrame:
    """The forgetting curve of the choices: accuracy by retention-demand bin per variant (``results.CURVE_COLUMNS``).
    ``answers``: ``reading_answers(project, choices)`` when read already."""
    if not choices.model:
        return pd.DataFrame(columns=results.CURVE_COLUMNS)
    answers = reading_answers(project, choices) if answers is None else answers
    return results.forgetting_curve(project, choices.model, bins=choices.bins, by_kind=choices.by_kind,
                                    answers=answers)


def slope_table(project: "Project", choices: ReadingChoices, answers: pd.DataFrame | None = None) -> pd.DataFrame:
    """The logistic slope per variant over the answers of the choices."""
    answers = reading_answers(project, choices) if answers is None else answers
    return results.forgetting_slope(project, choices.model, answers=answers)


def chart_frame(curve: pd.DataFrame, model: str) -> pd.DataFrame:
    """The curve as the chart draws it: with the model and each bin's label (``charts.curve_frame``)."""
    from workbench.probes.reading.charts import bin_label

    frame = curve.copy()
    frame.insert(0, "model", model)
    frame["bin"] = [bin_label(lo, hi) for lo, hi in zip(frame["bin_low"], frame["bin_high"])]
    return frame


def reading_results(project: "Project", choices: ReadingChoices) -> ReadingResults:
    """Everything the results side shows for ``choices``, the answers read once."""
    if not choices.model:
        return NO_RESULTS
    answers = reading_answers(project, choices)
    curve = curve_table(project, choices, answers)
    slopes = slope_table(project, choices, answers)
    books = results.books_answered(project, answers)
    return ReadingResults(answers, curve, chart_frame(curve, choices.model), slopes, books, describe_pooled(books),
                          describe_slopes(slopes))


def questions_table(project: "Project", choices: ReadingChoices, answers: pd.DataFrame | None = None) -> pd.DataFrame:
    """The questions behind the point ``choices.variant`` / ``choices.bin_low`` of the curve (those whose reply named
    no choice, and 'None of the above' ones, too: the curve counts them)."""
    answers = reading_answers(project, choices) if answers is None else answers
    if answers.empty or choices.variant is None or choices.bin_low is None:
        return pd.DataFrame(columns=QUESTION_COLUMNS)
    answers = answers[answers["retention_words"].notna()]
    answers = answers[~answers["kind"].isin(results.RECONSTRUCTION_KINDS)]
    bins = results.retention_bins(answers["retention_words"], choices.bins)
    chosen = answers[(answers["variant"] == choices.variant) & (bins["bin_low"] == int(choices.bin_low))]
    return chosen.reset_index(drop=True)


def question_run(answers: pd.DataFrame, question_id: int) -> int | None:
    """The run that asked ``question_id`` among ``answers`` (for its detail), or None."""
    rows = answers[answers["question_id"] == question_id] if len(answers) else answers
    return int(rows["run_id"].iloc[0]) if len(rows) else None


def describe_pooled(books: list[str]) -> str:
    """Which books the curve is made of (it pools every book of the choices)."""
    if not books:
        return ""
    if len(books) == 1:
        return f"The answers to the questions of {books[0]}."
    return f"The answers to the questions of {len(books)} books, pooled: {'; '.join(books)}."


def _decimal(value: Any) -> str:
    return "" if value is None or pd.isna(value) else f"{float(value):.2f}"


def describe_slopes(slopes: pd.DataFrame) -> str:
    """One sentence per text variant about the logistic slope."""
    lines = []
    for row in slopes.itertuples(index=False):
        if pd.isna(row.slope):
            lines.append(f"{row.variant} names: no slope ({row.note}).")
            continue
        trend = ("accuracy falls with distance" if row.ci_high < 0 else
                 "accuracy rises with distance" if row.ci_low > 0 else "no trend beyond chance variation")
        lines.append(f"{row.variant} names: slope {_decimal(row.slope)} per log word (95% CI {_decimal(row.ci_low)} "
                     f"to {_decimal(row.ci_high)}, p = {row.p_value:.3f}, {row.questions} answers): {trend}.")
    return " ".join(lines)


NO_RESULTS = ReadingResults(pd.DataFrame(), pd.DataFrame(columns=results.CURVE_COLUMNS), pd.DataFrame(),
                            pd.DataFrame(), [], "", "")
