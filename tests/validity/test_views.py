"""The Validity page's choices as a Qt-free state (issue 21.6): ``ValidityChoices`` and the queries that take it.
The core query filters by the book and the grouping; the page's widgets change its choices and the tables it shows
are the query's frames; the command prints the same frame for the same choices."""

from __future__ import annotations

import io
from dataclasses import replace

import pandas as pd
import pytest

from tests.validity.conftest import MINUTES
from tests.validity.test_page import choose, wait_idle
from ui.validity.page import ValidityPage
from workbench.cli import main
from workbench.probes.validity.views import (
    ValidityChoices,
    validity_answers,
    validity_rows,
    validity_table,
    validity_unparsed,
)

NARRATIVE = ValidityChoices(task="narrative-time", model="alpha", by="alpha", reference="imported")


def same(shown: pd.DataFrame, frame: pd.DataFrame) -> None:
    """``shown`` holds ``frame``'s columns with its values (through CSV, as a reader of the output gets them)."""
    expected = pd.read_csv(io.StringIO(frame.to_csv(index=False)))
    got = pd.read_csv(io.StringIO(shown[list(frame.columns)].to_csv(index=False)))
    pd.testing.assert_frame_equal(got, expected)


def test_the_rows_and_answers_are_those_of_the_chosen_book_and_grouping(timed):
    project, ids, extra = timed
    quintiles = replace(NARRATIVE, groups="quintile", book_id=ids[9])
    rows = validity_rows(project, quintiles)
    assert len(rows) == 4 and set(rows["book_id"]) == {ids[9]}  # book 9's own passage and three more
    assert set(rows["group"]) == {"top"}  # books 9 and 10 are the top fifth of alpha's ten
    assert set(validity_rows(project, replace(quintiles, groups="decile"))["group"]) == {"middle"}  # only 10 tops
    everyone = validity_rows(project, replace(quintiles, book_id=None))
    assert len(everyone) == 10 + 12 and set(everyone["book_id"]) == set(ids.values())

    answers = validity_answers(project, quintiles)
    assert len(answers) == 4 and set(answers["book_id"]) == {ids[9]}
    expected = sorted([MINUTES[9]] + [m for (i, m, _) in extra.values() if i == 9])
    assert sorted(answers["reference_minutes"]) == pytest.approx(expected)  # merged in the core, not the page
    group = validity_answers(project, replace(quintiles, book_id=None), group="top")
    assert set(group["book_id"]) == {ids[9], ids[10]}

    year = ValidityChoices(task="year", model="alpha", by="alpha", groups="quintile")
    assert list(validity_unparsed(project, replace(year, book_id=ids[5]))["book_id"]) == [ids[5]]  # 'I cannot say.'
    assert validity_unparsed(project, replace(year, book_id=ids[4])).empty


def test_the_page_keeps_its_choices_and_shows_the_querys_frames(qtbot, shown_page, timed, messages):
    project, ids, _ = timed
    page = shown_page(ValidityPage, project, size=(1400, 900))
    choose(page.task, "narrative-time")
    choose(page.model, "alpha")
    choose(page.by, "alpha")
    choose(page.reference, "imported")
    choose(page.groups, "quintile")
    page.seed.setValue(3)
    assert page.choices == replace(page.choices, task="narrative-time", model="alpha", by="alpha",
                                   reference="imported", groups="quintile", seed=3)
    assert (page.choices.groups, page.choices.seed) == ("quintile", 3)
    page.analyse()
    wait_idle(qtbot, page)
    same(page.table.frame, validity_table(project, page.choices))
    same(page.rows.frame, validity_rows(project, page.choices))
    choose(page.groups, "decile")
    assert page.choices.groups == "decile" and page.plot.kind == "message"  # the quintile results went

    choose(page.groups, "quintile")
    page.analyse()
    wait_idle(qtbot, page)
    row = int(page.rows.frame.index[page.rows.frame["book_id"] == ids[9]][0])
    page._row_opened(page.rows.model().index(row, 0))
    wait_idle(qtbot, page)
    shown = page.answers_dialog.table.frame
    expected = validity_answers(project, replace(page.choices, book_id=ids[9]), passage_id=int(shown["passage_id"][0]))
    same(shown, expected)


def test_the_command_prints_the_querys_frame_for_the_same_choices(timed, capsys):
    project, ids, _ = timed
    capsys.readouterr()
    assert main(["validity", "narrative-time", str(project.path), "--model", "alpha", "--grouped-by", "alpha",
                 "--reference", "imported", "--groups", "quintile", "--books", "--book", str(ids[9]),
                 "--format", "csv"]) == 0
    printed = pd.read_csv(io.StringIO(capsys.readouterr().out))
    choices = replace(NARRATIVE, groups="quintile", book_id=ids[9])
    same(printed, validity_rows(project, choices))
    assert len(printed) == 4
    assert main(["validity", "narrative-time", str(project.path), "--model", "alpha", "--grouped-by", "alpha",
                 "--reference", "imported", "--seed", "2", "--format", "csv"]) == 0
    printed = pd.read_csv(io.StringIO(capsys.readouterr().out.split("\n\n")[0]))
    same(printed, validity_table(project, replace(NARRATIVE, seed=2)))
