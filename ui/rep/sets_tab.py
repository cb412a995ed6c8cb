"""The Sets tab: view, edit, import and export REP and EEP sets; the lexical word lists shown as a table."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QTextCursor
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from ui import wording
from ui.widgets.cells_table import fill_table
from ui.widgets.page import ProjectView
from workbench.errors import UserError
from workbench.probes.rep.sets import (
    current_sets,
    export_set_file,
    get_set,
    import_set_file,
    reset_to_shipped,
    save_set,
    shipped_sets,
)
from workbench.probes.rep.views import SetChoices, set_roles_table, set_words_table

if TYPE_CHECKING:
    import pandas as pd

SET_FILES = "REP set files (*.toml);;All files (*)"
ORIGINS = {"shipped": "shipped with Palimpsest", "user": "edited in this project", "imported": "imported from a file"}


def fill_wrapped(table: QTableWidget, frame: pd.DataFrame) -> None:
    """A table whose last (long text) column takes the remaining width and wraps."""
    fill_table(table, frame)
    table.setWordWrap(True)  # fill_table writes one line per row
    if frame.shape[1]:
        table.horizontalHeader().setStretchLastSection(False)  # it would keep the column's width; Stretch fits it
        table.horizontalHeader().setSectionResizeMode(frame.shape[1] - 1, QHeaderView.ResizeMode.Stretch)
    table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)  # at any width


class SetsTab(ProjectView):
    sets_changed = Signal()  # a set was saved or imported: the runs and entity prompts offer it

    def __init__(self, ops, parent: QWidget | None = None):
        super().__init__(ops, parent)
        self.sets = QListWidget()
        self.sets.setObjectName("rep-sets")
        self.sets.setMinimumWidth(170)
        self.sets.setMaximumWidth(240)
        self.choices = SetChoices()  # the set shown
        self.sets.currentItemChanged.connect(self._set_chosen)
        self.editor = QPlainTextEdit()
        self.editor.setObjectName("rep-set-editor")
        self.editor.setFont(QFont("monospace"))
        self.editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.status = QLabel("")
        self.status.setObjectName("rep-set-status")
        self.status.setWordWrap(True)
        self.save_button = QPushButton("Save as new version")
        self.save_button.clicked.connect(self.save)
        self.revert_button = QPushButton("Revert")
        self.revert_button.clicked.connect(self._show_current)
        self.reset_button = QPushButton("Restore shipped text")
        self.reset_button.clicked.connect(self.reset)
        self.import_button = QPushButton("Import…")
        self.import_button.clicked.connect(self.import_dialog)
        self.export_button = QPushButton("Export…")
        self.export_button.clicked.connect(self.export_dialog)
        self.roles = QTableWidget()
        self.roles.setObjectName("rep-roles")
        self.words = QTableWidget()
        self.words.setObjectName("rep-lexical-rules")
        for table in (self.roles, self.words):
            table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
            table.setWordWrap(True)

        buttons = QHBoxLayout()
        for button in (self.save_button, self.revert_button, self.reset_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        self.import_button.setToolTip("Add a set file (TOML) as a new set, or as a new version of a set")
        self.export_button.setToolTip("Write the chosen set's file, to edit it elsewhere or share it")
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.sets, 1)
        file_buttons = QHBoxLayout()
        file_buttons.addWidget(self.import_button)
        file_buttons.addWidget(self.export_button)
        left_layout.addLayout(file_buttons)
        middle = QWidget()
        middle_layout = QVBoxLayout(middle)
        middle_layout.setContentsMargins(0, 0, 0, 0)
        middle_layout.addWidget(self.editor, 1)
        middle_layout.addWidget(self.status)
        middle_layout.addLayout(buttons)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(QLabel("Roles and their stems"))
        right_layout.addWidget(self.roles, 1)
        rules_note = QLabel("Word lists (the lexical baseline): within the first words of a completion, the "
                            "listed word that comes first decides the label; no listed word means unclear/none.")
        rules_note.setWordWrap(True)
        right_layout.addWidget(rules_note)
        right_layout.addWidget(self.words, 1)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(left)
        splitter.addWidget(middle)
        splitter.addWidget(right)
        splitter.setSizes([190, 600, 460])
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)

    # ------------------------------------------------------------------ loading
    def refresh(self, select: str | None = None) -> None:
        project = self.project
        current = select or self.choices.name
        self.sets.clear()
        self.editor.clear()
        if project is None:
            return
        for stored in current_sets(project, "rep") + current_sets(project, "eep"):
            item = QListWidgetItem(f"{stored.parsed.title} (v{stored.version})")
            item.setToolTip(f"Version {stored.version}, {ORIGINS.get(stored.origin, stored.origin)}, saved "
                            f"{wording.when(stored.created_at)}")
            item.setData(Qt.ItemDataRole.UserRole, stored.name)
            self.sets.addItem(item)
            if stored.name == current:
                self.sets.setCurrentItem(item)
        if self.sets.currentItem() is None and self.sets.count():
            self.sets.setCurrentRow(0)

    def current_name(self) -> str | None:
        return self.choices.name

    def _set_chosen(self, item: QListWidgetItem | None, _previous=None) -> None:
        self.choices = replace(self.choices, name=item.data(Qt.ItemDataRole.UserRole) if item else None)
        self._show_current()

    def _show_current(self, *_args) -> None:
        name, project = self.choices.name, self.project
        if name is None or project is None:
            return
        stored = get_set(project, name)
        self.editor.setPlainText(stored.parsed.body)
        origin = ORIGINS.get(stored.origin, stored.origin)
        self.status.setText(f"Version {stored.version}, {origin}, saved {wording.when(stored.created_at)} "
                            f"(fingerprint {stored.hash[:12]}). Editing saves a new version; runs that used this "
                            "one keep it.")
        self.status.setStyleSheet("")
        fill_wrapped(self.roles, set_roles_table(project, self.choices))
        fill_wrapped(self.words, set_words_table(project, self.choices))
        self.reset_button.setEnabled(any(s.name == name for s in shipped_sets()))

    # ------------------------------------------------------------------ actions
    def save(self) -> None:
        project = self.project
        if project is None:
            return
        try:
            stored = save_set(project, self.editor.toPlainText(), source="the edited text")
        except UserError as exc:
            self._show_problem(str(exc))
            return
        self.refresh(select=stored.name)
        self.sets_changed.emit()
        self.status.setText(f"Saved as version {stored.version}. New runs use it; earlier runs keep theirs.")

    def _show_problem(self, message: str) -> None:
        self.status.setText(message)
        self.status.setStyleSheet("color: #b00020;")
        match = re.search(r"line (\d+)", message)
        if match:  # put the cursor on the line the message names
            block = self.editor.document().findBlockByLineNumber(int(match.group(1)) - 1)
            cursor = QTextCursor(block)
            cursor.select(QTextCursor.SelectionType.LineUnderCursor)
            self.editor.setTextCursor(cursor)
            self.editor.centerCursor()

    def reset(self) -> None:
        name, project = self.current_name(), self.project
        if name and project is not None:
            self.refresh(select=reset_to_shipped(project, name).name)

    def import_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import a REP set", "", SET_FILES)
        if path:
            self.import_file(path)

    def import_file(self, path: str) -> None:
        project = self.project
        if project is None:
            return
        try:
            stored = import_set_file(project, path)
        except UserError as exc:
            self._show_problem(str(exc))
            return
        self.refresh(select=stored.name)
        self.sets_changed.emit()

    def export_dialog(self) -> None:
        name, project = self.current_name(), self.project
        if name is None or project is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Export the set", f"{name}.toml", SET_FILES)
        if path:
            export_set_file(project, name, path)
