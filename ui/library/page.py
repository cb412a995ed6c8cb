"""The Library page: the books of the project, importing more, editing what is known about them.

Every action calls ``workbench.corpus``: imports run in the background (``self.ops``) with a progress
bar and Cancel; edits in the table are saved at once; the book view counts words, sentences and
chapters in the background too, so a long novel never freezes the window.
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from typing import Iterable

from PySide6.QtCore import QItemSelection, QItemSelectionModel, QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ui import dialogs
from ui.background import Operation
from ui.library.book_panel import PREVIEW_CHARS, BookPanel
from ui.library.books_model import AUTHOR, BOOK_ID_ROLE, ID, SOURCE, TAGS, TITLE, WORDS, YEAR, BooksFilter, BooksModel
from ui.library.books_model import COLUMNS as COLUMN_TITLES
from ui.library.gutenberg_dialog import GutenbergDialog, parse_numbers
from ui.widgets.page import Page
from ui.widgets.summary_box import SummaryBox
from ui.widgets.table_style import one_line_rows
from workbench.corpus.importer import ImportReport, import_paths
from workbench.corpus.library import RESULTS_ONLY, RESULTS_ONLY_HINT, book_preview, book_text, delete_books, get_book
from workbench.corpus.sources import TABLE_SUFFIXES
from workbench.corpus.stats import text_statistics
from workbench.errors import UserError
from workbench.progress import Progress
from workbench.work import BOOKS, KIND_TOPICS, RUNS

EDIT_NOTE = ("Double-click a title, author, year or tags to correct it (Enter saves, Esc cancels). Select books and "
             "press Delete to remove them.")
NO_YEARS = (" {n} {books} no year of first publication (the files did not give one): type it in, or use Import ▸ "
            "Metadata table with a 'year' column; charts by year or decade leave such books out.")
BOOK_FILES = "Books and metadata tables (*.txt *.text *.epub *.csv *.tsv);;All files (*)"
TABLE_FILES = "Metadata tables (*.csv *.tsv);;All files (*)"
MIRROR_SETTING = "library/gutenberg_mirror"
LIVE_REFRESH_S = 1.0  # while importing, reload the table at most this often
SIZED_COLUMNS = {AUTHOR: 0.24, TAGS: 0.22, SOURCE: 0.14}  # as wide as their text, up to this share of the table
CELL_MARGIN = 12  # a cell's padding around its text
EMPTY_LIBRARY = ("No books yet. Use Import to add .txt or .epub files, a folder of them, or Project Gutenberg "
                 "books by number, or drop files and folders here.")


def deleting(project, book_ids: list[int], state) -> list[int]:
    """Delete the books (on a worker) and hand back their ids, so the page forgets what it kept of them."""
    delete_books(project, book_ids)
    return book_ids


class LibraryPage(Page):
    def __init__(self, ops, parent=None):
        super().__init__(ops, parent)
        self.setAcceptDrops(True)
        self.import_op: Operation | None = None
        self.delete_op: Operation | None = None
        self._last_refresh = 0.0
        self._book_cache: dict[int, tuple] = {}
        self._content_widths: dict[int, int] = {}
        self._text_widths: dict[str, int] = {}  # text -> its width in the table's font
        self._build()
        self.refresh()

    # ------------------------------------------------------------------ layout
    def _build(self) -> None:
        self.import_button = QPushButton("Import")
        menu = QMenu(self.import_button)
        self.action_files = self._add_action(menu, "Files…", self.import_files_dialog, QKeySequence("Ctrl+I"))
        self.action_folder = self._add_action(menu, "Folder…", self.import_folder_dialog)
        self.action_gutenberg = self._add_action(menu, "Project Gutenberg books by number…", self.import_gutenberg_dialog)
        menu.addSeparator()
        self.action_metadata = self._add_action(menu, "Metadata table (CSV) for the books in the library…",
                                                self.apply_metadata_dialog)
        self.import_button.setMenu(menu)
        self.delete_button = QPushButton("Delete…")
        self.delete_button.setToolTip("Delete the selected books from this project")
        self.delete_button.clicked.connect(self.delete_selected)
        self.filter_box = QLineEdit()
        self.filter_box.setPlaceholderText("Filter by title, author or tag…")
        self.filter_box.setClearButtonEnabled(True)
        self.count_label = QLabel("")

        toolbar = QHBoxLayout()
        toolbar.addWidget(self.import_button)
        toolbar.addWidget(self.delete_button)
        toolbar.addSpacing(12)
        toolbar.addWidget(self.filter_box, 1)
        toolbar.addWidget(self.count_label)

        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel_import)
        self.progress_row = QWidget()
        progress_layout = QHBoxLayout(self.progress_row)
        progress_layout.setContentsMargins(0, 0, 0, 0)
        progress_layout.addWidget(self.progress, 1)
        progress_layout.addWidget(self.cancel_button)
        self.progress_row.hide()

        self.summary = SummaryBox()

        self.hint = QLabel("")
        self.hint.setWordWrap(True)
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)

        self.model = BooksModel(self)
        self.model.edit_refused.connect(self.show_error)
        self.model.edited.connect(self._books_changed)
        # a year typed in: the note about missing years follows (once per event-loop turn: a reload changes many rows)
        self._count_later = QTimer(self)
        self._count_later.setSingleShot(True)
        self._count_later.setInterval(0)
        self._count_later.timeout.connect(self._update_count)
        self.model.dataChanged.connect(self._count_later.start)
        self.proxy = BooksFilter(self)
        self.proxy.setSourceModel(self.model)
        self.filter_box.textChanged.connect(self._apply_filter)

        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(ID, Qt.SortOrder.AscendingOrder)
        one_line_rows(self.table)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked | QAbstractItemView.EditTrigger.EditKeyPressed)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        header.setSectionResizeMode(TITLE, QHeaderView.ResizeMode.Stretch)
        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)
        delete_action = QAction("Delete selected books", self.table)
        delete_action.setShortcut(QKeySequence.StandardKey.Delete)
        delete_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        delete_action.triggered.connect(self.delete_selected)
        self.table.addAction(delete_action)

        self.book_panel = BookPanel()
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(self.book_panel)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)

        self.edit_note = QLabel(EDIT_NOTE)
        self.edit_note.setObjectName("library-edit-note")
        self.edit_note.setWordWrap(True)
        self.edit_note.setStyleSheet("color: #555;")

        layout = QVBoxLayout(self)
        layout.addLayout(toolbar)
        layout.addWidget(self.progress_row)
        layout.addWidget(self.summary)
        layout.addWidget(self.hint)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.edit_note)

    def _add_action(self, menu: QMenu, text: str, slot, shortcut: QKeySequence | None = None) -> QAction:
        action = QAction(text, self)
        action.triggered.connect(slot)
        if shortcut is not None:
            action.setShortcut(shortcut)
            self.addAction(action)
        menu.addAction(action)
        return action

    def _measure_columns(self) -> None:
        """How wide author, tags and file name want to be: their widest text, measured once per reload
        (not at every resize; asking the view for it reads every cell of the column again)."""
        metrics, known = self.table.fontMetrics(), self._text_widths
        for column in SIZED_COLUMNS:
            texts = self.model.column_texts(column)
            widths = [known.get(t) or known.setdefault(t, metrics.horizontalAdvance(t)) for t in texts]
            self._content_widths[column] = max(widths, default=0) + CELL_MARGIN

    def _fit_columns(self) -> None:
        """Numbers as wide as their digits; author, tags and file name as wide as their text up to a share
        of the table; the title takes the rest."""
        header = self.table.horizontalHeader()
        metrics = self.table.fontMetrics()
        arrow = 28  # room for the sort indicator and margins
        for column, sample in ((ID, "9999"), (YEAR, "8888"), (WORDS, "888,888")):
            text_width = max(metrics.horizontalAdvance(sample), metrics.horizontalAdvance(COLUMN_TITLES[column]))
            header.resizeSection(column, text_width + arrow)
        available = self.table.viewport().width()
        for column, share in SIZED_COLUMNS.items():
            wanted = max(self._content_widths.get(column, 0), metrics.horizontalAdvance(COLUMN_TITLES[column]) + arrow)
            header.resizeSection(column, min(wanted + 8, max(80, int(available * share))))

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit_columns()

    # ------------------------------------------------------------------ reloading
    def set_project(self, project) -> None:
        if project is not self.project:
            self._book_cache.clear()
            self.book_panel.clear()
        super().set_project(project)

    def refresh(self) -> None:
        selected = self.selected_book_ids()
        self.model.load(self.project)
        self._measure_columns()
        has_project, importing = self.project is not None, self.import_op is not None
        self.filter_box.setEnabled(has_project)
        self.table.setEnabled(has_project)
        self.import_button.setEnabled(has_project and not importing)
        self.delete_button.setEnabled(has_project and self.model.rowCount() > 0 and self.delete_op is None)
        if not has_project:
            hint = "Open or create a project (File menu) to see its books."
        elif self.model.rowCount() == 0:
            hint = "Importing: the books appear here as they are added." if importing else EMPTY_LIBRARY
        else:
            hint = ""
        self.hint.setText(hint)
        self.hint.setVisible(bool(hint))
        self.edit_note.setVisible(has_project and self.model.rowCount() > 0)
        self._update_count()
        self._fit_columns()
        self._reselect(selected)

    def _reselect(self, book_ids: list[int]) -> None:
        """Select these books again after a reload, in one change of the selection (selecting them one
        by one made every row a selection change: 17 s for 800 selected books)."""
        selection = self.table.selectionModel()
        rows = [self.proxy.mapFromSource(self.model.index(r, 0)).row()
                for r in (self.model.row_of(b) for b in book_ids) if r is not None]
        rows = sorted(r for r in rows if r >= 0) or ([0] if self.proxy.rowCount() else [])
        wanted = QItemSelection()
        last = self.proxy.columnCount() - 1
        start = previous = None
        for row in rows + [None]:  # contiguous rows go in as one range
            if start is not None and (row is None or row != previous + 1):
                wanted.select(self.proxy.index(start, 0), self.proxy.index(previous, last))
                start = None
            if row is not None and start is None:
                start = row
            previous = row
        current = self.proxy.index(rows[0], TITLE) if rows else None
        if current is not None:  # moving the current cell first, so that it selects nothing by itself
            selection.setCurrentIndex(current, QItemSelectionModel.SelectionFlag.NoUpdate)
        selection.select(wanted, QItemSelectionModel.SelectionFlag.ClearAndSelect)
        if current is None:
            self.book_panel.clear()

    def _update_count(self) -> None:
        total, shown = self.model.rowCount(), self.proxy.rowCount()
        no_year = self.model.without_year()
        self.edit_note.setText(EDIT_NOTE + (NO_YEARS.format(n=no_year, books="book has" if no_year == 1 else
                                                            "books have") if no_year else ""))
        noun = "book" if total == 1 else "books"
        text = f"{shown} of {total} {noun}" if shown != total else f"{total} {noun}"
        without = self.model.without_text()
        if without:
            text += f" ({without} {RESULTS_ONLY})"
        self.count_label.setText(text)
        self.count_label.setToolTip(RESULTS_ONLY_HINT if without else "")

    def _apply_filter(self, text: str) -> None:
        self.proxy.set_filter_text(text)
        self._update_count()

    # ------------------------------------------------------------------ selection and the book view
    def _selected_rows(self) -> list[int]:
        """The selected rows of the table (whole rows are selected), read from the selection's ranges:
        ``selectedRows()`` asks the model about every cell of every row, once per selection change."""
        selection = self.table.selectionModel()
        if selection is None:
            return []
        rows: set[int] = set()
        for part in selection.selection():
            rows.update(range(part.top(), part.bottom() + 1))
        return sorted(rows)

    def selected_book_ids(self) -> list[int]:
        books = self.model.books
        return [books[self.proxy.mapToSource(self.proxy.index(row, 0)).row()].id for row in self._selected_rows()]

    def _on_selection_changed(self, *_) -> None:
        rows = self._selected_rows()
        if len(rows) != 1 or self.project is None:
            if not rows:
                self.book_panel.clear()
            return
        self.show_book(self.proxy.data(self.proxy.index(rows[0], 0), BOOK_ID_ROLE))

    def _current_book(self, book_id: int):
        """The book as stored now; None (and the view cleared) if it was deleted meanwhile (by another
        window or a command)."""
        try:
            return get_book(self.project, book_id)
        except UserError:
            self.book_panel.clear()
            return None

    def show_book(self, book_id: int) -> None:
        book = self._current_book(book_id)
        if book is None:
            return
        if not book.has_text:
            self.book_panel.show_results_only(book)
            return
        if book_id in self._book_cache:
            stats, preview = self._book_cache[book_id]
            self.book_panel.show_book(book, stats, preview)
            return
        self.book_panel.show_loading(book)
        project = self.project

        def load(state):
            text = book_text(project, book_id)
            return book_id, text_statistics(text), book_preview(text, PREVIEW_CHARS)

        self.ops.run(load, label="Counting words and chapters", project=project, background_read=True,
                     on_done=self._book_loaded, on_error=self.show_error)

    def _book_loaded(self, result) -> None:
        book_id, stats, preview = result
        self._book_cache[book_id] = (stats, preview)
        if self.book_panel.book_id == book_id and self.project is not None:
            book = self._current_book(book_id)
            if book is not None:
                self.book_panel.show_book(book, stats, preview)

    # ------------------------------------------------------------------ importing
    def import_files_dialog(self) -> None:
        if self.require_project() is None:
            return
        paths, _ = QFileDialog.getOpenFileNames(self, "Import books", str(Path.home()), BOOK_FILES)
        if paths:
            self.start_import(paths)

    def import_folder_dialog(self) -> None:
        if self.require_project() is None:
            return
        folder = QFileDialog.getExistingDirectory(self, "Import a folder of books", str(Path.home()))
        if folder:
            self.start_import([folder])

    def import_gutenberg_dialog(self) -> None:
        if self.require_project() is None:
            return
        settings = QSettings()
        dialog = GutenbergDialog(str(settings.value(MIRROR_SETTING, "") or ""), self)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return
        try:
            numbers = parse_numbers(dialog.numbers.text())
        except UserError as exc:
            self.show_error(str(exc))
            return
        mirror = dialog.mirror.text().strip() or None
        settings.setValue(MIRROR_SETTING, mirror or "")
        if numbers:
            self.start_import([], gutenberg_ids=numbers, mirror=mirror)

    def apply_metadata_dialog(self) -> None:
        if self.require_project() is None:
            return
        path, _ = QFileDialog.getOpenFileName(self, "Metadata table for the books", str(Path.home()), TABLE_FILES)
        if path:
            self.start_import([path])

    def start_import(self, paths: Iterable[str | Path], *, gutenberg_ids: Iterable[int] = (),
                     mirror: str | None = None) -> Operation | None:
        """Import in the background. A .csv/.tsv among the paths is the metadata table for the others."""
        if self.require_project() is None:
            return None
        if self.import_op is not None:
            self.show_info("An import is already running. Wait for it to finish, or cancel it first.")
            return None
        paths = [Path(p) for p in paths]
        tables = [p for p in paths if p.suffix.lower() in TABLE_SUFFIXES]
        books = [p for p in paths if p.suffix.lower() not in TABLE_SUFFIXES]
        if len(tables) > 1:
            self.show_error("Give one metadata table at a time: " + ", ".join(p.name for p in tables) + ".")
            return None
        project, ids = self.project, list(gutenberg_ids)
        metadata = tables[0] if tables else None

        def work(state):
            return import_paths(project, books, metadata_csv=metadata, state=state, gutenberg_ids=ids, mirror=mirror)

        self.summary.hide()
        self._last_refresh = time.monotonic()
        self.progress.setRange(0, 0)  # busy until the first progress report says how many
        self.progress.setFormat("Starting…")
        self.cancel_button.setEnabled(True)
        self.progress_row.show()
        label = "Applying the metadata table" if metadata is not None and not books and not ids else "Importing books"
        self.import_op = self.ops.run(
            work, label=label, project=project,
            on_done=self._import_done, on_error=self._import_failed, on_progress=self._import_progress,
            on_cancelled=self.show_summary, on_end=self._import_ended,
        )
        self.refresh()
        return self.import_op

    def _import_progress(self, progress: Progress) -> None:
        if time.monotonic() - self._last_refresh >= LIVE_REFRESH_S:
            self._last_refresh = time.monotonic()
            self.refresh()  # show the books that have landed so far
        self.progress.setRange(0, max(progress.total, 1))
        self.progress.setValue(progress.done)
        failed = f" · {progress.failed} could not be imported" if progress.failed else ""
        self.progress.setFormat(f"{progress.done} of {progress.total} · {progress.message}{failed}")

    def cancel_import(self) -> None:
        if self.import_op is not None:
            self.import_op.cancel()
            self.cancel_button.setEnabled(False)
            self.progress.setFormat("Stopping after the current book…")

    def _import_done(self, report: ImportReport) -> None:
        self.last_report = report
        self.show_summary(report.summary())

    def _import_failed(self, message: str, details: str) -> None:
        self.show_summary(message)
        if details:
            self.show_error(message, details)

    def _import_ended(self) -> None:
        self.import_op = None
        self.progress_row.hide()
        self.refresh()
        self._books_changed()

    def _books_changed(self, *_: object) -> None:
        """Pages showing the books (their lists, titles, tags) reload: on screen now, off screen when shown."""
        self.ops.changes.announce({BOOKS}, origin=self)

    def show_summary(self, text: str) -> None:
        self.summary.show_text(text)

    # ------------------------------------------------------------------ drag and drop
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 (Qt's name)
        urls = event.mimeData().urls()
        if self.project is not None and urls and all(u.isLocalFile() for u in urls):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.start_import(paths)

    # ------------------------------------------------------------------ deleting
    def delete_selected(self) -> None:
        ids = self.selected_book_ids()
        if not ids or self.project is None or self.delete_op is not None:
            return
        names = [get_book(self.project, i).display_name for i in ids[:3]]
        shown = ", ".join(f"“{n}”" for n in names) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
        question = (f"Delete {len(ids)} book{'s' if len(ids) > 1 else ''} ({shown}) from this project? "
                    "Their texts, and the passages and results made from them, are removed too. This cannot be undone.")
        if not dialogs.ask(self, question):
            return
        project = self.project
        self.book_panel.clear()
        self.delete_button.setEnabled(False)
        # in the background: the texts and results of a few hundred books take seconds to remove
        self.delete_op = self.ops.run(partial(deleting, project, ids), label="Deleting books", project=project,
                                      on_done=self._deleted, on_error=self.show_error, on_end=self._delete_ended)

    def _deleted(self, book_ids: list[int]) -> None:
        for book_id in book_ids:
            self._book_cache.pop(book_id, None)

    def _delete_ended(self) -> None:
        self.delete_op = None
        self.refresh()
        # the books' passages and results went with them
        self.ops.changes.announce({BOOKS, RUNS, *KIND_TOPICS.values()}, origin=self)
