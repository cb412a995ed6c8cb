"""Asking for Project Gutenberg book numbers (and, if wanted, a mirror to download from)."""

from __future__ import annotations

import re

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from workbench.corpus.download import DEFAULT_MIRROR, mirror_base, parse_gutenberg_id


def parse_numbers(text: str) -> list[int]:
    """'1342, 84 pg11' -> [1342, 84, 11]; a word that is not a number raises UserError."""
    return [parse_gutenberg_id(part) for part in re.split(r"[\s,;]+", text.strip()) if part]


class GutenbergDialog(QDialog):
    def __init__(self, mirror: str = "", parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Import from Project Gutenberg")
        self.numbers = QLineEdit()
        self.numbers.setPlaceholderText("e.g. 1342, 84, 11")
        self.mirror = QLineEdit(mirror)
        self.mirror.setPlaceholderText(mirror_base(None))
        explanation = QLabel(
            "The number is in the address of the book's page: gutenberg.org/ebooks/<b>1342</b> is Pride and Prejudice. "
            f"Leave the mirror empty to download from {DEFAULT_MIRROR}."
        )
        explanation.setWordWrap(True)
        form = QFormLayout()
        form.addRow("Book numbers:", self.numbers)
        form.addRow("Mirror (optional):", self.mirror)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Import")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(explanation)
        layout.addLayout(form)
        layout.addWidget(buttons)
        self.resize(460, self.sizeHint().height())
