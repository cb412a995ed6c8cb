"""The Continuation page offscreen: the run form runs the probe in the background, the table and both registered
charts show the result."""

from __future__ import annotations

import os

import pytest

from workbench.models.catalog import ModelSpec, add_model

pytest.importorskip("PySide6")

from ui.continuation.page import ContinuationPage  # noqa: E402

SCREENSHOT = os.environ.get("PALIMPSEST_SCREENSHOTS")


def _settle(qtbot, page):
    tab = page.tab
    qtbot.waitUntil(lambda: not tab.work.busy and not tab.reading.busy and not tab.charts.drawing.busy, timeout=120_000)


def test_the_page_runs_the_probe_and_shows_table_and_charts(qtbot, shown_page, two_books, tiny_causal_dir, messages):
    project, seen, unseen = two_books
    add_model(project, ModelSpec(label="tiny", backend="hf", ref=str(tiny_causal_dir)))
    page = shown_page(ContinuationPage, project, size=(1300, 850))
    _settle(qtbot, page)
    tab = page.tab
    assert tab.model.currentData() == "tiny" and tab.books.count() == 3  # all books, and each
    tab.per_book.setValue(3)
    tab.prefix.setValue(8)
    tab.continuation.setValue(8)
    tab.run()
    _settle(qtbot, page)
    tab.refresh()
    _settle(qtbot, page)
    assert "Continuation on tiny" in tab.summary.text()
    assert tab.table.rowCount() == 2
    assert sorted(tab.table.column_texts("Unseen")) == ["no", "yes"]
    plots = tab.charts.plots
    assert set(plots) == {"continuation-ranked", "continuation-lengths"}
    assert all(plot.has_chart() for plot in plots.values())
    assert len(plots["continuation-ranked"].marks) >= 1
    if SCREENSHOT:
        page.grab().save(os.path.join(SCREENSHOT, "continuation-page.png"))


def test_a_paid_api_is_asked_about_once_and_no_sends_nothing(qtbot, shown_page, two_books, messages, fault_proxy,
                                                             llama_server):
    """The page asked in its own words; now the one question of planned work (what it is, what it costs at most,
    what is not paid for again), and No starts nothing."""
    from workbench.models.prices import set_price

    project, seen, unseen = two_books
    add_model(project, ModelSpec(label="api", backend="openai", ref=llama_server.model, base_url=fault_proxy.base_url))
    set_price(project, llama_server.model, 2.5, 10.0)
    page = shown_page(ContinuationPage, project, size=(1300, 850))
    _settle(qtbot, page)
    tab = page.tab
    tab.model.setCurrentIndex(tab.model.findData("api"))
    tab.per_book.setValue(2)
    messages["answer"] = False
    tab.run()
    _settle(qtbot, page)
    assert len(messages["questions"]) == 1
    question = messages["questions"][0]
    assert question.startswith("Continuation on api.") and "api is a paid API: 4 requests" in question
    assert "not paid for again" in question
    assert fault_proxy.posts() == [] and "Nothing was started." in tab.summary.text()
    assert project.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
