"""What the last piece of work came to: a framed box of plain text with a Dismiss button.

Short text takes only the lines it needs; a long report (an import that lists every file it could not
read) scrolls inside the box instead of pushing the page's tables off the window.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QScrollArea, QSizePolicy, QWidget

MOST_LINES = 8  # taller text scrolls


class SummaryBox(QFrame):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        # never taller than its text: a page's spare height goes to its tables, not to empty lines in here
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self.label = QLabel("")
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.scroll = QScrollArea()
        self.scroll.setWidget(self.label)
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.dismiss_button = QPushButton("Dismiss")
        self.dismiss_button.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.addWidget(self.scroll, 1)
        layout.addWidget(self.dismiss_button, 0, Qt.AlignmentFlag.AlignTop)
        self.hide()

    def show_text(self, text: str) -> None:
        self.label.setText(text)
        self.show()
        self._fit()

    def text(self) -> str:
        return self.label.text()

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        """As tall as the text at the width it has, up to ``MOST_LINES`` lines."""
        width = self.scroll.viewport().width() or self.label.sizeHint().width()
        most = self.label.fontMetrics().lineSpacing() * MOST_LINES
        needed = self.label.heightForWidth(width)  # -1 while the label has no text or no width yet
        if needed < 0:
            needed = self.label.sizeHint().height()
        self.scroll.setFixedHeight(min(needed, most))
