"""Choosing books for a REP step: those with one tag (``decade=1950s``) or those of a book set."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QButtonGroup, QComboBox, QGridLayout, QLabel, QRadioButton, QWidget

from workbench.corpus.book_sets import book_set_names, book_set_size
from workbench.corpus.library import books_with_tag, parse_tags, tag_keys, tag_values
from workbench.errors import UserError
from workbench.probes.rep.decades import DECADE_TAG
from workbench.probes.rep.views import EntitiesChoices

if TYPE_CHECKING:
    from workbench.project import Project


def tag_choices(project: "Project") -> list[str]:
    """Every ``key=value`` tag of the project's books, decade tags first."""
    keys = sorted(tag_keys(project), key=lambda k: (k != DECADE_TAG, k))
    return [f"{key}={value}" if value else key for key in keys for value in tag_values(project, key)]


class BookChoice(QWidget):
    """Two exclusive choices: books tagged ``key=value`` (typed or picked), or a book set. ``changed`` says
    that ``choice()`` may now be another."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.project: "Project | None" = None
        self.by_tag = QRadioButton("Books tagged")
        self.by_tag.setChecked(True)
        self.by_set = QRadioButton("Book set")
        group = QButtonGroup(self)
        group.addButton(self.by_tag)
        group.addButton(self.by_set)
        self.tag = QComboBox()
        self.tag.setObjectName("rep-books-tag")
        self.tag.setEditable(True)
        self.tag.setToolTip("A tag of the books, written key=value (for example decade=1950s). "
                            "Tag books on the Library page.")
        self.tag.lineEdit().setPlaceholderText("decade=1950s")
        self.book_set = QComboBox()
        self.book_set.setObjectName("rep-books-set")
        self.count = QLabel("")
        self.count.setObjectName("rep-books-count")
        self.tag.currentTextChanged.connect(self._update)
        self.book_set.currentTextChanged.connect(self._update)
        self.by_tag.toggled.connect(self._update)
        layout = QGridLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.by_tag, 0, 0)
        layout.addWidget(self.tag, 0, 1)
        layout.addWidget(self.by_set, 1, 0)
        layout.addWidget(self.book_set, 1, 1)
        layout.addWidget(self.count, 2, 1)
        layout.setColumnStretch(1, 1)

    def refresh(self, project: "Project | None") -> None:
        self.project = project
        tag, book_set = self.tag.currentText(), self.book_set.currentText()
        for combo in (self.tag, self.book_set):
            combo.blockSignals(True)
            combo.clear()
        if project is not None:
            self.tag.addItems(tag_choices(project))
            self.book_set.addItems(book_set_names(project))
        if tag:
            self.tag.setCurrentText(tag)
        if book_set and self.book_set.findText(book_set) >= 0:
            self.book_set.setCurrentText(book_set)
        self.by_set.setEnabled(self.book_set.count() > 0)
        if not self.by_set.isEnabled():
            self.by_tag.setChecked(True)
        for combo in (self.tag, self.book_set):
            combo.blockSignals(False)
        self._update()

    def choice(self) -> tuple[str | None, str | None]:
        """(tag, book set) as ``select_books`` takes them; one of the two is None."""
        if self.by_set.isChecked():
            return None, self.book_set.currentText() or None
        return self.tag.currentText().strip() or None, None

    def set_choice(self, tag: str | None = None, book_set: str | None = None) -> None:
        if book_set:
            self.by_set.setChecked(True)
            self.book_set.setCurrentText(book_set)
        else:
            self.by_tag.setChecked(True)
            self.tag.setCurrentText(tag or "")

    def describe(self) -> str:
        tag, book_set = self.choice()
        return EntitiesChoices(tag=tag, book_set=book_set).describe_books()

    def _update(self, *_args) -> None:
        self.tag.setEnabled(self.by_tag.isChecked())
        self.book_set.setEnabled(self.by_set.isChecked())
        self.count.setText(self._count_text())
        self.changed.emit()

    def _count_text(self) -> str:
        tag, book_set = self.choice()
        if self.project is None or not (tag or book_set):
            return ""
        if book_set:
            n = book_set_size(self.project, book_set)
        else:
            try:
                tags = parse_tags(tag)
            except UserError:
                return "Write the tag as key=value."
            if len(tags) != 1:
                return "Give one tag, written key=value."
            (key, value), = tags.items()
            n = len(books_with_tag(self.project, key, value))
        return "No book matches yet." if n == 0 else f"{n} book{'s' if n != 1 else ''}"
