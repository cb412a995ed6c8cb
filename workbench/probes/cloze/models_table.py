"""The paper's tables: several models' name-cloze accuracy side by side, one row per book (*Speak, Memory*,
Tables 1 and 6: GPT-4 | ChatGPT | BERT, with title, author and year).

``models_table`` takes the models in the order given; rows are sorted by the first model's accuracy (best
first; among equal accuracies by the next models', then by title), ``top`` keeps that many rows, and
``year_from`` / ``year_to`` keep books first published in those years (books without a year are left out
when a year bound is given, and the note says how many). A book a model has no answers for has a blank cell
for it; each model's column is correct / passages answered (failures apart), as ``book_accuracy`` counts.
Models are named by their labels: a column ``accuracy: LABEL`` and ``passages: LABEL`` per model.

``humans`` adds the people who did the name cloze (``human``: their name-cloze annotation tasks) as one more
column, ``accuracy: humans`` (or ``accuracy: human: NAME`` for one annotator) with ``passages: ...`` (the
passages they answered; several people's answers to one passage pooled by majority, ``human.MAJORITY_RULE``;
their answers with ``per_answer``) and the 95% Wilson interval (``ci_low: ...``, ``ci_high: ...``): people usually answer a sample of a
book's passages, so their n is smaller than the models' and the interval says how much that matters. The
human column is scored by the models' scorer and never decides the order of the rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import pandas as pd

from workbench.errors import UserError
from workbench.probes.cloze.analysis import book_accuracy

if TYPE_CHECKING:
    from workbench.project import Project


def accuracy_column(model: str) -> str:
    return f"accuracy: {model}"


def passages_column(model: str) -> str:
    return f"passages: {model}"


def ci_columns(who: str) -> tuple[str, str]:
    return f"ci_low: {who}", f"ci_high: {who}"


def models_table(project: "Project", models: Sequence[str], *, top: int | None = None, year_from: int | None = None,
                 year_to: int | None = None, exclude_flagged: bool = False, humans: bool = False,
                 annotator: str | None = None, task: str | int | None = None,
                 sort_by: str | None = None, per_answer: bool = False) -> pd.DataFrame:
    """One row per book: title, book_id, author, year, then each model's accuracy and passages answered, and
    with ``humans`` (or an ``annotator``) the people's column with its interval (see the module docstring)."""
    models = list(dict.fromkeys(m for m in models if m))
    if not models:
        raise UserError("Name at least one model whose accuracy to show (--model LABEL, once per model).")
    if top is not None and top < 1:
        raise UserError(f"--top must be a whole number of books, at least 1 (got {top}).")
    books = pd.read_sql_query(
        "SELECT id AS book_id, COALESCE(NULLIF(title, ''), external_id, 'Book ' || id) AS book, author, year"
        " FROM books", project.db.conn)
    books["year"] = books["year"].astype("Int64")
    table = None
    for model in models:
        scores = book_accuracy(project, model, exclude_flagged=exclude_flagged)
        kinds = sorted(scores["kind"].unique())
        if len(kinds) > 1:  # a generating model and its own log-probability run: the prompted answers
            scores = scores[scores["kind"] == ("cloze" if "cloze" in kinds else kinds[0])]
        scores = scores[scores["n"] > 0][["book_id", "accuracy", "n"]].rename(
            columns={"accuracy": accuracy_column(model), "n": passages_column(model)})
        table = scores if table is None else table.merge(scores, on="book_id", how="outer")
    people: list[str] = []
    if humans or annotator:
        from workbench.probes.cloze.human import human_book_accuracy, human_label, no_answers_message

        who = human_label(annotator)
        scores = human_book_accuracy(project, task, annotator=annotator, per_answer=per_answer)
        if scores.empty:
            raise UserError(no_answers_message(project, task, annotator))
        low, high = ci_columns(who)
        scores = scores[["book_id", "accuracy", "n", "ci_low", "ci_high"]].rename(
            columns={"accuracy": accuracy_column(who), "n": passages_column(who), "ci_low": low, "ci_high": high})
        scores["book_id"] = scores["book_id"].astype(int)
        table = table.merge(scores, on="book_id", how="left")  # a book only people answered has no model row
        people = [who]
    table = books.merge(table, on="book_id", how="inner")
    if year_from is not None or year_to is not None:
        dated = table["year"].notna()
        keep = dated.copy()
        if year_from is not None:
            keep &= table["year"].fillna(year_from) >= year_from
        if year_to is not None:
            keep &= table["year"].fillna(year_to) <= year_to
        table = table[keep]
    order = [accuracy_column(m) for m in models]
    table = table.sort_values(order + ["book"], ascending=[False] * len(order) + [True], na_position="last",
                              kind="stable")
    if sort_by not in (None, "", models[0]):  # another order, then ``top`` keeps the first rows of it
        if sort_by in ("book", "year"):
            table = table.sort_values(sort_by, na_position="last", kind="stable")
        elif sort_by in models or sort_by in people:
            table = table.sort_values(accuracy_column(sort_by), ascending=False, na_position="last", kind="stable")
        else:
            raise UserError(f"The table cannot be sorted by '{sort_by}': choose book, year or one of its columns "
                            f"({', '.join(models + people)}).")
    if top is not None:
        table = table.head(top)
    for model in models + people:
        table[passages_column(model)] = table[passages_column(model)].astype("Int64")
    columns = ["book", "book_id", "author", "year"] + [c for m in models for c in (accuracy_column(m),
                                                                                   passages_column(m))]
    columns += [c for who in people for c in (accuracy_column(who), passages_column(who), *ci_columns(who))]
    return table[columns].reset_index(drop=True)


def models_table_note(project: "Project", table: pd.DataFrame, *, year_from: int | None = None,
                      year_to: int | None = None, per_answer: bool = False) -> str:
    """What the table left out, in a sentence: books without a year when a year bound was given; and, with a
    human column, that people answered fewer passages than the models."""
    notes = []
    if year_from is not None or year_to is not None:
        undated = project.db.execute("SELECT COUNT(*) FROM books WHERE year IS NULL").fetchone()[0]
        if undated:
            notes.append(f"{undated:,} book(s) without a year of publication are left out by the year bounds; add "
                         "their years on the Library page or with a metadata table.")
    people = [c[len("passages: "):] for c in table.columns if c.startswith("passages: human")]
    models = [c[len("passages: "):] for c in table.columns if c.startswith("passages: ") and c[10:] not in people]
    for who in people:
        answered = int(table[passages_column(who)].fillna(0).sum())
        most = max((int(table[passages_column(m)].fillna(0).sum()) for m in models), default=0)
        if answered == 0:
            notes.append(f"People ('{who}') answered none of these books' passages.")
        elif answered < most:
            unit = "answers" if per_answer else "passages"
            notes.append(f"The '{who}' column rests on {answered:,} {unit} in {int(table[passages_column(who)].notna().sum())} "
                         f"of these books, fewer than the models' {most:,} passages: read its interval, and compare "
                         "on the same passages with palimpsest cloze humans.")
    return " ".join(notes)
