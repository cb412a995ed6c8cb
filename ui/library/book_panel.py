"""The book view beside the library table: details, text statistics and the beginning of the text."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QFormLayout, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from workbench.corpus.library import RESULTS_ONLY, RESULTS_ONLY_HINT, Book, format_tags
from workbench.corpus.stats import TextStats

PREVIEW_CHARS = 6000
TEXT_COUNTS = ("Sentences", "Chapters detected", "Paragraphs")  # counted from the text, when there is one
EMPTY_HINT = "Select a book to see its statistics and the beginning of its text."


class BookPanel(QWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.book_id: int | None = None
        self.title = QLabel(EMPTY_HINT)
        self.title.setWordWrap(True)
        self.byline = QLabel("")
        self.byline.setWordWrap(True)

        self.values: dict[str, QLabel] = {}
        form = QFormLayout()
        form.setContentsMargins(0, 6, 0, 6)
        for name in ("Words", *TEXT_COUNTS, "Source", "Gutenberg number", "Tags"):
            value = QLabel("")
            value.setWordWrap(True)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.values[name] = value
            form.addRow(name + ":", value)
        self.chapters_hint = ("Chapter headings found in the text (CHAPTER I, Letter 4, IV. …). "
                              "A contents page is not counted.")
        form.labelForField(self.values["Chapters detected"]).setToolTip(self.chapters_hint)

        self.preview_label = QLabel("Beginning of the text")
        self.preview = QPlainTextEdit()
        self.preview.setReadOnly(True)
        self.preview.setPlaceholderText("")

        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.byline)
        layout.addLayout(form)
        layout.addWidget(self.preview_label)
        layout.addWidget(self.preview, 1)
        self._details = [self.byline, self.preview_label, self.preview]
        self._form = form
        self.clear()

    def _set_heading(self, book: Book) -> None:
        font = QFont(self.font())  # from the panel's own font: the heading is set again for every book shown
        font.setPointSizeF(font.pointSizeF() * 1.3)
        font.setBold(True)
        self.title.setFont(font)
        self.title.setText(book.display_name)
        byline = book.author or "Unknown author"
        if book.year is not None:
            byline += f" · {book.year}"
        self.byline.setText(byline)

    def _set_form_visible(self, visible: bool) -> None:
        for row in range(self._form.rowCount()):
            self._form.setRowVisible(row, visible)
        for widget in self._details:
            widget.setVisible(visible)

    def clear(self) -> None:
        self.book_id = None
        self.title.setFont(QFont(self.font()))
        self.title.setText(EMPTY_HINT)
        self._set_form_visible(False)

    def show_loading(self, book: Book) -> None:
        self.book_id = book.id
        self._set_heading(book)
        self._set_form_visible(True)
        for name in ("Sentences", "Chapters detected", "Paragraphs"):
            self.values[name].setText("counting…")
        self._fill_details(book)
        self.preview.setPlainText("")

    def _fill_details(self, book: Book) -> None:
        self.values["Words"].setText(f"{book.words:,}" if book.has_text else RESULTS_ONLY)
        self.values["Source"].setText(book.source_name or "")
        self._form.labelForField(self.values["Gutenberg number"]).setText(book.id_label + ":")
        self.values["Gutenberg number"].setText(book.external_id or "—")
        self.values["Tags"].setText(format_tags(book.tags) or "—")
        for name in TEXT_COUNTS:
            self._form.setRowVisible(self.values[name], book.has_text)
        self.preview_label.setText("Beginning of the text" if book.has_text else "No text")

    def show_results_only(self, book: Book) -> None:
        """A book known only from imported results: its details, and what to do to have its text."""
        self.book_id = book.id
        self._set_heading(book)
        self._set_form_visible(True)
        self._fill_details(book)
        self.preview.setPlainText(RESULTS_ONLY_HINT)

    def show_book(self, book: Book, stats: TextStats, preview: str) -> None:
        self.book_id = book.id
        self._set_heading(book)
        self._set_form_visible(True)
        self._fill_details(book)
        self.values["Words"].setText(f"{stats.words:,}")
        self.values["Sentences"].setText(f"{stats.sentences:,}")
        self.values["Chapters detected"].setText(f"{stats.chapters:,}")
        self.values["Chapters detected"].setToolTip("\n".join(stats.chapter_headings[:40]) or self.chapters_hint)
        self.values["Paragraphs"].setText(f"{stats.paragraphs:,}")
        self.preview.setPlainText(preview)
