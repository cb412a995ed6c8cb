"""The Reading page's results as a Qt-free state (issue 21.6): ``ReadingChoices`` and the queries that take it. A
book can be chosen (or every book pooled); the page's widgets change its choices and its tables are the queries'
frames; ``palimpsest reading curve --book`` prints the same frame."""

from __future__ import annotations

import io
from dataclasses import replace

import pandas as pd
import pytest

from tests.fixtures.reading_books import reading_book, store_answers
from workbench.cli import main
from workbench.probes.reading.questions import QuestionSettings, build_questions
from workbench.probes.reading.views import (
    ReadingChoices,
    curve_table,
    describe_slopes,
    questions_table,
    reading_answers,
    reading_books,
    slope_table,
)


def same(shown: pd.DataFrame, frame: pd.DataFrame) -> None:
    expected = pd.read_csv(io.StringIO(frame.to_csv(index=False)))
    got = pd.read_csv(io.StringIO(shown[list(frame.columns)].to_csv(index=False)))
    pd.testing.assert_frame_equal(got, expected)


@pytest.fixture
def answered(project, tmp_path):
    """Two books' questions answered by 'judge': every one of the first's right, none of the second's."""
    first = reading_book(project, tmp_path)
    second = reading_book(project, tmp_path, seed=1, title="The Inn", tag="x")
    settings = QuestionSettings(every=2, options=4, reconstruction=0)
    sets = {book.book_id: build_questions(project, book.book_id, settings) for book in (first, second)}
    store_answers(project, sets[first.book_id], "judge", lambda q: str(q.correct_choice + 1))
    store_answers(project, sets[second.book_id], "judge", lambda q: str((q.correct_choice + 1) % 4 + 1))
    return project, first.book_id, second.book_id


def test_the_curve_slope_and_questions_are_those_of_the_chosen_book(answered):
    project, first, second = answered
    pooled = ReadingChoices(model="judge")
    assert [book_id for _, book_id in reading_books(project, "judge")] == [second, first]  # by title: Inn, Mill
    answers = reading_answers(project, pooled)
    assert set(answers["book_id"]) == {first, second}
    assert set(reading_answers(project, replace(pooled, book_id=second))["book_id"]) == {second}

    one = curve_table(project, replace(pooled, book_id=first))
    other = curve_table(project, replace(pooled, book_id=second))
    assert (one["accuracy"] == 1).all() and (other["accuracy"] == 0).all()
    both = curve_table(project, pooled)
    assert both["questions"].sum() == one["questions"].sum() + other["questions"].sum()
    assert 0 < both["correct"].sum() < both["questions"].sum()
    assert slope_table(project, replace(pooled, book_id=first))["questions"].sum() == one["questions"].sum()

    point = replace(pooled, book_id=second, variant="original", bin_low=int(other["bin_low"].iloc[0]))
    questions = questions_table(project, point)
    assert len(questions) == int(other["questions"].iloc[0]) and set(questions["book_id"]) == {second}
    assert not questions["correct"].any()
    assert questions_table(project, replace(point, variant=None)).empty


def test_the_page_keeps_its_choices_and_shows_the_querys_frames(qtbot, shown_page, answered, messages):
    from tests.reading.test_reading_page import _settle
    from ui.reading.page import ReadingPage

    project, first, second = answered
    page = shown_page(ReadingPage, project)
    _settle(qtbot, page)
    assert page.choices.model == "judge" and page.choices.book_id is None
    same(page.curve.frame, curve_table(project, page.choices))
    page.book.setCurrentIndex(page.book.findData(second))
    assert page.choices.book_id == second
    _settle(qtbot, page)
    same(page.curve.frame, curve_table(project, page.choices))
    assert page.curve.column_texts("Accuracy")[0] == "0%"
    assert page.slope.text() == describe_slopes(slope_table(project, page.choices))
    assert page.pooled.text() == "The answers to the questions of The Inn."
    bin_low = int(page.curve.frame["bin_low"].iloc[0])
    page.show_bin("original", bin_low)
    assert (page.choices.variant, page.choices.bin_low) == ("original", bin_low)
    same(page.bin_answers.frame, questions_table(project, page.choices))
    assert not messages["errors"]


def test_the_command_prints_the_querys_curve_for_the_same_book(answered, capsys):
    project, first, second = answered
    capsys.readouterr()
    assert main(["reading", "curve", str(project.path), "--model", "judge", "--book", str(first),
                 "--bins", "0,300,900", "--format", "csv"]) == 0
    printed = pd.read_csv(io.StringIO(capsys.readouterr().out))
    same(printed, curve_table(project, ReadingChoices(model="judge", book_id=first, bins=(0, 300, 900))))
    assert (printed["accuracy"] == 1).all()
    assert main(["reading", "slope", str(project.path), "--model", "judge", "--book", str(second),
                 "--format", "csv"]) == 0
    printed = pd.read_csv(io.StringIO(capsys.readouterr().out))
    same(printed, slope_table(project, ReadingChoices(model="judge", book_id=second)))
