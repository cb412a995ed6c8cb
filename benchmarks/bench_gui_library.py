"""The Library page with hundreds of books, on the GUI thread. Measured side by side on the same page:

- ``library_reselect_speedup``: reloading while many books are selected (an import reloads every second).
  The page reselects them in one selection change; the old way selected them one row at a time, and each
  change re-read the whole selection (``selectedRows``): quadratic, 17 s for 800 selected books.
  Goal: at least 20 times faster, and under 0.3 s.
- ``library_growing_refresh_speedup``: reloading after an import added a few books. The page inserts the
  new rows (the sorted view places only them); a full model reset sorts every row again.
  Goal: at least 2 times faster for 500 books (1.3 for the quick 200; fixed costs weigh more there).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from benchmarks.common import Timer, line, qt_application, skipped


def _old_selected_book_ids(page):
    from ui.library.books_model import BOOK_ID_ROLE

    rows = page.table.selectionModel().selectedRows()
    return [page.proxy.data(index, BOOK_ID_ROLE) for index in sorted(rows, key=lambda i: i.row())]


def _old_reselect(page, book_ids):
    """The reselection as it was: one select per row, each a selection change."""
    from PySide6.QtCore import QItemSelectionModel

    selection = page.table.selectionModel()
    rows = [page.proxy.mapFromSource(page.model.index(r, 0)).row()
            for r in (page.model.row_of(b) for b in book_ids) if r is not None]
    selection.clearSelection()
    for row in rows:
        selection.select(page.proxy.index(row, 0),
                         QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows)


def run(quick: bool):
    app = qt_application()
    if app is None:
        yield skipped("library_reselect_speedup", "the GUI extra is not installed")
        return
    from PySide6.QtCore import Qt

    from ui.background import BackgroundOps
    from ui.library.books_model import TITLE
    from ui.library.page import LibraryPage
    from workbench import Project
    from workbench.corpus.importer import store_book
    from workbench.corpus.sources import draft_from_text

    count = 200 if quick else 500
    folder = Path(tempfile.mkdtemp(prefix="bench-library-"))
    project = Project.create(folder / "library.palimpsest")

    def add(number: int) -> None:
        text = f"CHAPTER I\n\nA short book, number {number}, about a lighthouse keeper.\n" * (1 + number % 5)
        draft = draft_from_text(text, f"book{number:04d}.txt")
        draft.title, draft.author = f"The Keeper, volume {(number * 37) % 1000}", f"Author {number % 11}"
        store_book(project, draft)

    for number in range(count):
        add(number)
    ops = BackgroundOps()
    page = LibraryPage(ops)
    page.resize(1280, 800)
    page.show()
    page.set_project(project)
    page.table.sortByColumn(TITLE, Qt.SortOrder.AscendingOrder)
    ops.pool.waitForDone(30_000)
    app.processEvents()

    def reload_seconds() -> float:
        page.table.selectAll()
        app.processEvents()
        with Timer() as timer:
            page.refresh()
            app.processEvents()
        assert len(page.selected_book_ids()) == count
        return timer.seconds

    now = reload_seconds()
    page._reselect = lambda ids: _old_reselect(page, ids)
    page.selected_book_ids = lambda: _old_selected_book_ids(page)
    old_handler = lambda *_: _old_selected_book_ids(page)  # noqa: E731 (the old page read the selection per change)
    page.table.selectionModel().selectionChanged.connect(old_handler)
    try:
        before = reload_seconds()
    finally:
        page.table.selectionModel().selectionChanged.disconnect(old_handler)
        del page._reselect, page.selected_book_ids
    ratio = before / now
    yield line("library_reselect_speedup", ratio, "x", ">= 20 and under 0.3 s", ratio >= 20 and now < 0.3,
               books=count, now_s=round(now, 3), before_s=round(before, 2))

    page.table.clearSelection()
    page.table.selectRow(3)
    app.processEvents()
    timings = {}
    for way in ("insert", "reset"):
        for number in range(count + len(timings) * 10, count + len(timings) * 10 + 10):
            add(number)
        if way == "reset":
            page.model.project = None  # the model no longer recognises the project: it resets
        with Timer() as timer:
            page.refresh()
            app.processEvents()
        timings[way] = timer.seconds
    ratio, goal = timings["reset"] / timings["insert"], 1.3 if quick else 2.0
    yield line("library_growing_refresh_speedup", ratio, "x", f">= {goal}", ratio >= goal, books=count,
               insert_s=round(timings["insert"], 4), reset_s=round(timings["reset"], 4))
    page.close()
    ops.join()
    project.close()
