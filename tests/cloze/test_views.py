"""The Name cloze results views (issue 21.6): each view's choices, the book among them, decide the rows of the one
core query, and the command line prints that query's frame for the same choices."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from workbench.cli import main
from workbench.errors import UserError
from workbench.probes.cloze.views import (
    AccuracyChoices,
    ModelsTableChoices,
    PassagesChoices,
    RunsChoices,
    accuracy_frame,
    accuracy_view,
    models_table_frame,
    models_table_view,
    passages_view,
    runs_view,
)


def _printed(capsys, argv: list[str]) -> pd.DataFrame:
    capsys.readouterr()
    assert main(argv) == 0
    return pd.read_csv(io.StringIO(capsys.readouterr().out))


def _same(printed: pd.DataFrame, frame: pd.DataFrame) -> None:
    """The CSV the command printed holds the query's frame, as that frame reads written to a CSV (beside the book
    keys a CSV adds)."""
    assert len(frame.columns) and set(frame.columns) <= set(printed.columns)
    expected = pd.read_csv(io.StringIO(frame.to_csv(index=False)))
    pd.testing.assert_frame_equal(printed[list(frame.columns)], expected)


def test_accuracy_of_one_book_and_one_model(results):
    project, ids = results
    frame = accuracy_frame(project, AccuracyChoices(models=("alpha",), book_id=ids["b03"]))
    assert list(frame["model"]) == ["alpha"] and list(frame["book_id"]) == [ids["b03"]]
    assert int(frame["n"].iloc[0]) == 10 and int(frame["correct"].iloc[0]) == 3
    every = accuracy_frame(project, AccuracyChoices())
    assert len(every) == 20 and set(every["model"]) == {"alpha", "beta"}  # both models, ten books each
    shown = accuracy_view(project, AccuracyChoices(book_id=ids["b10"]))
    assert list(shown["Model"]) == ["alpha", "beta"] and list(shown["Book"]) == ["Book 10"] * 2
    assert list(shown["Accuracy"]) == ["100%", "100%"] and list(shown["Answered"]) == ["10", "10"]
    assert shown["95% CI"].iloc[0].startswith("72%")  # Wilson 95% for 10 of 10: 72% - 100%


def test_models_table_of_one_book_in_another_order(results):
    project, ids = results
    choices = ModelsTableChoices(models=("alpha", "beta"), sort_by="beta", top=3)
    frame = models_table_frame(project, choices)
    assert list(frame.columns[4:6]) == ["accuracy: beta", "passages: beta"]  # the ranking model's column first
    assert frame["book"].iloc[0] == "Book 10" and len(frame) == 3
    one = models_table_frame(project, ModelsTableChoices(models=("alpha", "beta"), book_id=ids["b04"]))
    assert list(one["book"]) == ["Book 04"] and one["accuracy: alpha"].iloc[0] == pytest.approx(0.4)
    view = models_table_view(project, ModelsTableChoices(models=("alpha",), book_id=ids["b04"]))
    assert list(view.table["accuracy: alpha"]) == ["40%"] and [c.title for c in view.columns][3:] == ["alpha", "n"]
    assert list(view.baseline["book"]) == ["all books", "Book 04"]  # the baseline of the book, beside all books'


def test_models_table_chooses_the_first_two_models_when_none_is_chosen(results):
    project, _ = results
    view = models_table_view(project, ModelsTableChoices())
    assert view.labels == ["alpha", "beta"] and [c.title for c in view.columns][3:] == ["alpha", "n", "beta", "n"]


def test_one_books_wrong_answers(results):
    project, ids = results
    rows = passages_view(project, PassagesChoices(book_id=ids["b03"], models=("alpha",), show="wrong"))
    assert len(rows) == 7 and set(rows["book_id"]) == {ids["b03"]} and set(rows["parsed"]) == {"Nobody"}
    assert set(rows["verdict"]) == {"wrong"}
    right = passages_view(project, PassagesChoices(book_id=ids["b03"], show="right"))
    assert sorted(right["model"]) == ["alpha"] * 3  # beta knows only book 10
    with pytest.raises(UserError, match="no book with id"):
        passages_view(project, PassagesChoices(book_id=999_999))


def test_runs_of_one_model(results):
    project, _ = results
    runs = runs_view(project, RunsChoices(models=("beta",)))
    assert list(runs["Model"]) == ["beta"] and runs["Note"].iloc[0].startswith("imported from")
    assert not runs["can_continue"].iloc[0] and not runs["can_retry"].iloc[0]  # imported: nothing to ask again


def test_the_accuracy_command_prints_the_view_of_the_same_choices(results, capsys):
    project, ids = results
    printed = _printed(capsys, ["cloze", "accuracy", str(project.path), "--model", "alpha", "--book", str(ids["b03"]),
                                "--format", "csv"])
    _same(printed, accuracy_frame(project, AccuracyChoices(models=("alpha",), book_id=ids["b03"], all_columns=False)))
    assert len(printed) == 1


def test_the_table_command_prints_the_view_of_the_same_choices(results, capsys):
    project, ids = results
    printed = _printed(capsys, ["cloze", "table", str(project.path), "--model", "alpha", "--model", "beta",
                                "--sort-by", "beta", "--top", "3", "--format", "csv"])
    _same(printed, models_table_frame(project, ModelsTableChoices(models=("alpha", "beta"), sort_by="beta", top=3)))
    printed = _printed(capsys, ["cloze", "table", str(project.path), "--model", "alpha", "--book", str(ids["b04"]),
                                "--format", "csv"])
    _same(printed, models_table_frame(project, ModelsTableChoices(models=("alpha",), book_id=ids["b04"])))
    assert list(printed["book"]) == ["Book 04"]


def test_the_answers_command_prints_one_books_passages(results, capsys):
    project, ids = results
    printed = _printed(capsys, ["cloze", "answers", str(project.path), "--book", str(ids["b03"]), "--model", "alpha",
                                "--show", "wrong", "--format", "csv"])
    frame = passages_view(project, PassagesChoices(book_id=ids["b03"], models=("alpha",), show="wrong"))
    _same(printed, frame)
    assert len(printed) == 7 and set(printed["verdict"]) == {"wrong"}
