"""The Report page's view as state (issue 21.6): ``ReportChoices`` (the model, and a book) changed by the page;
the table shown is ``report_table`` for those choices, and ``palimpsest report`` prints the same frame."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from workbench.cli import main
from workbench.export.report_views import ReportChoices, report_table, why_text


def test_the_query_keeps_the_model_and_the_book_chosen(study):
    project, ids = study
    every = report_table(project, ReportChoices(model="gpt"))
    assert sorted(every["book"]) == ["Kettles", "Orchard", "Unread", "Zebras"]
    one = report_table(project, ReportChoices(model="gpt", book_id=ids["Zebras"]))
    assert one["book"].tolist() == ["Zebras"] and one["verdict"].tolist() == ["some evidence"]
    pd.testing.assert_frame_equal(one, every[every["book_id"] == ids["Zebras"]].reset_index(drop=True))
    assert [s["key"] for s in one.attrs["sources"]] == [s["key"] for s in every.attrs["sources"]]
    assert why_text(one, ids["Zebras"]).startswith("Zebras: some evidence")
    assert why_text(one, ids["Orchard"]).startswith("Choose a book")  # not in the table shown


def test_the_report_command_prints_the_query_for_its_choices(study, capsys):
    project, ids = study
    capsys.readouterr()
    assert main(["report", str(project.path), "--model", "gpt", "--book", str(ids["Orchard"]), "--format", "csv"]) == 0
    printed = pd.read_csv(io.StringIO(capsys.readouterr().out)).drop(columns=["book_source", "book_external_id"])
    query = report_table(project, ReportChoices(model="gpt", book_id=ids["Orchard"]))
    assert printed["book"].tolist() == ["Orchard"]
    pd.testing.assert_frame_equal(printed[list(query.columns)], pd.read_csv(io.StringIO(query.to_csv(index=False))),
                                  check_dtype=False)
    assert main(["report", str(project.path), "--model", "gpt", "--book", "1", "--out", "r.csv"]) == 1
    assert "--book prints one book's row" in capsys.readouterr().err


pytest.importorskip("PySide6")


def test_the_page_shows_the_query_of_its_choices(study, shown_page, qtbot):
    from ui.report.page import ReportPage
    from workbench.models.catalog import ModelSpec, add_model

    project, ids = study
    add_model(project, ModelSpec(label="other", backend="hf", ref="nowhere"))
    page = shown_page(ReportPage, project, size=(1300, 760))
    qtbot.waitUntil(lambda: not page.frame.empty and not page.work.busy, timeout=30_000)
    assert page.choices == ReportChoices(model="gpt")
    pd.testing.assert_frame_equal(page.table.frame, report_table(project, page.choices))
    page.model.setCurrentIndex(page.model.findData("other"))
    assert page.choices == ReportChoices(model="other")
    qtbot.waitUntil(lambda: not page.work.busy and page.frame.attrs.get("model") == "other", timeout=30_000)
    shown = page.table.frame
    pd.testing.assert_frame_equal(shown, report_table(project, ReportChoices(model="other")))
    assert set(page.table.column_texts("Name cloze")) == {"—"}  # 'other' named nobody; the corpora's evidence stays
    flag = [c.title for c in page.table.columns].index("Flag")
    assert [page.table.item(r, flag).text() for r in range(page.table.rowCount())] == [
        "measures disagree" if disagree else "" for disagree in shown["measures_disagree"]]
