"""The Report page: the per-book table with verdicts for the model chosen, the reasons of the chosen book, a
source's cell opening the page of its probe, and exports on a worker."""

from __future__ import annotations

import pytest

from ui.report.page import ReportPage


@pytest.fixture
def page(study, shown_page, qtbot):
    project, ids = study
    shown = shown_page(ReportPage, project, size=(1300, 760))
    qtbot.waitUntil(lambda: not shown.frame.empty, timeout=30_000)
    return shown, ids


def test_the_page_shows_every_book_with_its_verdict(page, qtbot):
    page, ids = page
    assert page.model.currentData() == "gpt"
    assert page.table.rowCount() == 4
    titles = [page.table.columns[c].title for c in range(len(page.table.columns))]
    assert titles[0] == "Book" and "Name cloze" in titles and "Verdict" in titles
    books = [page.table.item(r, 0).text() for r in range(4)]
    verdict_column = titles.index("Verdict")
    verdicts = {books[r]: page.table.item(r, verdict_column).text() for r in range(4)}
    assert verdicts == {"Orchard": "strong evidence of exposure", "Zebras": "some evidence", "Kettles": "none found",
                        "Unread": "not measured"}
    cloze = page.table.item(books.index("Orchard"), titles.index("Name cloze")).text()
    assert cloze == "strong: 90% [60%–98%]"
    page.table.select_keys([ids["Orchard"]])
    assert "decile 9 of 10" in page.why.toPlainText()
    page.grab().save("/tmp/report-page.png")


def test_a_cell_opens_the_page_of_its_evidence(page, qtbot):
    page, ids = page
    titles = [c.title for c in page.table.columns]
    row = [page.table.item(r, 0).text() for r in range(4)].index("Orchard")
    with qtbot.waitSignal(page.evidence_requested) as signal:
        page.table.cellDoubleClicked.emit(row, titles.index("Overlap with a reference corpus"))
    assert signal.args == ["leakage", ids["Orchard"]]
    with qtbot.waitSignal(page.evidence_requested) as signal:
        page.table.cellDoubleClicked.emit(row, titles.index("Name cloze"))
    assert signal.args == ["cloze", ids["Orchard"]]
    with qtbot.waitSignal(page.evidence_requested) as signal:  # the book's column: its first measure
        page.table.cellDoubleClicked.emit(row, 0)
    assert signal.args == ["cloze", ids["Orchard"]]


def test_the_report_is_exported_on_a_worker(page, qtbot, tmp_path):
    page, _ = page
    operation = page.export(tmp_path / "r.html", "html")
    qtbot.waitUntil(lambda: page.last_export is not None, timeout=30_000)
    assert operation is not None and page.last_export.read_text().startswith("<!DOCTYPE html>")
    page.export(tmp_path / "r.csv", "csv")
    qtbot.waitUntil(lambda: page.last_export.suffix == ".csv", timeout=30_000)
    assert "verdict" in page.last_export.read_text().splitlines()[0]
