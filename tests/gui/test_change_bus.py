"""Library and Models edits are announced on the window's change bus ('books', 'models'): a page showing books or
models reloads then (on screen at once, off screen when next shown) instead of rereading everything each time it
is shown. The Continuation page listens, and no longer reloads merely for being shown."""

from __future__ import annotations

import pytest

from tests.fixtures.books import novel_text
from ui.background import BackgroundOps
from ui.continuation.page import ContinuationPage
from ui.library.books_model import TITLE
from ui.library.page import LibraryPage
from ui.models.page import ModelsPage
from ui.reading.page import ReadingPage
from workbench.corpus.importer import import_paths
from workbench.models.catalog import ModelSpec, add_model

WAIT_MS = 60_000


@pytest.fixture
def window_pages(qtbot, project, tmp_path, messages):
    """A Library page, a Models page and a Continuation page on one window's helper (one change bus)."""
    path = tmp_path / "quay.txt"
    path.write_text(novel_text(301, chapters=3))
    import_paths(project, [path])
    add_model(project, ModelSpec(label="local-a", backend="openai", ref="m", base_url="http://127.0.0.1:9/v1"))
    ops = BackgroundOps()
    made = []
    for page_class in (LibraryPage, ModelsPage, ContinuationPage, ReadingPage):
        page = page_class(ops)
        qtbot.addWidget(page)
        page.show()
        page.set_project(project)
        made.append(page)
    yield ops, made
    ops.join()


def books_listed(page) -> list[str]:
    return [page.tab.books.itemText(i) for i in range(page.tab.books.count())]


def models_listed(page) -> list[str]:
    return [page.tab.model.itemData(i) for i in range(page.tab.model.count()) if page.tab.model.itemData(i)]


def test_a_title_corrected_in_the_library_shows_on_the_continuation_page(qtbot, window_pages):
    ops, (library, _, continuation, reading) = window_pages
    qtbot.waitUntil(lambda: not ops.busy, timeout=WAIT_MS)
    assert "The Quay Letters" not in books_listed(continuation)
    assert library.proxy.setData(library.proxy.index(0, TITLE), "The Quay Letters")
    assert "The Quay Letters" in books_listed(continuation)  # on screen: reloaded at once
    books = reading.steps.book
    assert "The Quay Letters" in [books.itemText(i) for i in range(books.count())]


def test_a_model_removed_or_added_reaches_a_page_off_screen_when_it_is_shown(qtbot, window_pages, messages):
    ops, (_, models, continuation, reading) = window_pages
    assert models_listed(continuation) == ["local-a"]
    reading_models = reading.steps.ask_model
    assert reading_models.count() == 1
    continuation.off_screen = True  # another page is on screen
    models.select_label("local-a")
    models.remove_selected()
    assert continuation.refresh_due and models_listed(continuation) == ["local-a"]  # not read while off screen
    continuation.off_screen = False
    continuation.on_shown()
    assert models_listed(continuation) == [] and not continuation.refresh_due
    assert reading_models.count() == 0  # on screen: reloaded at once


def test_the_continuation_page_does_not_reload_merely_for_being_shown(qtbot, window_pages):
    ops, (_, _, continuation, _) = window_pages
    qtbot.waitUntil(lambda: not ops.busy, timeout=WAIT_MS)
    reloads = []
    continuation.tab.refresh_choices = lambda: reloads.append(1)
    continuation.on_shown()
    assert reloads == []
