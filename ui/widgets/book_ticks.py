"""Ticking books: a table with a tick per book, a tag box that ticks by ``key=value``, All / None, a count.

Pages that let the user choose books subclass ``BookTicks`` and say which columns to show
(``COLUMNS``, the first is the book with its tick) and how to fill a row (``fill_row``).
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ui.widgets.table_filling import filling
from ui.widgets.table_style import one_line_rows
from workbench.corpus.library import books_matching, parse_tags
from workbench.errors import UserError

BOOK_ID_ROLE = Qt.ItemDataRole.UserRole
MIN_TITLE_PX = 190  # the book column never gets narrower than this: the table scrolls sideways instead


def _prototype(numeric: bool) -> QTableWidgetItem:
    item = QTableWidgetItem()
    item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
    if numeric:
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item


#: cells are copies of these: setting flags and alignment (Qt enums) per cell took half of filling 571 books
_PROTOTYPES = {False: _prototype(False), True: _prototype(True)}


def cell(text: str, numeric: bool = False, tooltip: str = "") -> QTableWidgetItem:
    item = _PROTOTYPES[numeric].clone()
    item.setText(text)
    if tooltip:
        item.setToolTip(tooltip)
    return item


def book_cell(title: str, book_id: int, ticked: bool, tooltip: str = "") -> QTableWidgetItem:
    item = cell(title, tooltip=tooltip)
    item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
    item.setCheckState(Qt.CheckState.Checked if ticked else Qt.CheckState.Unchecked)
    item.setData(BOOK_ID_ROLE, int(book_id))
    return item


class BookTicks(QWidget):
    changed = Signal()  # the ticks changed

    COLUMNS: Sequence[str] = ("Book",)
    TOOLTIPS: dict[int, str] = {}
    STRETCH_COLUMN = 0
    INTERACTIVE_COLUMNS: Sequence[int] = ()
    NO_BOOKS = "No books yet: import some on the Library page."

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.project = None
        self._loading = False
        self.tag_box = QLineEdit()
        self.tag_box.setObjectName("book-tag")
        self.tag_box.setPlaceholderText("Tick books by tag, e.g. genre=gothic")
        self.tag_box.returnPressed.connect(self.tick_by_tag)
        self.tag_button = QPushButton("Tick")
        self.tag_button.setToolTip("Tick every book with this tag (the others keep their ticks)")
        self.tag_button.clicked.connect(self.tick_by_tag)
        self.all_button = QPushButton("All")
        self.all_button.clicked.connect(lambda: self.set_all_checked(True))
        self.none_button = QPushButton("None")
        self.none_button.clicked.connect(lambda: self.set_all_checked(False))
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.tag_box, 1)
        top.addWidget(self.tag_button)
        top.addWidget(self.all_button)
        top.addWidget(self.none_button)

        self.table = QTableWidget(0, len(self.COLUMNS))
        self.table.setObjectName("books")
        self.table.setHorizontalHeaderLabels(list(self.COLUMNS))
        for column, tip in self.TOOLTIPS.items():
            self.table.horizontalHeaderItem(column).setToolTip(tip)
        one_line_rows(self.table)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(self.STRETCH_COLUMN, QHeaderView.ResizeMode.Stretch)
        for column in self.INTERACTIVE_COLUMNS:
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
        self.table.itemChanged.connect(self._on_item_changed)
        self.table.viewport().installEventFilter(self)
        self.count_label = QLabel("")
        self.count_label.setWordWrap(True)

        self.layout_ = QVBoxLayout(self)
        self.layout_.setContentsMargins(0, 0, 0, 0)
        self.layout_.addLayout(top)
        self.layout_.addWidget(self.table, 1)
        self.layout_.addWidget(self.count_label)

    # ------------------------------------------------------------------ rows
    def show_rows(self, records: Sequence[Any], ticked: Iterable[int] = ()) -> None:
        """One row per record; ``fill_row`` puts its cells in. Books whose id is in ``ticked`` start ticked."""
        ticked = set(ticked)
        self._loading = True
        with filling(self.table):
            self.table.setRowCount(len(records))
            for row, record in enumerate(records):
                self.fill_row(row, record, ticked)
        self._loading = False
        self.fit_title_column()
        self.refresh_count()

    def fill_row(self, row: int, record: Any, ticked: set[int]) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------------ the title column
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.table.viewport() and event.type() == QEvent.Type.Resize:
            self.fit_title_column()
        return super().eventFilter(watched, event)

    def fit_title_column(self) -> None:
        """The book column takes the free width, but at least ``MIN_TITLE_PX``: on a small screen the titles
        stay readable and the table scrolls sideways instead."""
        header = self.table.horizontalHeader()
        column = self.STRETCH_COLUMN
        others = sum(header.sectionSize(c) for c in range(self.table.columnCount())
                     if c != column and not header.isSectionHidden(c))
        if self.table.viewport().width() - others < MIN_TITLE_PX:
            if header.sectionResizeMode(column) != QHeaderView.ResizeMode.Interactive:
                header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(column, MIN_TITLE_PX)
        elif header.sectionResizeMode(column) != QHeaderView.ResizeMode.Stretch:
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)

    # ------------------------------------------------------------------ ticks
    def checked_book_ids(self) -> list[int]:
        ids = []
        for row in range(self.table.rowCount()):
            item = self.table.item(row, 0)
            if item is not None and item.checkState() == Qt.CheckState.Checked:
                ids.append(int(item.data(BOOK_ID_ROLE)))
        return ids

    def all_book_ids(self) -> list[int]:
        return [int(self.table.item(r, 0).data(BOOK_ID_ROLE)) for r in range(self.table.rowCount())]

    def set_checked(self, book_ids: Iterable[int], checked: bool = True) -> None:
        wanted = {int(b) for b in book_ids}
        self._loading = True
        for row in range(self.table.rowCount()):
            item = self.table.item(row, 0)
            if int(item.data(BOOK_ID_ROLE)) in wanted:
                item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
        self._loading = False
        self.refresh_count()

    def set_all_checked(self, checked: bool) -> None:
        self.set_checked(self.all_book_ids(), checked)

    def tick_by_tag(self) -> None:
        """Tick the books carrying every ``key=value`` typed in the tag box; say so when none does."""
        text = self.tag_box.text().strip()
        try:
            tags = parse_tags(text)
        except UserError as exc:
            self.count_label.setText(str(exc))
            return
        if not tags or self.project is None:
            self.count_label.setText("Type a tag as name=value (e.g. genre=gothic), then press Tick.")
            return
        ids = books_matching(self.project, tags)
        if not ids:
            self.count_label.setText(f"No book has the tag {text}. Tags are set on the Library page.")
            return
        self.set_checked(ids)

    def _on_item_changed(self, item: QTableWidgetItem) -> None:
        if not self._loading and item.column() == 0:
            self.refresh_count()

    def refresh_count(self) -> None:
        """Say how many books are ticked and tell the listeners (``changed``)."""
        self.count_label.setText(self.count_text() if self.table.rowCount() else self.NO_BOOKS)
        self.changed.emit()

    def count_text(self) -> str:
        total = self.table.rowCount()
        return f"{len(self.checked_book_ids())} of {total} book{'s' * (total != 1)} ticked"
